package listen

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver

	"remessa/internal/migrate"
	"remessa/internal/sqlitedb"
)

// FileName is the listener's database in the runs folder: the inbox of
// deliveries and the index of the runs.
const FileName = "listen.db"

// Kinds of inbox items.
const (
	KindNotification = "notificacao" // a charges API notification token
	KindPix          = "pix"         // one Pix of a Pix webhook
)

// States of inbox items.
const (
	StatePending = "pendente" // received, not yet applied (or to be retried)
	StateApplied = "aplicado" // applied to the ledgers of its runs
	StateOrphan  = "orfao"    // belongs to no run under the runs folder
	// StateRefused: the service denies it (a token its scope's service
	// does not know, a Pix it does not confirm): it changed nothing and is
	// never tried again.
	StateRefused = "recusado"
)

// Schema is listen.db's tables, step by step (internal/migrate); step 1
// is what the binary of 8e335f2 made, frozen.
var Schema = migrate.Schema{Name: FileName, Table: "listen_schema_version", Dialect: migrate.SQLite, Steps: []migrate.Step{
	{Name: "caixa de entrada, execuções e ids (8e335f2)", SQL: strings.Join(schemaV1, ";\n")},
	{Name: "escopo das entregas (a conta de serviço da mesa)", SQL: strings.Join(schemaV2, ";\n")},
}}

// schemaV2 gives each item the scope it was received in (the desk's
// service account; "" for `remessa listen`): the same token or
// endToEndId received in two scopes is two items, each read from its
// own scope's service. SQLite cannot change a UNIQUE constraint in
// place, so the table is copied.
var schemaV2 = []string{
	`CREATE TABLE inbox_v2 (
		id INTEGER PRIMARY KEY,
		kind TEXT NOT NULL,
		scope TEXT NOT NULL DEFAULT '',
		key TEXT NOT NULL,
		body TEXT NOT NULL DEFAULT '',
		path TEXT NOT NULL DEFAULT '',
		state TEXT NOT NULL,
		gen INTEGER NOT NULL DEFAULT 1,
		deliveries INTEGER NOT NULL DEFAULT 1,
		duplicates INTEGER NOT NULL DEFAULT 0,
		attempts INTEGER NOT NULL DEFAULT 0,
		next_at TEXT NOT NULL DEFAULT '',
		last_error TEXT NOT NULL DEFAULT '',
		received_at TEXT NOT NULL,
		applied_at TEXT NOT NULL DEFAULT '',
		runs TEXT NOT NULL DEFAULT '',
		changed INTEGER NOT NULL DEFAULT 0,
		UNIQUE (kind, scope, key)
	)`,
	`INSERT INTO inbox_v2 (id, kind, key, body, path, state, gen, deliveries, duplicates, attempts, next_at, last_error, received_at, applied_at, runs, changed)
		SELECT id, kind, key, body, path, state, gen, deliveries, duplicates, attempts, next_at, last_error, received_at, applied_at, runs, changed FROM inbox`,
	`DROP TABLE inbox`,
	`ALTER TABLE inbox_v2 RENAME TO inbox`,
	`CREATE INDEX IF NOT EXISTS inbox_due ON inbox(state, next_at)`,
}

