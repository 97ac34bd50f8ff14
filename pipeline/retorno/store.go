package retorno

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"remessa/internal/migrate"
	"remessa/internal/sqlitedb"
)

// FileName is the retornos' record in a runs folder: every retorno written
// for the folder's runs (its account, NSA, layout and file) and every
// event each one reported, so an event goes into exactly one retorno and
// the NSAs of an account follow each other without gaps.
const FileName = "retornos.db"

// Schema is retornos.db's tables, step by step (internal/migrate; docs/
// operations.md "Upgrades"); a new table or column is a new step.
var Schema = migrate.Schema{Name: FileName, Table: "retornos_schema_version", Dialect: migrate.SQLite, Steps: []migrate.Step{
	{Name: "retornos e eventos informados", SQL: strings.Join(schemaV1, ";\n")},
	{Name: "eventos só com a chave; as ocorrências de cada retorno em partes", SQL: strings.Join(schemaV2, ";\n")},
}}

// schemaV1 is step 1 of retornos.db.
//
// retornos: one row per file, keyed by account and NSA (the NSA is the
// account's: max + 1 in the same transaction that records the events).
// eventos (replaced by partes in step 2): one row per reported event of a
// run, keyed by run and event key, with the entry as it was written.
var schemaV1 = []string{
	`CREATE TABLE IF NOT EXISTS retornos (
		account TEXT NOT NULL,
		nsa INTEGER NOT NULL,
		run_id TEXT NOT NULL,
		layout TEXT NOT NULL,
		created_at TEXT NOT NULL,
		path TEXT NOT NULL,
		events INTEGER NOT NULL,
		titles INTEGER NOT NULL,
		cents INTEGER NOT NULL,
		bank TEXT NOT NULL,
		echo TEXT NOT NULL,
		PRIMARY KEY (account, nsa)
	)`,
	`CREATE INDEX IF NOT EXISTS retornos_run ON retornos(run_id, nsa)`,
	`CREATE TABLE IF NOT EXISTS eventos (
		run_id TEXT NOT NULL,
		key TEXT NOT NULL,
		account TEXT NOT NULL,
		nsa INTEGER NOT NULL,
		ord INTEGER NOT NULL,
		entry TEXT NOT NULL,
		PRIMARY KEY (run_id, key)
	) WITHOUT ROWID`,
	`CREATE INDEX IF NOT EXISTS eventos_arquivo ON eventos(account, nsa, ord)`,
}

// schemaV2 is step 2: each retorno's events go in partes, up to partSize
// a row, in file order: their keys (one a line) and their entries as
// written (JSON lines), so 133,000 events are a few hundred rows instead
// of 133,000 index entries. The exactly-once guarantee is the write
// transaction that reads every key of the run and adds the new ones
// (SQLite's one writer: a second retorno of the run waits and then sees
// the first's keys).
var schemaV2 = []string{
	`CREATE TABLE IF NOT EXISTS partes (
		account TEXT NOT NULL,
		nsa INTEGER NOT NULL,
		part INTEGER NOT NULL,
		run_id TEXT NOT NULL,
		keys BLOB NOT NULL,
		entries BLOB NOT NULL,
		PRIMARY KEY (account, nsa, part)
	)`,
	`CREATE INDEX IF NOT EXISTS partes_run ON partes(run_id)`,
	`INSERT INTO partes (account, nsa, part, run_id, keys, entries)
		SELECT r.account, r.nsa, 0, r.run_id,
			(SELECT group_concat(k.key, char(10)) FROM (SELECT key FROM eventos e1 WHERE e1.account = r.account AND e1.nsa = r.nsa ORDER BY e1.ord) k),
			(SELECT group_concat(x.entry, char(10)) FROM (SELECT entry FROM eventos e2 WHERE e2.account = r.account AND e2.nsa = r.nsa ORDER BY e2.ord) x)
		FROM retornos r WHERE EXISTS (SELECT 1 FROM eventos e3 WHERE e3.account = r.account AND e3.nsa = r.nsa)`,
	`DROP TABLE eventos`,
}

// partSize is how many entries a row of partes holds.
const partSize = 1000

// openStore opens the runs folder's retornos.db (creating it).
func openStore(runsDir string) (*sql.DB, error) {
	db, err := sqlitedb.Open(filepath.Join(runsDir, FileName), &Schema)
	if err != nil {
		return nil, fmt.Errorf("retorno: %w", err)
	}
	return db, nil
}

