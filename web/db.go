package web

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	_ "modernc.org/sqlite" // the pure-Go SQLite driver

	"remessa/internal/migrate"
)

// DBFile is the name of the web app's database under its data folder: the
// users, sessions, service accounts, remessas, runs and River's job tables.
const DBFile = "web.db"

// schemaV1 is the web app's own tables as the binary of 8e335f2 (the last
// without schema versions) made them: web.db's step 1, frozen. River's
// tables come from rivermigrate.
var schemaV1 = []string{
	`CREATE TABLE IF NOT EXISTS users (
		id INTEGER PRIMARY KEY,
		username TEXT NOT NULL UNIQUE,
		name TEXT NOT NULL DEFAULT '',
		password_hash TEXT NOT NULL,
		role TEXT NOT NULL,
		disabled INTEGER NOT NULL DEFAULT 0,
		created_at TEXT NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS sessions (
		token_hash TEXT PRIMARY KEY,
		user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
		csrf TEXT NOT NULL,
		created_at INTEGER NOT NULL,
		seen_at INTEGER NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS accounts (
		id INTEGER PRIMARY KEY,
		name TEXT NOT NULL UNIQUE,
		service TEXT NOT NULL,
		base_url TEXT NOT NULL DEFAULT '',
		pix_base_url TEXT NOT NULL DEFAULT '',
		secrets BLOB,
		has_cert INTEGER NOT NULL DEFAULT 0,
		created_at TEXT NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS user_accounts (
		user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
		account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
		PRIMARY KEY (user_id, account_id)
	)`,
	`CREATE TABLE IF NOT EXISTS drafts (
		id INTEGER PRIMARY KEY,
		kind TEXT NOT NULL,
		account_id INTEGER NOT NULL REFERENCES accounts(id),
		created_by INTEGER NOT NULL REFERENCES users(id),
		created_at TEXT NOT NULL,
		updated_at TEXT NOT NULL,
		input_name TEXT NOT NULL DEFAULT '',
		input_file TEXT NOT NULL DEFAULT '',
		settings TEXT NOT NULL DEFAULT '{}',
		columns TEXT NOT NULL DEFAULT '{}',
		job_uploaded INTEGER NOT NULL DEFAULT 0,
		checked_sha TEXT NOT NULL DEFAULT '',
		rows INTEGER NOT NULL DEFAULT 0,
		refused INTEGER NOT NULL DEFAULT 0,
		errors INTEGER NOT NULL DEFAULT 0,
		warnings INTEGER NOT NULL DEFAULT 0
	)`,
	`CREATE TABLE IF NOT EXISTS sheet_rows (
		draft_id INTEGER NOT NULL,
		idx INTEGER NOT NULL,
		row_num INTEGER NOT NULL,
		cells TEXT NOT NULL,
		bad INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY (draft_id, idx)
	) WITHOUT ROWID`,
	`CREATE TABLE IF NOT EXISTS sheet_notes (
		draft_id INTEGER NOT NULL,
		idx INTEGER NOT NULL,
		severity TEXT NOT NULL,
		code TEXT NOT NULL,
		col TEXT NOT NULL DEFAULT '',
		field TEXT NOT NULL DEFAULT '',
		message TEXT NOT NULL,
		message_en TEXT NOT NULL DEFAULT ''
	)`,
	`CREATE INDEX IF NOT EXISTS sheet_notes_row ON sheet_notes(draft_id, idx)`,
	`CREATE INDEX IF NOT EXISTS sheet_notes_code ON sheet_notes(draft_id, code, idx)`,
	`CREATE TABLE IF NOT EXISTS runs (
		id INTEGER PRIMARY KEY,
		draft_id INTEGER NOT NULL REFERENCES drafts(id),
		account_id INTEGER NOT NULL REFERENCES accounts(id),
		kind TEXT NOT NULL,
		name TEXT NOT NULL DEFAULT '',
		run_id TEXT NOT NULL UNIQUE,
		dir TEXT NOT NULL,
		status TEXT NOT NULL,
		rows INTEGER NOT NULL DEFAULT 0,
		amount_cents INTEGER NOT NULL DEFAULT 0,
		started_by INTEGER NOT NULL REFERENCES users(id),
		created_at TEXT NOT NULL,
		finished_at TEXT NOT NULL DEFAULT '',
		progress TEXT NOT NULL DEFAULT '{}',
		totals TEXT NOT NULL DEFAULT '',
		message TEXT NOT NULL DEFAULT '',
		generation INTEGER NOT NULL DEFAULT 0,
		job_id INTEGER NOT NULL DEFAULT 0,
		again INTEGER NOT NULL DEFAULT 0,
		cancel_asked INTEGER NOT NULL DEFAULT 0
	)`,
	// with --db (cluster.go): the run is a cluster run; units and
	// handed_at record its handoff to the cluster
	`ALTER TABLE runs ADD COLUMN cluster INTEGER NOT NULL DEFAULT 0`,
	`ALTER TABLE runs ADD COLUMN units INTEGER NOT NULL DEFAULT 0`,
	`ALTER TABLE runs ADD COLUMN handed_at TEXT NOT NULL DEFAULT ''`,
	`ALTER TABLE runs ADD COLUMN db TEXT NOT NULL DEFAULT ''`, // the cluster's database, without its password
	`CREATE INDEX IF NOT EXISTS runs_recent ON runs(id DESC)`,
	`CREATE INDEX IF NOT EXISTS runs_draft ON runs(draft_id)`,
	`CREATE TABLE IF NOT EXISTS audit (
		id INTEGER PRIMARY KEY,
		at TEXT NOT NULL,
		user_id INTEGER,
		action TEXT NOT NULL,
		detail TEXT NOT NULL DEFAULT ''
	)`,
}

