package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"remessa/internal/migrate"
)

// The SQLite backend: the embedded default (one writer connection, WAL,
// readers beside it), its schema and its migrations.

type sqliteBackend struct{}

func (sqliteBackend) name() string           { return "sqlite" }
func (sqliteBackend) shared() bool           { return false }
func (sqliteBackend) rebind(q string) string { return q }
func (sqliteBackend) setSeqSQL() string {
	return `INSERT INTO seq(name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = max(value, excluded.value)`
}
func (sqliteBackend) nextSeqSQL() string {
	return `INSERT INTO seq(name, value) VALUES (?, 1) ON CONFLICT(name) DO UPDATE SET value = value + 1 RETURNING value`
}

func (sqliteBackend) open(path string, o Options) (w, r *sql.DB, err error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, nil, fmt.Errorf("store: create data dir %s: %w", dir, err)
		}
	}
	u := "file:" + (&url.URL{Path: path}).EscapedPath() + "?"
	// temp_store(MEMORY): the statement journals of a transaction (a
	// savepoint per call of a group commit, a multi-row upsert) stay in
	// memory; in a temporary file they cost a write system call per page
	// changed (about a tenth of a batch's processing).
	p := "_pragma=journal_mode(WAL)&_pragma=busy_timeout(" + strconv.FormatInt(o.BusyTimeout.Milliseconds(), 10) + ")" +
		"&_pragma=synchronous(" + string(o.Sync) + ")&_pragma=temp_store(MEMORY)"
	// Page caches: 16 MB for the writer (it reads what it decides on),
	// 4 MB for each reader; SQLite's default (2 MB) made the index
	// look-ups of big tables read the file again and again.
	w, err = sql.Open("sqlite", u+p+"&_pragma=cache_size(-16384)&_pragma=wal_autocheckpoint("+strconv.Itoa(autoCheckpointPages)+")&_txlock=immediate")
	if err != nil {
		return nil, nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	r, err = sql.Open("sqlite", u+p+"&_pragma=cache_size(-4096)")
	if err != nil {
		w.Close()
		return nil, nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	r.SetMaxOpenConns(5) // 4 readers and the checkpointer's (checkpoint.go)
	r.SetMaxIdleConns(5)
	return w, r, nil
}

// The documents are a rowid table with a unique index on the key, not a
// WITHOUT ROWID table keyed by it: a seek in a WITHOUT ROWID b-tree reads
// every overflow page of the cells it compares, so one batch document of
// 100 KB among the keys made each look-up read it whole. The index rows
// are columns of the same rows (see queries), with partial indexes over
// the rows that have one.
const sqliteDocTable = `
CREATE TABLE doc (
	kind       TEXT NOT NULL,
	account    TEXT NOT NULL,
	id         TEXT NOT NULL,
	json       BLOB,
	updated_at INTEGER NOT NULL,
	owner TEXT, n INTEGER,
	s1 TEXT, s2 TEXT, s3 TEXT, s4 TEXT,
	i1 INTEGER, i2 INTEGER, i3 INTEGER, i4 INTEGER
)`

const sqliteSchema = `
CREATE TABLE IF NOT EXISTS seq (
	name  TEXT PRIMARY KEY,
	value INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS alias (
	kind    TEXT NOT NULL,
	account TEXT NOT NULL,
	key     TEXT NOT NULL,
	owner   TEXT NOT NULL,
	ref     TEXT NOT NULL,
	PRIMARY KEY (kind, account, key)
) WITHOUT ROWID;
`

const sqliteDocIndexes = `
CREATE UNIQUE INDEX IF NOT EXISTS doc_key ON doc(kind, account, id);
CREATE INDEX IF NOT EXISTS doc_n ON doc(kind, account, n, id, s1, s2, s3, s4, i2, i3, i4) WHERE n IS NOT NULL;
CREATE INDEX IF NOT EXISTS doc_i1 ON doc(kind, account, i1, n, id) WHERE n IS NOT NULL;
`

// sqliteOldIdx is the index rows' table of the versions before the
// index rows moved into doc (an empty one stands in when a database has
// none, so one statement moves both).
const sqliteOldIdx = `
CREATE TABLE IF NOT EXISTS idx (
	kind    TEXT NOT NULL,
	account TEXT NOT NULL,
	id      TEXT NOT NULL,
	owner   TEXT NOT NULL,
	n       INTEGER NOT NULL,
	s1 TEXT NOT NULL, s2 TEXT NOT NULL, s3 TEXT NOT NULL, s4 TEXT NOT NULL,
	i1 INTEGER NOT NULL, i2 INTEGER NOT NULL, i3 INTEGER NOT NULL, i4 INTEGER NOT NULL,
	PRIMARY KEY (kind, account, id)
) WITHOUT ROWID`

// moveIdxSQL fill doc_new (the new doc) from the old doc and idx: each
// document with its index row, then the index rows without a document.
var moveIdxSQL = []string{
	`INSERT INTO doc_new(kind, account, id, json, updated_at, ` + idxCols + `)
	 SELECT d.kind, d.account, d.id, d.json, d.updated_at, i.owner, i.n, i.s1, i.s2, i.s3, i.s4, i.i1, i.i2, i.i3, i.i4
	 FROM doc d LEFT JOIN idx i ON i.kind = d.kind AND i.account = d.account AND i.id = d.id ORDER BY d.rowid`,
	`INSERT INTO doc_new(kind, account, id, json, updated_at, ` + idxCols + `)
	 SELECT i.kind, i.account, i.id, NULL, 0, i.owner, i.n, i.s1, i.s2, i.s3, i.s4, i.i1, i.i2, i.i3, i.i4
	 FROM idx i WHERE NOT EXISTS (SELECT 1 FROM doc d WHERE d.kind = i.kind AND d.account = i.account AND d.id = i.id)`,
}

// sqliteSteps is sandbox.db's steps (internal/migrate); step 1 is what
// the binary of 8e335f2 did on every start, frozen: the tables, and the
// moves of older layouts into them (it sets *moved when the move left
// free pages to give back).
func sqliteSteps(moved *bool) []migrate.Step {
	return []migrate.Step{
		{Name: "documentos, sequências e apelidos (8e335f2)", Tx: func(ctx context.Context, tx *sql.Tx) error {
			var err error
			*moved, err = sqliteV1(ctx, tx)
			return err
		}},
	}
}

func (sqliteBackend) migrate(ctx context.Context, w *sql.DB, name string) error {
	moved := false
	if err := migrate.Up(ctx, w, &migrate.Schema{Name: name, Table: SchemaTable, Dialect: migrate.SQLite, Steps: sqliteSteps(&moved)}); err != nil {
		return err
	}
	if !moved {
		return nil
	}
	// The old tables' pages are free pages of the file now (as big as
	// the copy): give them back, and the WAL the copy went through.
	if _, err := w.ExecContext(ctx, `VACUUM`); err != nil {
		return fmt.Errorf("vacuum after moving the index rows: %w", err)
	}
	_, err := w.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}

// sqliteV1 is step 1 of sandbox.db.
func sqliteV1(ctx context.Context, tx *sql.Tx) (moved bool, err error) {
	count := func(q string, args ...any) (int, error) {
		var n int
		err := tx.QueryRowContext(ctx, q, args...).Scan(&n)
		return n, err
	}
	table := func(name string) (bool, error) {
		n, err := count(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, name)
		return n > 0, err
	}
	if _, err := tx.ExecContext(ctx, sqliteSchema); err != nil {
		return false, err
	}
	hasDoc, err := table("doc")
	if err != nil {
		return false, err
	}
	merged, err := count(`SELECT count(*) FROM pragma_table_info('doc') WHERE name = 'n'`)
	if err != nil {
		return false, err
	}
	switch {
	case !hasDoc:
		if _, err := tx.ExecContext(ctx, sqliteDocTable); err != nil {
			return false, err
		}
	case merged == 0:
		// A database of the versions with a table of index rows (idx):
		// documents and index rows move into the new doc.
		stmts := append([]string{sqliteOldIdx, strings.Replace(sqliteDocTable, "TABLE doc", "TABLE doc_new", 1)}, moveIdxSQL...)
		stmts = append(stmts, `DROP TABLE doc`, `DROP TABLE idx`, `ALTER TABLE doc_new RENAME TO doc`)
		for _, q := range stmts {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return false, fmt.Errorf("move the index rows into doc: %w", err)
			}
		}
		moved = true
	}
	if _, err := tx.ExecContext(ctx, sqliteDocIndexes); err != nil {
		return false, err
	}
	// A database of an older version still (table docs): its documents
	// move to the new table.
	if old, err := table("docs"); err != nil {
		return false, err
	} else if old {
		if _, err := tx.ExecContext(ctx, `INSERT INTO doc(kind, account, id, json, updated_at) SELECT kind, account, id, json, updated_at FROM docs`); err != nil {
			return false, err
		}
		if _, err := tx.ExecContext(ctx, `DROP TABLE docs`); err != nil {
			return false, err
		}
	}
	return moved, nil
}

func (sqliteBackend) begin(ctx context.Context, w *sql.DB) (*sql.Tx, error) {
	return w.BeginTx(ctx, nil) // BEGIN IMMEDIATE on the one writer connection
}
