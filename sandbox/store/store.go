// Package store persists the sandbox's state in an embedded SQLite database
// (modernc.org/sqlite, no cgo) as JSON documents keyed by kind, account and
// id, plus durable counters.
//
// Domain packages keep their working state in memory, load it with Each at
// start and write through with Tx before answering. Writers are serialised;
// readers run concurrently (WAL). With the default synchronous=NORMAL a
// committed transaction is in the WAL file before Tx returns, so it survives
// a kill -9 of the process; Options.Sync = SyncFull also fsyncs every commit
// so it survives a power loss (see docs/sandbox-core.md for the figures).
package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Memory is the path that opens a private throw-away database (tests): a
// file in a temporary directory that Close removes.
const Memory = ":memory:"

// Sync selects SQLite's synchronous setting.
type Sync string

// Synchronous settings.
const (
	SyncNormal Sync = "NORMAL" // survives process death (kill -9); default
	SyncFull   Sync = "FULL"   // also survives power loss; one fsync per commit
)

// Options tune Open.
type Options struct {
	Sync        Sync          // default SyncNormal
	BusyTimeout time.Duration // default 5s
}

// Store is an open database. It is safe for concurrent use.
type Store struct {
	path   string
	tmpDir string  // for Memory: removed by Close
	w      *sql.DB // single writer connection
	r      *sql.DB // readers
	mu     sync.Mutex
	put    *sql.Stmt // hot statements, prepared once on w
	setSeq *sql.Stmt
}

// Open opens (creating if needed) the database at path with default options.
// Path ":memory:" gives a private throw-away database.
func Open(path string) (*Store, error) { return OpenWith(path, Options{}) }

