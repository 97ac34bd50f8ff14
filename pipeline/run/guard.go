package run

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"

	_ "modernc.org/sqlite" // database/sql driver "sqlite"

	"remessa/internal/migrate"
	"remessa/pipeline/journal"
	"remessa/pipeline/results"
	"remessa/reports"
)

// IndexFile is the runs index in the runs folder: a SQLite database with
// one row per run (the SHA-256 of its job and input, its service, a hash of
// its ordered row identities) and one per accepted row (a 64-bit hash of
// its "key|due date"), so the duplicate-run and repeated-row checks are
// indexed look-ups however many runs the folder holds.
const IndexFile = "runs.db"

// LegacyIndexFile is the runs index before runs.db: one JSON line per run.
// A runs folder that has one is imported into runs.db once, and the file is
// renamed to runs.jsonl.importado.
const LegacyIndexFile = "runs.jsonl"

// Entry is one run in the index.
type Entry struct {
	RunID       string   `json:"run_id"`
	Dir         string   `json:"dir"`
	JobName     string   `json:"job_name,omitempty"`
	JobSHA256   string   `json:"job_sha256"`
	InputSHA256 string   `json:"input_sha256"`
	Service     string   `json:"service"`
	StartedAt   string   `json:"started_at"`
	Keys        []string `json:"keys"` // "key|due date" of each accepted row (Append only)
	// CNABAccount and CNABNSA identify a CNAB remessa input: the account
	// its header names (cnab.Header.Account) and its sequence number.
	CNABAccount string `json:"cnab_account,omitempty"`
	CNABNSA     int64  `json:"cnab_nsa,omitempty"`
	// Complete is read from the run's results.json: false while rows are
	// pending (the run stopped) or before it wrote its results.
	Complete bool `json:"-"`
}

// Index is the runs index of a runs folder; Path is its runs.db. Each call
// opens the database and closes it again, so a `remessa run` and a
// `remessa web` can share a folder: writes are transactions (WAL,
// synchronous FULL, waiting up to 10 s for the other process's lock).
type Index struct{ Path string }

// IndexSchema is runs.db's tables, step by step (internal/migrate); step
// 1 is what the binary of 8e335f2 made, frozen.
var IndexSchema = migrate.Schema{Name: IndexFile, Table: "runs_schema_version", Dialect: migrate.SQLite, Steps: []migrate.Step{
	{Name: "execuções, chaves das linhas, negadas (8e335f2)", SQL: indexSchemaV1},
	{Name: "remessas CNAB (conta e NSA), chaves emitidas por execução", Tx: indexSchemaV2},
}}

const indexSchemaV1 = `
CREATE TABLE IF NOT EXISTS runs (
	id            INTEGER PRIMARY KEY, -- the order runs were added in
	run_id        TEXT NOT NULL UNIQUE,
	dir           TEXT NOT NULL,
	job_name      TEXT NOT NULL DEFAULT '',
	job_sha256    TEXT NOT NULL,
	input_sha256  TEXT NOT NULL,
	service       TEXT NOT NULL,
	started_at    TEXT NOT NULL,
	keys_sha256   TEXT NOT NULL,       -- SHA-256 of the ordered row identities
	rows          INTEGER NOT NULL,
	complete      INTEGER NOT NULL DEFAULT 0,
	results_stamp TEXT NOT NULL DEFAULT '' -- size and time of the results.json complete and denied were read from
);
CREATE INDEX IF NOT EXISTS runs_same ON runs (job_sha256, input_sha256, service, keys_sha256);
-- one row per accepted row of a run: key_hash is keyHash("key|due date")
CREATE TABLE IF NOT EXISTS row_keys (
	key_hash INTEGER NOT NULL,
	run      INTEGER NOT NULL,
	ord      INTEGER NOT NULL,
	PRIMARY KEY (key_hash, run, ord)
) WITHOUT ROWID;
-- rows the service denied in a run (from its results.json): sending them
-- again is not a repetition
CREATE TABLE IF NOT EXISTS denied (
	run      INTEGER NOT NULL,
	key_hash INTEGER NOT NULL,
	PRIMARY KEY (run, key_hash)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
`