var schemaV1 = []string{
	`CREATE TABLE IF NOT EXISTS inbox (
		id INTEGER PRIMARY KEY,
		kind TEXT NOT NULL,
		key TEXT NOT NULL,
		body TEXT NOT NULL DEFAULT '',
		path TEXT NOT NULL DEFAULT '',
		state TEXT NOT NULL,
		gen INTEGER NOT NULL DEFAULT 1,
		deliveries INTEGER NOT NULL DEFAULT 1,
		duplicates INTEGER NOT NULL DEFAULT 0,
		attempts INTEGER NOT NULL DEFAULT 0,
		next_at TEXT NOT NULL DEFAULT '',
		last_error TEXT NOT NULL DEFAULT '',
		received_at TEXT NOT NULL,
		applied_at TEXT NOT NULL DEFAULT '',
		runs TEXT NOT NULL DEFAULT '',
		changed INTEGER NOT NULL DEFAULT 0,
		UNIQUE (kind, key)
	)`,
	`CREATE INDEX IF NOT EXISTS inbox_due ON inbox(state, next_at)`,
	`CREATE TABLE IF NOT EXISTS runs (
		name TEXT PRIMARY KEY,
		run_id TEXT NOT NULL,
		kind TEXT NOT NULL,
		results_mtime INTEGER NOT NULL,
		results_size INTEGER NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS ids (
		kind TEXT NOT NULL,
		id TEXT NOT NULL,
		run TEXT NOT NULL,
		PRIMARY KEY (kind, id)
	)`,
}

func openDB(dir string) (*sql.DB, error) {
	db, err := sqlitedb.Open(filepath.Join(dir, FileName), &Schema)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	return db, nil
}

// delivery is one item of a delivery, to be kept in the inbox.
type delivery struct {
	kind, scope, key, body, path string
}