// Schema is web.db's own tables, step by step (internal/migrate); a new
// table or column is a new step at the end of this list (the steps are
// listed here, in order, so no file's init can change a step's number).
var Schema = migrate.Schema{Name: DBFile, Table: "web_schema_version", Dialect: migrate.SQLite, Steps: []migrate.Step{
	{Name: "tabelas da mesa (8e335f2)", Tx: func(ctx context.Context, tx *sql.Tx) error {
		for _, s := range schemaV1 {
			// The ALTERs of files older still: a column already there is fine.
			if _, err := tx.ExecContext(ctx, s); err != nil && !(strings.HasPrefix(s, "ALTER TABLE") && strings.Contains(err.Error(), "duplicate column")) {
				return err
			}
		}
		return nil
	}},
	deskActionsStep,  // 2: the desk's follow-up actions (actions_schema.go)
	notifyTokensStep, // 3: the accounts' notification addresses (inbox.go)
	deskReguaStep,    // 4: the desk's régua de cobrança (regua_schema.go)
}}

// dsn is the modernc SQLite address of path with the pragmas the app uses:
// WAL (readers do not wait for writers), a busy timeout, foreign keys, and
// FULL synchronous so an acknowledged change survives a power loss.
func dsn(path string, immediate bool) string {
	q := "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous(FULL)"
	if immediate {
		q += "&_txlock=immediate"
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + q
}

// openDB opens the web database under dir and brings its schema and River's
// up to date. It returns two pools over the same file: db for the app (a
// few connections, immediate write transactions) and rdb for River (one
// connection, as riversqlite asks).
func openDB(ctx context.Context, dir string) (db, rdb *sql.DB, err error) {
	path := filepath.Join(dir, DBFile)
	db, err = sql.Open("sqlite", dsn(path, true))
	if err != nil {
		return nil, nil, fmt.Errorf("abrir o banco %s: %w", path, err)
	}
	db.SetMaxOpenConns(4)
	rdb, err = sql.Open("sqlite", dsn(path, false))
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("abrir o banco %s: %w", path, err)
	}
	rdb.SetMaxOpenConns(1)
	fail := func(what string, e error) (*sql.DB, *sql.DB, error) {
		db.Close()
		rdb.Close()
		return nil, nil, fmt.Errorf("banco %s: %s: %w", path, what, e)
	}
	if err := migrate.Up(ctx, db, &Schema); err != nil {
		return fail("migrações", err)
	}
	m, err := rivermigrate.New(riversqlite.New(rdb), nil)
	if err != nil {
		return fail("migrações da fila", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fail("migrações da fila", err)
	}
	return db, rdb, nil
}
