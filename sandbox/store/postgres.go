package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver

	"remessa/internal/migrate"
)

// The PostgreSQL backend: instances sharing one database (a transaction-
// scoped advisory lock serializes writers), its schema and migrations.

type pgBackend struct{}

// writeLock is the pg_advisory_xact_lock key every write transaction
// takes: one writer at a time across every instance, as SQLite's.
const writeLock = 0x72656d657373 // "remess"

func (pgBackend) name() string { return "postgres" }
func (pgBackend) shared() bool { return true }

func (pgBackend) rebind(q string) string {
	var b strings.Builder
	n := 0
	for _, c := range q {
		if c == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

func (pgBackend) setSeqSQL() string {
	return `INSERT INTO seq(name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = GREATEST(seq.value, excluded.value)`
}
func (pgBackend) nextSeqSQL() string {
	return `INSERT INTO seq(name, value) VALUES (?, 1) ON CONFLICT(name) DO UPDATE SET value = seq.value + 1 RETURNING value`
}

func (pgBackend) open(path string, o Options) (w, r *sql.DB, err error) {
	db, err := sql.Open("pgx", path)
	if err != nil {
		return nil, nil, fmt.Errorf("store: open %s: %w", Redact(path), err)
	}
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(16)
	db.SetConnMaxIdleTime(5 * time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("store: connect to %s: %w", Redact(path), scrub(err, path))
	}
	return db, db, nil
}

// scrub removes path (a URL that may hold a password) from an error's
// text, in case a driver quotes it.
func scrub(err error, path string) error {
	if err == nil || !strings.Contains(err.Error(), path) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), path, Redact(path)))
}

var pgSchema = []string{
	`CREATE TABLE IF NOT EXISTS doc (
		kind       TEXT NOT NULL,
		account    TEXT NOT NULL,
		id         TEXT NOT NULL,
		json       BYTEA,
		updated_at BIGINT NOT NULL,
		owner TEXT, n BIGINT,
		s1 TEXT, s2 TEXT, s3 TEXT, s4 TEXT,
		i1 BIGINT, i2 BIGINT, i3 BIGINT, i4 BIGINT,
		PRIMARY KEY (kind, account, id))`,
	`CREATE TABLE IF NOT EXISTS seq (name TEXT PRIMARY KEY, value BIGINT NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS alias (
		kind    TEXT NOT NULL,
		account TEXT NOT NULL,
		key     TEXT NOT NULL,
		owner   TEXT NOT NULL,
		ref     TEXT NOT NULL,
		PRIMARY KEY (kind, account, key))`,
}

// pgMoveIdx moves a database of the versions with a table of index rows
// (idx) to one doc table: the columns added, the rows moved, idx dropped.
var pgMoveIdx = []string{
	`ALTER TABLE doc ALTER COLUMN json DROP NOT NULL,
		ADD COLUMN owner TEXT, ADD COLUMN n BIGINT,
		ADD COLUMN s1 TEXT, ADD COLUMN s2 TEXT, ADD COLUMN s3 TEXT, ADD COLUMN s4 TEXT,
		ADD COLUMN i1 BIGINT, ADD COLUMN i2 BIGINT, ADD COLUMN i3 BIGINT, ADD COLUMN i4 BIGINT`,
	`UPDATE doc d SET owner = i.owner, n = i.n, s1 = i.s1, s2 = i.s2, s3 = i.s3, s4 = i.s4, i1 = i.i1, i2 = i.i2, i3 = i.i3, i4 = i.i4
		FROM idx i WHERE i.kind = d.kind AND i.account = d.account AND i.id = d.id`,
	`INSERT INTO doc(kind, account, id, json, updated_at, ` + idxCols + `)
		SELECT i.kind, i.account, i.id, NULL, 0, i.owner, i.n, i.s1, i.s2, i.s3, i.s4, i.i1, i.i2, i.i3, i.i4
		FROM idx i WHERE NOT EXISTS (SELECT 1 FROM doc d WHERE d.kind = i.kind AND d.account = i.account AND d.id = i.id)`,
	`DROP TABLE idx`,
}

var pgIndexes = []string{
	`CREATE INDEX IF NOT EXISTS doc_n ON doc(kind, account, n, id) WHERE n IS NOT NULL`,
	`CREATE INDEX IF NOT EXISTS doc_i1 ON doc(kind, account, i1, n, id) WHERE n IS NOT NULL`,
}

// pgSteps is the sandbox's Postgres steps (internal/migrate); step 1 is
// what the binary of 8e335f2 did on every start, frozen.
var pgSteps = []migrate.Step{
	{Name: "documentos, sequências e apelidos (8e335f2)", Tx: pgV1},
}

func (pgBackend) migrate(ctx context.Context, w *sql.DB, name string) error {
	return migrate.Up(ctx, w, &migrate.Schema{Name: name, Table: SchemaTable, Dialect: migrate.Postgres, Steps: pgSteps})
}

// pgV1 is step 1 of the sandbox's Postgres store.
func pgV1(ctx context.Context, tx *sql.Tx) error {
	// under the writers' lock, as every write: instances already serving
	// wait for the schema
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(writeLock)); err != nil {
		return err
	}
	for _, q := range pgSchema {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	var oldIdx bool
	if err := tx.QueryRowContext(ctx, `SELECT to_regclass('idx') IS NOT NULL AND NOT EXISTS (
		SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('doc') AND attname = 'n' AND NOT attisdropped)`).Scan(&oldIdx); err != nil {
		return err
	}
	if oldIdx {
		for _, q := range pgMoveIdx {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("move the index rows into doc: %w", err)
			}
		}
	}
	for _, q := range pgIndexes {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

func (pgBackend) begin(ctx context.Context, w *sql.DB) (*sql.Tx, error) {
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(writeLock)); err != nil {
		tx.Rollback()
		return nil, err
	}
	return tx, nil
}
