// Package store persists the sandbox's state as JSON documents keyed by
// kind, account and id, secondary index rows (listing filters and aliases)
// and durable counters, in one of two backends behind the same API: an
// embedded SQLite database (modernc.org/sqlite, no cgo; the default) or
// PostgreSQL (pgx), which several sandbox instances may share.
//
// Modules read documents from the store (through a bounded Cache of decoded
// documents) and write through with Tx before answering; what a request
// decides is read inside its write transaction. Writers are serialised: by
// one connection on SQLite, by a transaction-scoped advisory lock on
// PostgreSQL (across every instance); readers run concurrently. With
// SQLite's default synchronous=NORMAL a committed transaction is in the WAL
// file before Tx returns, so it survives a kill -9 of the process;
// Options.Sync = SyncFull also fsyncs every commit so it survives a power
// loss (see docs/sandbox-core.md for the figures).
package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
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
	Sync        Sync          // SQLite only; default SyncNormal
	BusyTimeout time.Duration // SQLite only; default 5s
	// CacheSize bounds each Cache made on the store (decoded documents);
	// 0 = DefaultCacheSize, negative = no caching. On PostgreSQL caches
	// are always off (another instance may change any document).
	CacheSize int
}

// SchemaTable is the table keeping the store's schema version
// (internal/migrate), in sandbox.db and in the sandbox's Postgres schema.
const SchemaTable = "sandbox_schema_version"

// DefaultCacheSize is the number of decoded documents a Cache keeps.
const DefaultCacheSize = 8192

// IsPostgres tells whether path names a PostgreSQL database
// (postgres:// or postgresql:// URL) rather than a SQLite file.
func IsPostgres(path string) bool {
	return strings.HasPrefix(path, "postgres://") || strings.HasPrefix(path, "postgresql://")
}

