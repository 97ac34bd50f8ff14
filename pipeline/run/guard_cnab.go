package run

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"

	"remessa/formats"
	"remessa/pipeline"
	"remessa/pipeline/results"
	"remessa/reports"
)

// indexSchemaV2 is runs.db's step 2 (issue 25): the CNAB remessa a run
// read (the account its header names and its sequence number, NSA), so a
// file with an NSA already imported for that account is refused; and the
// keys each run issued, so a remessa's movements (02 baixa, 06 vencimento…)
// find the run of each title by its key alone. issued_keys is filled from
// each run's results.json when a look-up needs it (keys_stamp says which
// version it was read from), so runs indexed before this step are found
// the same way.
func indexSchemaV2(ctx context.Context, tx *sql.Tx) error {
	// two processes may open an index at version 1 at once: the second
	// finds the columns the first added (SQLite has no ADD COLUMN IF NOT
	// EXISTS)
	for _, c := range []struct{ name, def string }{
		{"cnab_account", "TEXT NOT NULL DEFAULT ''"}, {"cnab_nsa", "INTEGER NOT NULL DEFAULT 0"}, {"keys_stamp", "TEXT NOT NULL DEFAULT ''"},
	} {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('runs') WHERE name = ?`, c.name).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			if _, err := tx.ExecContext(ctx, `ALTER TABLE runs ADD COLUMN `+c.name+` `+c.def); err != nil {
				return err
			}
		}
	}
	_, err := tx.ExecContext(ctx, `
CREATE INDEX IF NOT EXISTS runs_cnab_nsa ON runs (cnab_account, cnab_nsa);
CREATE TABLE IF NOT EXISTS issued_keys (
	key_hash INTEGER NOT NULL, -- keyHash of the row's key alone
	run      INTEGER NOT NULL,
	PRIMARY KEY (key_hash, run)
) WITHOUT ROWID;`)
	return err
}

// NSAError is a CNAB remessa whose sequence number (NSA) was already
// imported for the same account by an earlier run (exit 2; --again runs
// it anyway).
type NSAError struct {
	NSA     int64
	Account string // cnab.Header.Account
	Earlier Entry
}

func (e *NSAError) Error() string {
	return fmt.Sprintf("o arquivo tem o número sequencial (NSA) %d no header, já importado para a mesma conta (%s) na execução %s (%s).\nNada foi enviado. ERPs numeram cada remessa: um NSA repetido é em geral o arquivo de um dia já enviado. Se é mesmo um arquivo novo, use --again.",
		e.NSA, accountText(e.Account), e.Earlier.RunID, e.Earlier.Dir)
}

// accountText words an account key ("341|12345678000195|CONVENIO|1234|56789").
func accountText(a string) string {
	p := strings.Split(a, "|")
	for len(p) < 5 {
		p = append(p, "")
	}
	var out []string
	for i, name := range []string{"banco", "empresa", "convênio", "agência", "conta"} {
		if p[i] != "" {
			out = append(out, name+" "+p[i])
		}
	}
	return strings.Join(out, ", ")
}

// cnabFile is the account and NSA of a job's CNAB input (zero for a sheet,
// or a layout without an NSA).
func cnabFile(job *pipeline.Job) (account string, nsa int64) {
	if job.InputFormat == "" {
		return "", 0
	}
	r, err := formats.Open(job.InputFile, job.InputOptions())
	if err != nil {
		return "", 0 // the validation says what is wrong with it
	}
	defer r.Close()
	src := r.Source()
	return src.Account, src.NSA
}

// nsaImported finds the live run that imported a CNAB file with this
// account and NSA (nil when none, or when nsa is 0: a file that does not
// number itself is not checked).
func (x *Index) nsaImported(ctx context.Context, account string, nsa int64) (*Entry, error) {
	if nsa == 0 || account == "" {
		return nil, nil
	}
	db, err := x.open(ctx, false)
	if err != nil || db == nil {
		return nil, err
	}
	defer db.Close()
	rs, err := scanRuns(ctx, db, `WHERE cnab_account = ? AND cnab_nsa = ?`, account, nsa)
	if err != nil {
		return nil, fmt.Errorf("índice de execuções: %w", err)
	}
	for _, r := range rs {
		if x.here(r) {
			return &r.entry, nil
		}
	}
	return nil, nil
}

// here says whether the run's folder exists, finding it next to runs.db
// under its own name when the runs folder was moved or restored elsewhere
// (the index keeps absolute paths); r.entry.Dir is then the folder found.
func (x *Index) here(r *indexedRun) bool {
	if r.live() {
		return true
	}
	moved := filepath.Join(filepath.Dir(x.Path), filepath.Base(r.entry.Dir))
	if moved == r.entry.Dir {
		return false
	}
	old := r.entry.Dir
	r.entry.Dir = moved
	if r.live() {
		return true
	}
	r.entry.Dir = old
	return false
}

// RunsIssuing finds, for each key, the runs on service that issued a row
// with that key (the service created its charge: outcome issued in the
// run's results.json), oldest first; keys no run issued are absent. Runs
// whose folder was removed are left out; a folder moved with its runs
// folder is found there.
func (x *Index) RunsIssuing(ctx context.Context, service string, keys []string) (map[string][]Entry, error) {
	out := map[string][]Entry{}
	db, err := x.open(ctx, false)
	if err != nil || db == nil {
		return out, err
	}
	defer db.Close()
	runs, err := scanRuns(ctx, db, `WHERE service = ?`, service)
	if err != nil {
		return nil, fmt.Errorf("índice de execuções: %w", err)
	}
	byID := map[int64]*indexedRun{}
	for _, r := range runs {
		if !x.here(r) {
			continue
		}
		if err := r.indexKeys(ctx, db); err != nil {
			return nil, fmt.Errorf("índice de execuções: %w", err)
		}
		byID[r.id] = r
	}
	if len(byID) == 0 || len(keys) == 0 {
		return out, nil
	}
	byHash := map[int64][]string{}
	var hashes []any
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		h := keyHash(k)
		if _, ok := byHash[h]; !ok {
			hashes = append(hashes, h)
		}
		byHash[h] = append(byHash[h], k)
	}
	for len(hashes) > 0 {
		n := min(len(hashes), lookupChunk)
		q := `SELECT key_hash, run FROM issued_keys WHERE key_hash IN (?` + strings.Repeat(`, ?`, n-1) + `) ORDER BY run`
		rows, err := db.QueryContext(ctx, q, hashes[:n]...)
		if err != nil {
			return nil, fmt.Errorf("índice de execuções: %w", err)
		}
		for rows.Next() {
			var h, id int64
			if err := rows.Scan(&h, &id); err != nil {
				rows.Close()
				return nil, err
			}
			if r := byID[id]; r != nil {
				for _, k := range byHash[h] {
					out[k] = append(out[k], r.entry)
				}
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		hashes = hashes[n:]
	}
	return out, nil
}

// indexKeys brings the run's issued_keys up to date with its results.json
// (read again only when the file changed since).
func (r *indexedRun) indexKeys(ctx context.Context, db *sql.DB) error {
	path := filepath.Join(r.entry.Dir, reports.FileJSON)
	st := resultsStamp(path)
	var have string
	if err := db.QueryRowContext(ctx, `SELECT keys_stamp FROM runs WHERE id = ?`, r.id).Scan(&have); err != nil {
		return err
	}
	if st == have {
		return nil
	}
	var hashes []int64
	if st != "" {
		_, err := reports.EachRow(path, nil, func(row *results.Row) error {
			if row.Outcome == results.Issued && row.Key != "" {
				hashes = append(hashes, keyHash(row.Key))
			}
			return nil
		})
		if err != nil {
			hashes = nil // unreadable: nothing issued, read again next time
			st = ""
		}
	}
	return inTx(ctx, db, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM issued_keys WHERE run = ?`, r.id); err != nil {
			return err
		}
		for _, h := range hashes {
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO issued_keys (key_hash, run) VALUES (?, ?)`, h, r.id); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `UPDATE runs SET keys_stamp = ? WHERE id = ?`, st, r.id)
		return err
	})
}