// OpenWith opens the database at path with opts.
func OpenWith(path string, opts Options) (*Store, error) {
	if opts.Sync == "" {
		opts.Sync = SyncNormal
	}
	if opts.Sync != SyncNormal && opts.Sync != SyncFull {
		return nil, fmt.Errorf("store: synchronous %q: want NORMAL or FULL", opts.Sync)
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 5 * time.Second
	}
	s := &Store{path: path}
	if path == Memory || path == "" {
		// A private database in a temporary directory removed by Close.
		// (A real :memory: database lives in one connection, which would
		// make a read inside a write transaction wait for itself; this
		// keeps the file store's semantics: one writer, parallel readers.)
		dir, err := os.MkdirTemp("", "remessa-store-")
		if err != nil {
			return nil, fmt.Errorf("store: temporary database: %w", err)
		}
		s.tmpDir = dir
		path = filepath.Join(dir, "mem.db")
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("store: create data dir %s: %w", dir, err)
		}
	}
	u := "file:" + (&url.URL{Path: path}).EscapedPath() + "?"
	w, err := sql.Open("sqlite", u+pragmas(opts, true)[1:]+"&_txlock=immediate")
	if err != nil {
		s.removeTmp()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	r, err := sql.Open("sqlite", u+pragmas(opts, true)[1:])
	if err != nil {
		w.Close()
		s.removeTmp()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	r.SetMaxOpenConns(4)
	r.SetMaxIdleConns(4)
	s.w, s.r = w, r
	if err := s.migrate(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func pragmas(o Options, wal bool) string {
	q := "&_pragma=busy_timeout(" + fmt.Sprint(o.BusyTimeout.Milliseconds()) + ")" +
		"&_pragma=synchronous(" + string(o.Sync) + ")"
	if wal {
		q = "&_pragma=journal_mode(WAL)" + q
	}
	return q
}

const schema = `
CREATE TABLE IF NOT EXISTS docs (
	kind       TEXT NOT NULL,
	account    TEXT NOT NULL,
	id         TEXT NOT NULL,
	json       BLOB NOT NULL,
	updated_at INTEGER NOT NULL,
	PRIMARY KEY (kind, account, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS seq (
	name  TEXT PRIMARY KEY,
	value INTEGER NOT NULL
) WITHOUT ROWID;
`

func (s *Store) migrate() error {
	if _, err := s.w.Exec(schema); err != nil {
		return fmt.Errorf("store: create schema in %s: %w", s.path, err)
	}
	if err := s.r.Ping(); err != nil {
		return fmt.Errorf("store: open readers on %s: %w", s.path, err)
	}
	var err error
	if s.put, err = s.w.Prepare(qPut); err != nil {
		return fmt.Errorf("store: prepare in %s: %w", s.path, err)
	}
	if s.setSeq, err = s.w.Prepare(qSetSeq); err != nil {
		return fmt.Errorf("store: prepare in %s: %w", s.path, err)
	}
	return nil
}

// Path returns the path the store was opened with.
func (s *Store) Path() string { return s.path }

// Close closes the database; pending transactions must have finished.
func (s *Store) Close() error {
	var err error
	for _, st := range []*sql.Stmt{s.put, s.setSeq} {
		if st != nil {
			st.Close()
		}
	}
	if s.r != nil {
		err = s.r.Close()
	}
	if s.w != nil {
		if e := s.w.Close(); e != nil && err == nil {
			err = e
		}
	}
	s.removeTmp()
	return err
}

func (s *Store) removeTmp() {
	if s.tmpDir != "" {
		_ = os.RemoveAll(s.tmpDir)
		s.tmpDir = ""
	}
}

// Tx is a write transaction. It is valid only inside the function given to
// Store.Tx and must not be used from other goroutines.
type Tx struct {
	ctx context.Context
	tx  *sql.Tx
	s   *Store
	now int64
}

// ErrNotFound may be returned by Delete callers that care; Delete itself
// does not fail on a missing document.
var ErrNotFound = errors.New("store: not found")

// Tx runs fn in a write transaction; writers are serialised. If fn returns
// an error or panics the transaction is rolled back, otherwise it is
// committed (and durable, see the package doc) before Tx returns. The
// cancellation of ctx (a client hanging up) does not interrupt a
// transaction: a handler's write completes or fails on its own merits.
// Inside fn read with tx.Get (it sees the transaction's writes).
func (s *Store) Tx(ctx context.Context, fn func(tx *Tx) error) (err error) {
	ctx = context.WithoutCancel(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	sqlTx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin transaction: %w", err)
	}
	tx := &Tx{ctx: ctx, tx: sqlTx, s: s, now: time.Now().UnixMilli()}
	committed := false
	defer func() {
		if !committed {
			_ = sqlTx.Rollback()
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	committed = true
	return nil
}

const (
	qPut = `INSERT INTO docs(kind, account, id, json, updated_at) VALUES (?, ?, ?, ?, ?)
		 ON CONFLICT(kind, account, id) DO UPDATE SET json = excluded.json, updated_at = excluded.updated_at`
	qSetSeq = `INSERT INTO seq(name, value) VALUES (?, ?)
		 ON CONFLICT(name) DO UPDATE SET value = max(value, excluded.value)`
)

// Put stores v as JSON under (kind, account, id), replacing any previous
// document.
func (tx *Tx) Put(kind, account, id string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("store: encode %s/%s/%s: %w", kind, account, id, err)
	}
	return tx.PutRaw(kind, account, id, raw)
}

// PutRaw stores an already encoded JSON document.
func (tx *Tx) PutRaw(kind, account, id string, raw []byte) error {
	_, err := tx.tx.StmtContext(tx.ctx, tx.s.put).ExecContext(tx.ctx, kind, account, id, raw, tx.now)
	if err != nil {
		return fmt.Errorf("store: put %s/%s/%s: %w", kind, account, id, err)
	}
	return nil
}

// Get reads a document inside the transaction (it sees the transaction's
// own writes); found is false when there is none.
func (tx *Tx) Get(kind, account, id string, v any) (found bool, err error) {
	var raw []byte
	err = tx.tx.QueryRowContext(tx.ctx, `SELECT json FROM docs WHERE kind = ? AND account = ? AND id = ?`,
		kind, account, id).Scan(&raw)
	return decodeRow(kind, account, id, raw, err, v)
}

// Delete removes the document; deleting a missing document is not an error.
func (tx *Tx) Delete(kind, account, id string) error {
	_, err := tx.tx.ExecContext(tx.ctx, `DELETE FROM docs WHERE kind = ? AND account = ? AND id = ?`, kind, account, id)
	if err != nil {
		return fmt.Errorf("store: delete %s/%s/%s: %w", kind, account, id, err)
	}
	return nil
}

// NextSeq increments the durable counter name and returns its new value;
// the first value is 1.
func (tx *Tx) NextSeq(name string) (int64, error) {
	var v int64
	err := tx.tx.QueryRowContext(tx.ctx,
		`INSERT INTO seq(name, value) VALUES (?, 1)
		 ON CONFLICT(name) DO UPDATE SET value = value + 1 RETURNING value`, name).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("store: next value of sequence %q: %w", name, err)
	}
	return v, nil
}

// SetSeq sets the counter name to at least v (it never goes back); useful
// to start ids at a realistic number.
func (tx *Tx) SetSeq(name string, v int64) error {
	_, err := tx.tx.StmtContext(tx.ctx, tx.s.setSeq).ExecContext(tx.ctx, name, v)
	if err != nil {
		return fmt.Errorf("store: set sequence %q: %w", name, err)
	}
	return nil
}

// Get reads the document (kind, account, id) into v; found is false when
// there is none.
func (s *Store) Get(ctx context.Context, kind, account, id string, v any) (found bool, err error) {
	var raw []byte
	err = s.r.QueryRowContext(ctx, `SELECT json FROM docs WHERE kind = ? AND account = ? AND id = ?`,
		kind, account, id).Scan(&raw)
	return decodeRow(kind, account, id, raw, err, v)
}

func decodeRow(kind, account, id string, raw []byte, err error, v any) (bool, error) {
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: get %s/%s/%s: %w", kind, account, id, err)
	}
	if v != nil {
		if err := json.Unmarshal(raw, v); err != nil {
			return true, fmt.Errorf("store: decode %s/%s/%s: %w", kind, account, id, err)
		}
	}
	return true, nil
}

// Each calls fn for every document of kind, ordered by account then id. raw
// is only valid during the call. An error from fn stops the iteration and
// is returned.
func (s *Store) Each(ctx context.Context, kind string, fn func(account, id string, raw []byte) error) error {
	return s.each(ctx, fn, `SELECT account, id, json FROM docs WHERE kind = ? ORDER BY account, id`, kind)
}

// EachIn is Each restricted to one account.
func (s *Store) EachIn(ctx context.Context, kind, account string, fn func(id string, raw []byte) error) error {
	return s.each(ctx, func(_, id string, raw []byte) error { return fn(id, raw) }, qEachIn, kind, account)
}

// EachIn is Store.EachIn inside the transaction (it sees the transaction's
// own writes). fn must not write to the transaction.
func (tx *Tx) EachIn(kind, account string, fn func(id string, raw []byte) error) error {
	return eachRow(tx.ctx, tx.tx.QueryContext, func(_, id string, raw []byte) error { return fn(id, raw) }, qEachIn, kind, account)
}

const qEachIn = `SELECT account, id, json FROM docs WHERE kind = ? AND account = ? ORDER BY id`

func (s *Store) each(ctx context.Context, fn func(account, id string, raw []byte) error, q string, args ...any) error {
	return eachRow(ctx, s.r.QueryContext, fn, q, args...)
}

func eachRow(ctx context.Context, query func(context.Context, string, ...any) (*sql.Rows, error),
	fn func(account, id string, raw []byte) error, q string, args ...any) error {
	rows, err := query(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("store: list %v: %w", args, err)
	}
	defer rows.Close()
	for rows.Next() {
		var account, id string
		var raw []byte
		if err := rows.Scan(&account, &id, &raw); err != nil {
			return fmt.Errorf("store: list %v: %w", args, err)
		}
		if err := fn(account, id, raw); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: list %v: %w", args, err)
	}
	return nil
}

// Seq returns the current value of counter name (0 if never used).
func (s *Store) Seq(ctx context.Context, name string) (int64, error) {
	var v int64
	err := s.r.QueryRowContext(ctx, `SELECT value FROM seq WHERE name = ?`, name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("store: read sequence %q: %w", name, err)
	}
	return v, nil
}