// Redact masks the password of a PostgreSQL URL (for messages); other
// paths are returned unchanged.
func Redact(path string) string {
	if !IsPostgres(path) {
		return path
	}
	u, err := url.Parse(path)
	if err != nil {
		return "postgres://…"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// backend is what differs between SQLite and PostgreSQL: the connections,
// the schema, the dialect of a few statements and how writers are
// serialised. Everything else in Store is shared.
type backend interface {
	name() string
	// open connects and returns the writer and reader pools (they may be
	// the same).
	open(path string, o Options) (w, r *sql.DB, err error)
	migrate(ctx context.Context, w *sql.DB, name string) error
	// rebind turns the ?-placeholders of q into the backend's.
	rebind(q string) string
	// begin starts a write transaction holding the cross-writer lock.
	begin(ctx context.Context, w *sql.DB) (*sql.Tx, error)
	setSeqSQL() string
	nextSeqSQL() string
	// shared tells whether other processes may write the same database
	// (caches off).
	shared() bool
}

// Store is an open database. It is safe for concurrent use.
type Store struct {
	path   string
	tmpDir string // for Memory: removed by Close
	be     backend
	w      *sql.DB    // writer (SQLite: one connection)
	r      *sql.DB    // readers
	mu     sync.Mutex // held by the group running its transaction
	opts   Options

	gmu     sync.Mutex // the queue of Tx calls (group.go)
	queue   []*txCall
	leading bool
	q       map[string]string    // rebound statements
	stmts   map[string]*sql.Stmt // SQLite: hot statements prepared once on the writer
	lists   *listCache           // SQLite: counts and page cursors (nil when shared)
	ckpt    *checkpointer        // SQLite: checkpoints outside the write lock (checkpoint.go)
}

// Open opens (creating if needed) the database at path with default
// options. Path ":memory:" gives a private throw-away SQLite database; a
// postgres:// URL opens PostgreSQL.
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
	if opts.CacheSize == 0 {
		opts.CacheSize = DefaultCacheSize
	}
	s := &Store{path: path, opts: opts}
	if IsPostgres(path) {
		s.be = pgBackend{}
	} else {
		s.be = sqliteBackend{}
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
	}
	w, r, err := s.be.open(path, opts)
	if err != nil {
		s.removeTmp()
		return nil, err
	}
	s.w, s.r = w, r
	if err := s.migrate(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) migrate() error {
	ctx := context.Background()
	name := filepath.Base(s.path)
	if s.be.shared() {
		name = "sandbox " + Redact(s.path)
	}
	if err := s.be.migrate(ctx, s.w, name); err != nil {
		return fmt.Errorf("store: schema of %s: %w", Redact(s.path), err)
	}
	if err := s.r.PingContext(ctx); err != nil {
		return fmt.Errorf("store: open readers on %s: %w", Redact(s.path), err)
	}
	s.q = map[string]string{}
	for name, q := range queries {
		s.q[name] = s.be.rebind(q)
	}
	s.q["setSeq"] = s.be.rebind(s.be.setSeqSQL())
	s.q["nextSeq"] = s.be.rebind(s.be.nextSeqSQL())
	if !s.be.shared() {
		s.lists = newListCache()
		// pgx caches statements per connection itself; database/sql over
		// SQLite would prepare each one on every call.
		s.stmts = map[string]*sql.Stmt{}
		for _, name := range []string{"put", "putDocIdx", "insDocIdx", "insDoc", "delRow", "get", "delete", "unsetDoc", "putIdx", "getIdx", "delIdx", "unsetIdx", "putAlias", "putAliases", "getAlias", "delAlias", "setSeq", "nextSeq"} {
			st, err := s.w.Prepare(s.q[name])
			if err != nil {
				return fmt.Errorf("store: prepare in %s: %w", s.path, err)
			}
			s.stmts[name] = st
		}
	}
	if s.be.name() == "sqlite" {
		s.startCheckpointer()
	}
	return nil
}

// stmt returns the statement name for use in tx: the store's prepared
// statement bound to the transaction once per database transaction (every
// tx.StmtContext call makes a new *sql.Stmt that the transaction keeps
// until it ends: a batch's thousands of rows would make thousands).
func (tx *Tx) stmt(name string) *sql.Stmt {
	st := tx.s.stmts[name]
	if st == nil {
		return nil
	}
	if b := tx.bound[name]; b != nil {
		return b
	}
	b := tx.tx.StmtContext(tx.ctx, st)
	if tx.bound != nil {
		tx.bound[name] = b
	}
	return b
}

// execSQL and querySQL run a statement built per call (a multi-row
// insert, an IN list) in the transaction. (They cannot be prepared once on
// SQLite's single writer connection while a transaction holds it.)
func (tx *Tx) execSQL(q string, args ...any) (sql.Result, error) {
	if err := tx.beforeWrite(); err != nil {
		return nil, err
	}
	return tx.tx.ExecContext(tx.ctx, q, args...)
}

func (tx *Tx) querySQL(q string, args ...any) (*sql.Rows, error) {
	return tx.tx.QueryContext(tx.ctx, q, args...)
}

func (tx *Tx) queryRow(name string, args ...any) *sql.Row {
	if st := tx.stmt(name); st != nil {
		return st.QueryRowContext(tx.ctx, args...)
	}
	return tx.tx.QueryRowContext(tx.ctx, tx.s.q[name], args...)
}

// The documents and the index rows share one table, doc: a row is the
// document (kind, account, id) when json is not NULL and the index row
// (kind, account, id) when n is not NULL, often both (a charge and its
// listing row are one row: one b-tree keyed by the client's txid instead
// of two). A row that is neither is deleted.

// idxSet is the upsert's assignment of an index row's columns.
const idxSet = `owner = excluded.owner, n = excluded.n, s1 = excluded.s1, s2 = excluded.s2, s3 = excluded.s3,
	s4 = excluded.s4, i1 = excluded.i1, i2 = excluded.i2, i3 = excluded.i3, i4 = excluded.i4`

// idxCols are an index row's columns, in the order Index's fields are
// written.
const idxCols = "owner, n, s1, s2, s3, s4, i1, i2, i3, i4"

// queries in the ?-dialect, rebound per backend at open.
var queries = map[string]string{
	"put": `INSERT INTO doc(kind, account, id, json, updated_at) VALUES (?, ?, ?, ?, ?)
		 ON CONFLICT(kind, account, id) DO UPDATE SET json = excluded.json, updated_at = excluded.updated_at`,
	"putDocIdx": `INSERT INTO doc(kind, account, id, json, updated_at, ` + idxCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		 ON CONFLICT(kind, account, id) DO UPDATE SET json = excluded.json, updated_at = excluded.updated_at, ` + idxSet,
	// InsertNew's: a row only where the key is free, and its undoing.
	"insDocIdx": `INSERT INTO doc(kind, account, id, json, updated_at, ` + idxCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		 ON CONFLICT(kind, account, id) DO NOTHING`,
	"insDoc": `INSERT INTO doc(kind, account, id, json, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT(kind, account, id) DO NOTHING`,
	"delRow": `DELETE FROM doc WHERE kind = ? AND account = ? AND id = ?`,
	"get":    `SELECT json FROM doc WHERE kind = ? AND account = ? AND id = ? AND json IS NOT NULL`,
	// Delete is both: the row goes if it holds no index row, else its
	// document is cleared.
	"delete":   `DELETE FROM doc WHERE kind = ? AND account = ? AND id = ? AND n IS NULL`,
	"unsetDoc": `UPDATE doc SET json = NULL WHERE kind = ? AND account = ? AND id = ? AND n IS NOT NULL`,
	"each":     `SELECT account, id, json FROM doc WHERE kind = ? AND json IS NOT NULL ORDER BY account, id`,
	"eachIn":   `SELECT account, id, json FROM doc WHERE kind = ? AND account = ? AND json IS NOT NULL ORDER BY id`,
	"seq":      `SELECT value FROM seq WHERE name = ?`,
	"putIdx": `INSERT INTO doc(kind, account, id, updated_at, ` + idxCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		 ON CONFLICT(kind, account, id) DO UPDATE SET ` + idxSet,
	"getIdx": `SELECT ` + idxCols + ` FROM doc WHERE kind = ? AND account = ? AND id = ? AND n IS NOT NULL`,
	// DeleteIndex is both too (see delete).
	"delIdx": `DELETE FROM doc WHERE kind = ? AND account = ? AND id = ? AND json IS NULL`,
	"unsetIdx": `UPDATE doc SET owner = NULL, n = NULL, s1 = NULL, s2 = NULL, s3 = NULL, s4 = NULL, i1 = NULL, i2 = NULL, i3 = NULL, i4 = NULL
		 WHERE kind = ? AND account = ? AND id = ? AND json IS NOT NULL`,
	"putAlias": `INSERT INTO alias(kind, account, key, owner, ref) VALUES (?, ?, ?, ?, ?)
		 ON CONFLICT(kind, account, key) DO UPDATE SET owner = excluded.owner, ref = excluded.ref`,
	"putAliases": `INSERT INTO alias(kind, account, key, owner, ref) VALUES ` + values(aliasChunk, 5) +
		` ON CONFLICT(kind, account, key) DO UPDATE SET owner = excluded.owner, ref = excluded.ref`,
	"getAlias": `SELECT owner, ref FROM alias WHERE kind = ? AND account = ? AND key = ?`,
	"delAlias": `DELETE FROM alias WHERE kind = ? AND account = ? AND key = ?`,
}

// Path returns the path the store was opened with (a PostgreSQL URL with
// its password masked).
func (s *Store) Path() string { return Redact(s.path) }

// Backend names the backend: "sqlite" or "postgres".
func (s *Store) Backend() string { return s.be.name() }

// Shared tells whether other processes may write the same database
// (PostgreSQL): nothing read outside a write transaction may then be
// trusted to stay current, and caches are off.
func (s *Store) Shared() bool { return s.be.shared() }

// Close closes the database; pending transactions must have finished.
func (s *Store) Close() error {
	var err error
	s.stopCheckpointer()
	for _, st := range s.stmts {
		st.Close()
	}
	if s.r != nil && s.r != s.w {
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
	ctx      context.Context
	tx       *sql.Tx
	s        *Store
	now      int64
	onCommit []func()
	written  map[docKey]bool      // documents written in the database transaction (caches read them from it); shared by a group
	bound    map[string]*sql.Stmt // the store's statements bound to the database transaction (stmt); shared by a group
	touched  map[string]bool      // index rows changed, per kind and account
	guard    bool                 // a savepoint must precede the call's first write (an earlier call of the transaction succeeded)
	sp       bool                 // the call's savepoint is open
	wrote    bool                 // the call has run a write statement
	final    bool                 // Final: no savepoint from here on
}

// Final tells the store that the transaction's function will not fail
// from here on but by a store error (its checks are done): what it
// writes from here on needs no savepoint of its own in a group commit,
// whose page copies cost about a tenth of a batch's time under the write
// lock. If it fails all the same after writing, the whole database
// transaction is rolled back and the calls committed with it fail with
// its error (a store error fails the group, not only the call). A call
// that wrote nothing but an InsertNew that found a key taken (and undid
// its rows) has written nothing: it may still refuse.
func (tx *Tx) Final() { tx.final = true }

// beforeWrite runs before each write statement of the call: it opens the
// call's savepoint when one is due (runGroup) and notes that the call
// wrote.
func (tx *Tx) beforeWrite() error {
	if tx.guard && !tx.sp && !tx.final {
		if _, err := tx.tx.ExecContext(tx.ctx, "SAVEPOINT g"); err != nil {
			return fmt.Errorf("store: savepoint: %w", err)
		}
		tx.sp = true
	}
	tx.wrote = true
	return nil
}

type docKey struct{ kind, account, id string }

// ErrNotFound may be returned by Delete callers that care; Delete itself
// does not fail on a missing document.
var ErrNotFound = errors.New("store: not found")

// Tx runs fn in a write transaction; writers are serialised (on
// PostgreSQL across every process sharing the database). If fn returns an
// error or panics its writes are rolled back, otherwise they are committed
// (and durable, see the package doc) before Tx returns; then the functions
// registered with OnCommit run, in order, still serialised with the other
// writers. The cancellation of ctx (a client hanging up) does not
// interrupt a transaction: a handler's write completes or fails on its own
// merits. Inside fn read with tx.Get (it sees the transaction's writes and
// those of the calls committed with it).
//
// Calls that arrive while another is running are committed together
// (group commit, group.go): each runs in a savepoint of one database
// transaction, so a failing one is rolled back alone, and one commit makes
// them all durable before any returns.
func (s *Store) Tx(ctx context.Context, fn func(tx *Tx) error) error {
	return s.group(context.WithoutCancel(ctx), fn)
}

// OnCommit registers f to run after the transaction commits (not if it
// rolls back).
func (tx *Tx) OnCommit(f func()) { tx.onCommit = append(tx.onCommit, f) }

// Context is the transaction's context (never cancelled).
func (tx *Tx) Context() context.Context { return tx.ctx }

func (tx *Tx) exec(name string, args ...any) error {
	_, err := tx.execN(name, args...)
	return err
}

// execN is exec returning the rows the statement changed.
func (tx *Tx) execN(name string, args ...any) (int64, error) {
	if err := tx.beforeWrite(); err != nil {
		return 0, err
	}
	var res sql.Result
	var err error
	if st := tx.stmt(name); st != nil {
		res, err = st.ExecContext(tx.ctx, args...)
	} else {
		res, err = tx.tx.ExecContext(tx.ctx, tx.s.q[name], args...)
	}
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

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
	if err := tx.exec("put", kind, account, id, raw, tx.now); err != nil {
		return fmt.Errorf("store: put %s/%s/%s: %w", kind, account, id, err)
	}
	tx.markWritten(kind, account, id)
	return nil
}

func (tx *Tx) markWritten(kind, account, id string) {
	if tx.written == nil {
		tx.written = map[docKey]bool{}
	}
	tx.written[docKey{kind, account, id}] = true
}

// Get reads a document inside the transaction (it sees the transaction's
// own writes); found is false when there is none.
func (tx *Tx) Get(kind, account, id string, v any) (found bool, err error) {
	var raw []byte
	err = tx.queryRow("get", kind, account, id).Scan(&raw)
	return decodeRow(kind, account, id, raw, err, v)
}

// GetRaw is Get without decoding; nil when there is none.
func (tx *Tx) GetRaw(kind, account, id string) ([]byte, error) {
	var raw []byte
	err := tx.queryRow("get", kind, account, id).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: get %s/%s/%s: %w", kind, account, id, err)
	}
	return raw, nil
}

// Delete removes the document; deleting a missing document is not an error.
func (tx *Tx) Delete(kind, account, id string) error {
	err := tx.exec("delete", kind, account, id)
	if err == nil {
		err = tx.exec("unsetDoc", kind, account, id)
	}
	if err != nil {
		return fmt.Errorf("store: delete %s/%s/%s: %w", kind, account, id, err)
	}
	tx.markWritten(kind, account, id)
	return nil
}

// NextSeq increments the durable counter name and returns its new value;
// the first value is 1.
func (tx *Tx) NextSeq(name string) (int64, error) {
	var v int64
	if err := tx.beforeWrite(); err != nil {
		return 0, err
	}
	if err := tx.queryRow("nextSeq", name).Scan(&v); err != nil {
		return 0, fmt.Errorf("store: next value of sequence %q: %w", name, err)
	}
	return v, nil
}

// NextSeqN reserves n consecutive values of counter name and returns the
// first.
func (tx *Tx) NextSeqN(name string, n int) (int64, error) {
	first, err := tx.NextSeq(name)
	if err != nil || n <= 1 {
		return first, err
	}
	return first, tx.SetSeq(name, first+int64(n)-1)
}

// SetSeq sets the counter name to at least v (it never goes back); useful
// to start ids at a realistic number.
func (tx *Tx) SetSeq(name string, v int64) error {
	if err := tx.exec("setSeq", name, v); err != nil {
		return fmt.Errorf("store: set sequence %q: %w", name, err)
	}
	return nil
}

// Get reads the document (kind, account, id) into v; found is false when
// there is none.
func (s *Store) Get(ctx context.Context, kind, account, id string, v any) (found bool, err error) {
	var raw []byte
	err = s.r.QueryRowContext(ctx, s.q["get"], kind, account, id).Scan(&raw)
	return decodeRow(kind, account, id, raw, err, v)
}

// GetRaw is Get without decoding; nil when there is none.
func (s *Store) GetRaw(ctx context.Context, kind, account, id string) ([]byte, error) {
	var raw []byte
	err := s.r.QueryRowContext(ctx, s.q["get"], kind, account, id).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: get %s/%s/%s: %w", kind, account, id, err)
	}
	return raw, nil
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
	return eachRow(ctx, s.r.QueryContext, fn, s.q["each"], kind)
}

// EachIn is Each restricted to one account.
func (s *Store) EachIn(ctx context.Context, kind, account string, fn func(id string, raw []byte) error) error {
	return eachRow(ctx, s.r.QueryContext, func(_, id string, raw []byte) error { return fn(id, raw) }, s.q["eachIn"], kind, account)
}

// EachIn is Store.EachIn inside the transaction (it sees the transaction's
// own writes). fn must not write to the transaction.
func (tx *Tx) EachIn(kind, account string, fn func(id string, raw []byte) error) error {
	return eachRow(tx.ctx, tx.tx.QueryContext, func(_, id string, raw []byte) error { return fn(id, raw) }, tx.s.q["eachIn"], kind, account)
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
	err := s.r.QueryRowContext(ctx, s.q["seq"], name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("store: read sequence %q: %w", name, err)
	}
	return v, nil
}

// startLock is the session advisory lock key of Exclusive (not writeLock:
// fn's write transactions take that one).
const startLock = 0x72656d657374 // "remest"

// Exclusive runs fn while no other process sharing the database runs an
// Exclusive fn (PostgreSQL: a session advisory lock): what instances
// starting at the same moment on an empty database must not both do, as
// making the first account. On SQLite the data dir's lock already keeps a
// second process out: fn just runs.
func (s *Store) Exclusive(ctx context.Context, fn func() error) error {
	if !s.be.shared() {
		return fn()
	}
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: lock %s: %w", Redact(s.path), err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, int64(startLock)); err != nil {
		return fmt.Errorf("store: lock %s: %w", Redact(s.path), err)
	}
	defer func() {
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(startLock)); err != nil {
			// The connection still holds the lock: it must not go back
			// to the pool.
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	return fn()
}