// keyHash is the 64-bit FNV-1a hash of a row identity ("key|due date").
func keyHash(identity string) int64 {
	h := fnv.New64a()
	h.Write([]byte(identity))
	return int64(h.Sum64())
}

// exists says whether the folder has an index (or one to import).
func (x *Index) exists() bool {
	for _, p := range []string{x.Path, x.legacyPath()} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

func (x *Index) legacyPath() string { return filepath.Join(filepath.Dir(x.Path), LegacyIndexFile) }

// open opens (creating when create is set) the database and imports
// runs.jsonl once; nil, nil when there is no index and create is unset.
func (x *Index) open(ctx context.Context, create bool) (*sql.DB, error) {
	if !create && !x.exists() {
		return nil, nil
	}
	if err := os.MkdirAll(filepath.Dir(x.Path), 0o755); err != nil {
		return nil, fmt.Errorf("índice de execuções: %w", err)
	}
	// busy_timeout first: switching a new file to WAL waits for the lock too
	dsn := "file:" + x.Path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("índice de execuções: %w", err)
	}
	db.SetMaxOpenConns(1)
	s := IndexSchema
	s.Name = x.Path
	if err := migrate.Up(ctx, db, &s); err != nil {
		db.Close()
		return nil, fmt.Errorf("índice de execuções: %w", err)
	}
	if _, err := os.Stat(x.legacyPath()); err == nil {
		if err := x.importLegacy(ctx, db); err != nil {
			db.Close()
			return nil, err
		}
	}
	return db, nil
}

