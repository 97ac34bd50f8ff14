package retorno

import (
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
}}

// schemaV1 is step 1 of retornos.db.
//
// retornos: one row per file, keyed by account and NSA (the NSA is the
// account's: max + 1 in the same transaction that records the events).
// eventos: one row per reported event of a run, keyed by run and event
// key (the PRIMARY KEY is the exactly-once guarantee), with the entry as
// it was written (JSON), so the file can be written again byte for byte.
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
	rows, err := tx.QueryContext(ctx, `SELECT key FROM eventos WHERE run_id = ?`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[string]bool{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		m[k] = true
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
	rows, err := db.QueryContext(ctx, `SELECT entry FROM eventos WHERE account = ? AND nsa = ? ORDER BY ord`, account, nsa)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return err
		}
		var e Entry
		if err := json.Unmarshal(b, &e); err != nil {
			return fmt.Errorf("retorno: evento gravado ilegível: %w", err)
		}
		if err := fn(&e); err != nil {
			return err
		}
	}
	return rows.Err()
}