// File is one retorno written.
type File struct {
	Account   string `json:"account"`
	NSA       int    `json:"nsa"`
	RunID     string `json:"run_id"`
	Layout    string `json:"layout"`
	CreatedAt string `json:"created_at"` // RFC 3339
	Path      string `json:"path"`       // where it was written
	Events    int    `json:"events"`     // events reported (those the layout cannot say included)
	Titles    int    `json:"titles"`     // occurrences in the file
	Cents     int64  `json:"amount_cents"`
	bank      string
	echo      string
}

// reported returns the event keys of run already in a retorno.
func reported(ctx context.Context, tx *sql.Tx, runID string) (map[string]bool, error) {
	rows, err := tx.QueryContext(ctx, `SELECT keys FROM partes WHERE run_id = ?`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[string]bool{}
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, err
		}
		for _, k := range bytes.Split(b, []byte{'\n'}) {
			if len(k) > 0 {
				m[string(k)] = true
			}
		}
	}
	return m, rows.Err()
}

// nextNSA is the account's next sequence number.
func nextNSA(ctx context.Context, tx *sql.Tx, account string) (int, error) {
	var n sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT max(nsa) FROM retornos WHERE account = ?`, account).Scan(&n); err != nil {
		return 0, err
	}
	return int(n.Int64) + 1, nil
}

// files lists the retornos of a run (all of them when runID is empty), in
// NSA order.
func files(ctx context.Context, db *sql.DB, runID string) ([]File, error) {
	q := `SELECT account, nsa, run_id, layout, created_at, path, events, titles, cents, bank, echo FROM retornos`
	var args []any
	if runID != "" {
		q += ` WHERE run_id = ?`
		args = append(args, runID)
	}
	rows, err := db.QueryContext(ctx, q+` ORDER BY account, nsa`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []File
	for rows.Next() {
		var f File
		if err := rows.Scan(&f.Account, &f.NSA, &f.RunID, &f.Layout, &f.CreatedAt, &f.Path, &f.Events, &f.Titles, &f.Cents, &f.bank, &f.echo); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// eachStored calls fn with the entries of one retorno in file order.
func eachStored(ctx context.Context, db *sql.DB, account string, nsa int, fn func(*Entry) error) error {
	rows, err := db.QueryContext(ctx, `SELECT entries FROM partes WHERE account = ? AND nsa = ? ORDER BY part`, account, nsa)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return err
		}
		for len(b) > 0 {
			line := b
			if i := bytes.IndexByte(b, '\n'); i >= 0 {
				line, b = b[:i], b[i+1:]
			} else {
				b = nil
			}
			var e Entry
			if err := json.Unmarshal(line, &e); err != nil {
				return fmt.Errorf("retorno: evento gravado ilegível: %w", err)
			}
			if err := fn(&e); err != nil {
				return err
			}
		}
	}
	return rows.Err()
}

// recorder writes a retorno's events into the store as they are made,
// partSize to a row of partes.
type recorder struct {
	ctx     context.Context
	tx      *sql.Tx
	runID   string
	account string
	nsa     int
	part    int
	keys    []byte
	buf     []byte
	inPart  int
}

func (r *recorder) add(e *Entry) error {
	if r.inPart > 0 {
		r.buf = append(r.buf, '\n')
		r.keys = append(r.keys, '\n')
	}
	r.buf = appendEntry(r.buf, e)
	r.keys = append(r.keys, e.Key...)
	r.inPart++
	if r.inPart == partSize {
		return r.flush()
	}
	return nil
}

func (r *recorder) flush() error {
	if r.inPart == 0 {
		return nil
	}
	if _, err := r.tx.ExecContext(r.ctx, `INSERT INTO partes (account, nsa, part, run_id, keys, entries) VALUES (?, ?, ?, ?, ?, ?)`,
		r.account, r.nsa, r.part, r.runID, r.keys, r.buf); err != nil {
		return fmt.Errorf("retorno: registrar as ocorrências do retorno %d: %w", r.nsa, err)
	}
	r.part++
	r.keys, r.buf, r.inPart = r.keys[:0], r.buf[:0], 0
	return nil
}

// close writes what is left.
func (r *recorder) close() error { return r.flush() }