// importLegacy copies runs.jsonl into the database (once: the meta row
// "imported" says it was done, whichever process did it) and renames it.
func (x *Index) importLegacy(ctx context.Context, db *sql.DB) error {
	err := inTx(ctx, db, func(tx *sql.Tx) error {
		var done string
		if tx.QueryRowContext(ctx, `SELECT v FROM meta WHERE k = 'imported'`).Scan(&done) == nil {
			return nil
		}
		f, err := os.Open(x.legacyPath())
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<30)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" {
				continue
			}
			var e Entry
			if json.Unmarshal([]byte(line), &e) != nil || e.RunID == "" {
				continue // a line cut by a crash
			}
			if err := appendTx(ctx, tx, e, nil); err != nil {
				return err
			}
		}
		if err := sc.Err(); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO meta (k, v) VALUES ('imported', ?)`, LegacyIndexFile)
		return err
	})
	if err != nil {
		return fmt.Errorf("índice de execuções: importar %s: %w", x.legacyPath(), err)
	}
	if err := os.Rename(x.legacyPath(), x.legacyPath()+".importado"); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("índice de execuções: %w", err)
	}
	return nil
}

func inTx(ctx context.Context, db *sql.DB, f func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Append adds a run (in one transaction, synced; a run with the same id is
// replaced).
func (x *Index) Append(e Entry) error { return x.appendIDs(e, nil) }

// appendIDs is Append with the rows' identities as ids (nil: e.Keys).
func (x *Index) appendIDs(e Entry, ids *rowIDs) error {
	ctx := context.Background()
	db, err := x.open(ctx, true)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := inTx(ctx, db, func(tx *sql.Tx) error { return appendTx(ctx, tx, e, ids) }); err != nil {
		return fmt.Errorf("índice de execuções: %w", err)
	}
	return nil
}

// insertChunk is the rows of one multi-row INSERT (3 parameters a row).
const insertChunk = 500

func appendTx(ctx context.Context, tx *sql.Tx, e Entry, ids *rowIDs) error {
	if ids == nil {
		ids = idsOf(e.Keys, false)
	}
	var old int64
	if tx.QueryRowContext(ctx, `SELECT id FROM runs WHERE run_id = ?`, e.RunID).Scan(&old) == nil {
		for _, q := range []string{`DELETE FROM row_keys WHERE run = ?`, `DELETE FROM denied WHERE run = ?`, `DELETE FROM issued_keys WHERE run = ?`, `DELETE FROM runs WHERE id = ?`} {
			if _, err := tx.ExecContext(ctx, q, old); err != nil {
				return err
			}
		}
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO runs (run_id, dir, job_name, job_sha256, input_sha256, service, started_at, keys_sha256, rows, cnab_account, cnab_nsa)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, e.RunID, e.Dir, e.JobName, e.JobSHA256, e.InputSHA256, e.Service, e.StartedAt, ids.sum(), ids.len(), e.CNABAccount, e.CNABNSA)
	if err != nil {
		return err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return err
	}
	// sorted by hash, the rows go into the table's B-tree in order
	rows := ids.byHash()
	var full *sql.Stmt
	args := make([]any, 0, 3*insertChunk)
	for len(rows) > 0 {
		n := min(len(rows), insertChunk)
		args = args[:0]
		for _, r := range rows[:n] {
			args = append(args, r.h, id, r.ord)
		}
		q := `INSERT INTO row_keys (key_hash, run, ord) VALUES (?, ?, ?)` + strings.Repeat(`, (?, ?, ?)`, n-1)
		if n == insertChunk {
			if full == nil {
				if full, err = tx.PrepareContext(ctx, q); err != nil {
					return err
				}
				defer full.Close()
			}
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = tx.ExecContext(ctx, q, args...)
		}
		if err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// indexedRun is a run of the index as the checks use it.
type indexedRun struct {
	id      int64
	entry   Entry
	stamp   string
	denied  map[int64]bool
	checked bool // complete and denied are up to date with results.json
}

// live says whether the run's folder still exists (a removed run folder is
// forgotten).
func (r *indexedRun) live() bool {
	_, err := os.Stat(filepath.Join(r.entry.Dir, journal.FileName))
	return err == nil
}

func scanRuns(ctx context.Context, db *sql.DB, where string, args ...any) ([]*indexedRun, error) {
	rs, err := db.QueryContext(ctx, `SELECT id, run_id, dir, job_name, job_sha256, input_sha256, service, started_at, complete, results_stamp
		FROM runs `+where+` ORDER BY id`, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []*indexedRun
	for rs.Next() {
		r := &indexedRun{}
		e := &r.entry
		if err := rs.Scan(&r.id, &e.RunID, &e.Dir, &e.JobName, &e.JobSHA256, &e.InputSHA256, &e.Service, &e.StartedAt, &e.Complete, &r.stamp); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rs.Err()
}

// resultsStamp identifies the version of a results.json ("" when absent).
func resultsStamp(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d@%d", fi.Size(), fi.ModTime().UnixNano())
}

// refresh brings the run's complete flag and denied rows up to date with
// its results.json: read again only when the file changed since (a run
// records them itself when it writes its results; see noteResults).
func (r *indexedRun) refresh(ctx context.Context, db *sql.DB) error {
	if r.checked {
		return nil
	}
	path := filepath.Join(r.entry.Dir, reports.FileJSON)
	if st := resultsStamp(path); st != r.stamp {
		complete, denied := false, []int64(nil)
		if st != "" {
			complete, denied = readResults(path)
		}
		if err := storeResults(ctx, db, r.id, complete, denied, st); err != nil {
			return err
		}
		r.stamp = st
		r.entry.Complete = complete
	}
	r.denied = map[int64]bool{}
	rs, err := db.QueryContext(ctx, `SELECT key_hash FROM denied WHERE run = ?`, r.id)
	if err != nil {
		return err
	}
	defer rs.Close()
	for rs.Next() {
		var h int64
		if err := rs.Scan(&h); err != nil {
			return err
		}
		r.denied[h] = true
	}
	r.checked = true
	return rs.Err()
}

// readResults reads a run's results.json one row at a time: whether the
// run is complete and the identities (keyHash) of its denied rows. An
// unreadable file is not complete and denies nothing.
func readResults(path string) (complete bool, denied []int64) {
	var run results.RunInfo
	_, err := reports.EachRow(path, func(h *results.Results) error { run = h.Run; return nil }, func(row *results.Row) error {
		if row.Outcome == results.Denied {
			denied = append(denied, keyHash(row.Key+"|"+row.DueDate))
		}
		return nil
	})
	if err != nil {
		return false, nil
	}
	return run.Complete, denied
}

// storeResults records a run's complete flag and denied rows (their
// keyHash) with the stamp of the results.json they came from.
func storeResults(ctx context.Context, db *sql.DB, id int64, complete bool, denied []int64, stamp string) error {
	return inTx(ctx, db, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM denied WHERE run = ?`, id); err != nil {
			return err
		}
		for _, h := range denied {
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO denied (run, key_hash) VALUES (?, ?)`, id, h); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `UPDATE runs SET complete = ?, results_stamp = ? WHERE id = ?`, complete, stamp, id)
		return err
	})
}

// noteResults records in the runs index of dir's parent folder (when it
// has one) what the run in dir wrote to its results.json, so the next
// check need not read the file. Errors are ignored: the checks read the
// file themselves when the index is not up to date.
func noteResults(dir string, complete bool, denied []int64) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return
	}
	x := &Index{Path: filepath.Join(filepath.Dir(dir), IndexFile)}
	if _, err := os.Stat(x.Path); err != nil {
		return
	}
	ctx := context.Background()
	db, err := x.open(ctx, false)
	if err != nil || db == nil {
		return
	}
	defer db.Close()
	var id int64
	if db.QueryRowContext(ctx, `SELECT id FROM runs WHERE dir = ? ORDER BY id DESC LIMIT 1`, dir).Scan(&id) != nil {
		return
	}
	_ = storeResults(ctx, db, id, complete, denied, resultsStamp(filepath.Join(dir, reports.FileJSON)))
}

// earlierQuery is a job about to run (or be planned) in a runs folder.
type earlierQuery struct {
	JobSHA256, InputSHA256, Service string
	Keys                            []string // rowIdentity of each accepted row, in order; or
	IDs                             *rowIDs  // their hashes, with
	// Names gives the identities of the rows at the positions asked for
	// (the examples of a warning); nil with Keys
	Names func(ords map[int]bool) (map[int]string, error)
	// Again skips the same-run check (--again): only repeated rows are
	// looked for.
	Again bool
}

// earlier looks the job up in the index: the earliest run of the same job
// on the same input and service with the same rows (then nothing else is
// looked for), or else a warning about rows (same key and due date) that
// earlier runs on the same service already sent ("" when none).
func (x *Index) earlier(ctx context.Context, q earlierQuery) (*Entry, string, error) {
	db, err := x.open(ctx, false)
	if err != nil || db == nil {
		return nil, "", err
	}
	defer db.Close()
	ids := q.IDs
	if ids == nil {
		ids = idsOf(q.Keys, true)
	}
	if !q.Again {
		same, err := scanRuns(ctx, db, `WHERE job_sha256 = ? AND input_sha256 = ? AND service = ? AND keys_sha256 = ?`,
			q.JobSHA256, q.InputSHA256, q.Service, ids.sum())
		if err != nil {
			return nil, "", fmt.Errorf("índice de execuções: %w", err)
		}
		for _, r := range same {
			if r.live() {
				if err := r.refresh(ctx, db); err != nil {
					return nil, "", fmt.Errorf("índice de execuções: %w", err)
				}
				return &r.entry, "", nil
			}
		}
	}
	found, err := overlaps(ctx, db, ids, q.Service)
	if err != nil {
		return nil, "", fmt.Errorf("índice de execuções: %w", err)
	}
	if found == nil {
		return nil, "", nil
	}
	names := ids.names
	if names == nil && q.Names != nil {
		wanted := map[int]bool{}
		for _, p := range found.parts {
			for _, o := range p.ex {
				wanted[o] = true
			}
		}
		if names, err = q.Names(wanted); err != nil {
			return nil, "", err
		}
	}
	return nil, found.text(names), nil
}

// lookupChunk is the hashes of one IN (…) look-up.
const lookupChunk = 500

// overlapFound is what overlaps found: per earlier run, how many rows
// repeat and the positions (among the new job's rows) of up to three.
type overlapFound struct {
	parts []overlapRun
	total int
}

type overlapRun struct {
	runID string
	n     int
	ex    []int
}

// text is the warning, naming the examples by names (their positions'
// identities).
func (f *overlapFound) text(names map[int]string) string {
	var parts []string
	for _, p := range f.parts {
		var ex []string
		for _, o := range p.ex {
			ex = append(ex, strings.Replace(names[o], "|", " vencimento ", 1))
		}
		parts = append(parts, fmt.Sprintf("%d na execução %s (ex.: %s)", p.n, p.runID, strings.Join(ex, "; ")))
	}
	return fmt.Sprintf("atenção: %d linha(s) repetem chave e vencimento de execuções anteriores: %s. Verifique se não são cobranças em duplicidade.",
		f.total, strings.Join(parts, "; "))
}

// overlaps finds rows (same key and due date) that earlier runs on the
// same service already sent; nil when none.
func overlaps(ctx context.Context, db *sql.DB, ids *rowIDs, service string) (*overlapFound, error) {
	if ids.len() == 0 {
		return nil, nil
	}
	all, err := scanRuns(ctx, db, `WHERE service = ?`, service)
	if err != nil {
		return nil, err
	}
	runs := map[int64]*indexedRun{}
	for _, r := range all {
		if r.live() {
			runs[r.id] = r
		}
	}
	if len(runs) == 0 {
		return nil, nil
	}
	// each distinct hash once, in order (the rows are sorted by hash)
	var hashes []int64
	for _, r := range ids.byHash() {
		if len(hashes) == 0 || hashes[len(hashes)-1] != r.h {
			hashes = append(hashes, r.h)
		}
	}
	type hit struct {
		h   int64
		ord int
	}
	hits := map[int64][]hit{}
	args := make([]any, 0, lookupChunk)
	var full *sql.Stmt
	for len(hashes) > 0 {
		n := min(len(hashes), lookupChunk)
		args = args[:0]
		for _, h := range hashes[:n] {
			args = append(args, h)
		}
		q := `SELECT key_hash, run, ord FROM row_keys WHERE key_hash IN (?` + strings.Repeat(`, ?`, n-1) + `)`
		var rs *sql.Rows
		if n == lookupChunk {
			if full == nil {
				if full, err = db.PrepareContext(ctx, q); err != nil {
					return nil, err
				}
				defer full.Close()
			}
			rs, err = full.QueryContext(ctx, args...)
		} else {
			rs, err = db.QueryContext(ctx, q, args...)
		}
		if err != nil {
			return nil, err
		}
		for rs.Next() {
			var h, run int64
			var ord int
			if err := rs.Scan(&h, &run, &ord); err != nil {
				rs.Close()
				return nil, err
			}
			if runs[run] != nil {
				hits[run] = append(hits[run], hit{h, ord})
			}
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return nil, err
		}
		hashes = hashes[n:]
	}
	f := &overlapFound{}
	for _, r := range all {
		hs := hits[r.id]
		if len(hs) == 0 {
			continue
		}
		if err := r.refresh(ctx, db); err != nil {
			return nil, err
		}
		slices.SortFunc(hs, func(a, b hit) int { return a.ord - b.ord })
		p := overlapRun{runID: r.entry.RunID}
		for _, h := range hs {
			if r.denied[h.h] {
				continue
			}
			p.n++
			if len(p.ex) < 3 {
				if o, ok := ids.ordOf(h.h); ok {
					p.ex = append(p.ex, o)
				}
			}
		}
		if p.n > 0 {
			f.total += p.n
			f.parts = append(f.parts, p)
		}
	}
	if f.total == 0 {
		return nil, nil
	}
	return f, nil
}