// record keeps the items of one delivery in the inbox, in one durable
// transaction, and returns how many were new (not duplicates).
//
// A token already pending is a duplicate; a token applied before comes
// back to pending (the real service posts the same token on every change
// of the charge, so a new post may carry a new change). Every post of a
// token bumps its generation, so a worker that read the token before this
// post does not mark it done. A Pix with the same endToEndId and the same
// content is a duplicate; with different content (a refund added) it is
// kept and applied again.
func record(ctx context.Context, db *sql.DB, items []delivery, now time.Time) (fresh int, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	at := stamp(now)
	// a group commit holds many items: each statement is parsed once
	ins, err := tx.PrepareContext(ctx, `INSERT INTO inbox (kind, scope, key, body, path, state, received_at, next_at) VALUES (?, ?, ?, ?, ?, ?, ?, '')
		ON CONFLICT (kind, scope, key) DO NOTHING`)
	if err != nil {
		return 0, err
	}
	defer ins.Close()
	sel, err := tx.PrepareContext(ctx, `SELECT id, state, body FROM inbox WHERE kind = ? AND scope = ? AND key = ?`)
	if err != nil {
		return 0, err
	}
	defer sel.Close()
	for _, it := range items {
		// the usual case, a new item, is one statement
		res, err := ins.ExecContext(ctx, it.kind, it.scope, it.key, it.body, it.path, StatePending, at)
		if err != nil {
			return 0, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return 0, err
		} else if n == 1 {
			fresh++
			continue
		}
		var id int64
		var state, body string
		err = sel.QueryRowContext(ctx, it.kind, it.scope, it.key).Scan(&id, &state, &body)
		switch {
		case err != nil:
			return 0, err
		case it.kind == KindPix && body == it.body:
			if _, err := tx.ExecContext(ctx, `UPDATE inbox SET deliveries = deliveries + 1, duplicates = duplicates + 1 WHERE id = ?`, id); err != nil {
				return 0, err
			}
		case it.kind == KindPix:
			if _, err := tx.ExecContext(ctx, `UPDATE inbox SET deliveries = deliveries + 1, body = ?, state = ?, gen = gen + 1, next_at = '', attempts = 0 WHERE id = ?`,
				it.body, StatePending, id); err != nil {
				return 0, err
			}
			fresh++
		default: // a token
			dup := 0
			if state == StatePending {
				dup = 1
			} else {
				fresh++
			}
			if _, err := tx.ExecContext(ctx, `UPDATE inbox SET deliveries = deliveries + 1, duplicates = duplicates + ?, state = ?, gen = gen + 1, next_at = '', attempts = 0, path = ? WHERE id = ?`,
				dup, StatePending, it.path, id); err != nil {
				return 0, err
			}
		}
	}
	return fresh, tx.Commit()
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Item is an inbox item as Items reports it.
type Item struct {
	ID         int64  `json:"id"`
	Kind       string `json:"kind"`
	Scope      string `json:"scope,omitempty"` // the desk's service account it came for
	Key        string `json:"key"`             // the token or the endToEndId
	Path       string `json:"path"`
	State      string `json:"state"`
	Deliveries int    `json:"deliveries"`
	Duplicates int    `json:"duplicates"`
	Attempts   int    `json:"attempts"`
	LastError  string `json:"last_error,omitempty"`
	ReceivedAt string `json:"received_at"`
	AppliedAt  string `json:"applied_at,omitempty"`
	Runs       string `json:"runs,omitempty"` // the run folders it was applied to
	Changed    int    `json:"changed"`        // charges it changed in the ledgers
}

// Stats counts the inbox.
type Stats struct {
	Items      int `json:"items"`      // distinct tokens and endToEndIds
	Deliveries int `json:"deliveries"` // posts received (items × times each came)
	Duplicates int `json:"duplicates"` // posts that repeated one still pending, or the same Pix
	Pending    int `json:"pending"`
	Applied    int `json:"applied"`
	Orphans    int `json:"orphans"` // of no known run
	Refused    int `json:"refused"` // denied by the service
	Changed    int `json:"changed"` // charges changed in the ledgers
	Runs       int `json:"runs"`    // run folders in the index
}

func stats(ctx context.Context, db *sql.DB) (Stats, error) {
	var s Stats
	err := db.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(deliveries), 0), coalesce(sum(duplicates), 0),
		coalesce(sum(state = ?), 0), coalesce(sum(state = ?), 0), coalesce(sum(state = ?), 0), coalesce(sum(state = ?), 0), coalesce(sum(changed), 0) FROM inbox`,
		StatePending, StateApplied, StateOrphan, StateRefused).Scan(&s.Items, &s.Deliveries, &s.Duplicates, &s.Pending, &s.Applied, &s.Orphans, &s.Refused, &s.Changed)
	if err != nil {
		return s, err
	}
	err = db.QueryRowContext(ctx, `SELECT count(*) FROM runs`).Scan(&s.Runs)
	return s, err
}

// ScopeStats counts the items of one scope; LastAt is when the last one
// was received (RFC 3339, "" when none).
type ScopeStats struct {
	Deliveries int
	Pending    int
	Applied    int
	Refused    int
	LastAt     string
}

// ScopeStats counts the inbox's items of scope.
func (l *Listener) ScopeStats(ctx context.Context, scope string) (ScopeStats, error) {
	var s ScopeStats
	err := l.db.QueryRowContext(ctx, `SELECT coalesce(sum(deliveries), 0), coalesce(sum(state = ?), 0), coalesce(sum(state = ?), 0),
		coalesce(sum(state = ?), 0), coalesce(max(received_at), '') FROM inbox WHERE scope = ?`,
		StatePending, StateApplied, StateRefused, scope).Scan(&s.Deliveries, &s.Pending, &s.Applied, &s.Refused, &s.LastAt)
	return s, err
}

func items(ctx context.Context, db *sql.DB, state string) ([]Item, error) {
	q := `SELECT id, kind, scope, key, path, state, deliveries, duplicates, attempts, last_error, received_at, applied_at, runs, changed FROM inbox`
	args := []any{}
	if state != "" {
		q += ` WHERE state = ?`
		args = append(args, state)
	}
	rows, err := db.QueryContext(ctx, q+` ORDER BY id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Item
	for rows.Next() {
		var it Item
		if err := rows.Scan(&it.ID, &it.Kind, &it.Scope, &it.Key, &it.Path, &it.State, &it.Deliveries, &it.Duplicates, &it.Attempts,
			&it.LastError, &it.ReceivedAt, &it.AppliedAt, &it.Runs, &it.Changed); err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, rows.Err()
}
