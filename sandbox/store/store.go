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
	"strconv"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "modernc.org/sqlite"             // registers the "sqlite" driver
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
	migrate(ctx context.Context, w *sql.DB) error
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
	if err := s.be.migrate(ctx, s.w); err != nil {
		return fmt.Errorf("store: create schema in %s: %w", Redact(s.path), err)
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
		for _, name := range []string{"put", "putDocIdx", "get", "delete", "unsetDoc", "putIdx", "getIdx", "delIdx", "unsetIdx", "putAlias", "getAlias", "delAlias", "setSeq", "nextSeq"} {
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
	"get": `SELECT json FROM doc WHERE kind = ? AND account = ? AND id = ? AND json IS NOT NULL`,
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
	var err error
	if st := tx.stmt(name); st != nil {
		_, err = st.ExecContext(tx.ctx, args...)
	} else {
		_, err = tx.tx.ExecContext(tx.ctx, tx.s.q[name], args...)
	}
	return err
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

// --- SQLite ---------------------------------------------------------------

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

func (sqliteBackend) migrate(ctx context.Context, w *sql.DB) error {
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
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
		return err
	}
	hasDoc, err := table("doc")
	if err != nil {
		return err
	}
	merged, err := count(`SELECT count(*) FROM pragma_table_info('doc') WHERE name = 'n'`)
	if err != nil {
		return err
	}
	moved := false
	switch {
	case !hasDoc:
		if _, err := tx.ExecContext(ctx, sqliteDocTable); err != nil {
			return err
		}
	case merged == 0:
		// A database of the versions with a table of index rows (idx):
		// documents and index rows move into the new doc.
		stmts := append([]string{sqliteOldIdx, strings.Replace(sqliteDocTable, "TABLE doc", "TABLE doc_new", 1)}, moveIdxSQL...)
		stmts = append(stmts, `DROP TABLE doc`, `DROP TABLE idx`, `ALTER TABLE doc_new RENAME TO doc`)
		for _, q := range stmts {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("move the index rows into doc: %w", err)
			}
		}
		moved = true
	}
	if _, err := tx.ExecContext(ctx, sqliteDocIndexes); err != nil {
		return err
	}
	// A database of an older version still (table docs): its documents
	// move to the new table.
	if old, err := table("docs"); err != nil {
		return err
	} else if old {
		if _, err := tx.ExecContext(ctx, `INSERT INTO doc(kind, account, id, json, updated_at) SELECT kind, account, id, json, updated_at FROM docs`); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DROP TABLE docs`); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil || !moved {
		return err
	}
	// The old tables' pages are free pages of the file now (as big as
	// the copy): give them back, and the WAL the copy went through.
	if _, err := w.ExecContext(ctx, `VACUUM`); err != nil {
		return fmt.Errorf("vacuum after moving the index rows: %w", err)
	}
	_, err = w.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}

func (sqliteBackend) begin(ctx context.Context, w *sql.DB) (*sql.Tx, error) {
	return w.BeginTx(ctx, nil) // BEGIN IMMEDIATE on the one writer connection
}

// --- PostgreSQL ------------------------------------------------------------

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

func (b pgBackend) migrate(ctx context.Context, w *sql.DB) error {
	// Instances starting together would race on CREATE ... IF NOT EXISTS:
	// the schema is made under the writers' lock.
	tx, err := b.begin(ctx, w)
	if err != nil {
		return err
	}
	defer tx.Rollback()
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
	return tx.Commit()
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
