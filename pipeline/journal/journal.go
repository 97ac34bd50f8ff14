// Package journal is the durable record of one run: what each input row is
// to become, every call to the service recorded as intended before it is
// sent and with its result after, and the state of cobv batches and split
// configurations. It is a SQLite file (modernc.org/sqlite, WAL, synchronous
// NORMAL: a committed write survives kill -9 of the process) in the run
// directory; `remessa resume` continues from it.
package journal

import (
	"compress/flate"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // database/sql driver "sqlite"

	"remessa/internal/migrate"
)

// FileName is the journal's file name inside a run directory.
const FileName = "journal.db"

// Row states.
const (
	RowPending   = "pending"   // nothing sent yet
	RowSending   = "sending"   // a creation call was journaled as intended; its outcome is not recorded
	RowCreated   = "created"   // cobv: the batch item is CRIADA; link and copy-and-paste code may still be missing
	RowIssued    = "issued"    // done
	RowDenied    = "denied"    // the service refused it
	RowAmbiguous = "ambiguous" // sent, existence could not be established
	RowRefused   = "refused"   // refused by validation, never sent
)

// Batch states (cobv).
const (
	BatchPending = "pending" // not sent
	BatchSent    = "sent"    // PUT journaled as intended (maybe accepted)
	BatchFinal   = "final"   // every item CRIADA or NEGADA
	BatchDone    = "done"    // split links made and charges fetched
)

// Call states.
const (
	CallIntended = "intended"
	CallOK       = "ok"
	CallFailed   = "failed"  // answered with an error: not processed, or refused
	CallUnknown  = "unknown" // outcome unknown (ambiguous)
)

// Schema is journal.db's tables, step by step (internal/migrate); step 1
// is what the binary of 8e335f2 made, frozen. SchemaPostgres (a run's
// Postgres schema) has the same steps in Postgres's types.
var Schema = migrate.Schema{Name: FileName, Table: "journal_schema_version", Dialect: migrate.SQLite, Steps: []migrate.Step{
	{Name: "linhas, lotes, divisões, chamadas (8e335f2)", SQL: schemaV1},
}}

const schemaV1 = `
CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS rows(
	idx INTEGER PRIMARY KEY,
	key TEXT NOT NULL,
	state TEXT NOT NULL,
	info TEXT NOT NULL,
	req TEXT,
	res TEXT,
	attempts INTEGER NOT NULL DEFAULT 0,
	updated TEXT
);
CREATE TABLE IF NOT EXISTS batches(
	num INTEGER PRIMARY KEY,
	id TEXT NOT NULL,
	first INTEGER NOT NULL,
	end_ INTEGER NOT NULL,
	state TEXT NOT NULL,
	updated TEXT
);
CREATE TABLE IF NOT EXISTS splits(key TEXT PRIMARY KEY, id TEXT NOT NULL, body TEXT NOT NULL, state TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS calls(
	seq INTEGER PRIMARY KEY AUTOINCREMENT,
	route TEXT NOT NULL,
	target TEXT NOT NULL,
	day TEXT NOT NULL,
	state TEXT NOT NULL,
	status INTEGER NOT NULL DEFAULT 0,
	error TEXT,
	at TEXT NOT NULL,
	done_at TEXT
);
CREATE INDEX IF NOT EXISTS calls_route_day ON calls(route, day);
CREATE TABLE IF NOT EXISTS chunks(id INTEGER PRIMARY KEY, data BLOB NOT NULL);
`

// Journal is an open run journal. It is safe for concurrent use; writes are
// serialised by SQLite (one connection).
type Journal struct {
	db    *sql.DB
	path  string
	now   func() time.Time
	smu   sync.Mutex            // guards stmts
	stmts [nHot]*sql.Stmt       // hot statements, prepared once (prepareHot, hot)
	codec atomic.Pointer[codec] // nil in a journal written before values were compressed
	txmu  sync.Mutex            // one Tx at a time, the codec it changes in place when it commits

	fw       *flate.Writer // compresses chunks (under txmu)
	fwDict   *dict
	chunkRaw []byte // a chunk's buffer to fill again (under txmu)

	cmu       sync.Mutex
	cache     map[int64]cachedChunk // decoded chunks
	cacheTick uint64                // counts uses of the cache (cachedChunk.used)
	cacheSize int
	rowChunk  []uint32 // by row index, its chunk's id as far as known (0: not known)
}

// Hot statements: prepared once, before the journal's first transaction
// (prepareHot; a journal opened only to read, as status, the régua and the
// desk's pages do, never parses them), and bound to a transaction once per
// transaction (Tx.stmt), so that a statement run for every row is not
// parsed again for every row (SQL text given to Exec is prepared on each
// call).
const (
	qIntend = iota
	qFinish
	qSetRowRes
	qSetRow
	qAttempt
	qSetAttempt
	qRowInfo
	qAddRow
	qAddChunk
	qChunk
	qSetBatch
	qAddRows // addRowsN rows (batch.go)
	qSetRows // setRowsN rows (batch.go)
	nHot
)

var hotSQL = [nHot]string{
	qIntend:     `INSERT INTO calls(route,target,day,state,at) VALUES(?,?,?,?,?)`,
	qFinish:     `UPDATE calls SET state=?, status=?, error=?, done_at=? WHERE seq=?`,
	qSetRowRes:  `UPDATE rows SET state=?, res=?, updated=? WHERE idx=?`,
	qSetRow:     `UPDATE rows SET state=?, updated=? WHERE idx=?`,
	qAttempt:    `UPDATE rows SET attempts=attempts+1 WHERE idx=?`,
	qSetAttempt: `UPDATE rows SET state=?, attempts=attempts+1, updated=? WHERE idx=?`,
	qRowInfo:    `SELECT info FROM rows WHERE idx=?`,
	qAddRow:     `INSERT INTO rows(idx,key,state,info,req,res,attempts,updated) VALUES(?,?,?,?,?,?,?,?)`,
	qAddChunk:   `INSERT INTO chunks(id,data) VALUES(?,?)`,
	qChunk:      `SELECT data FROM chunks WHERE id=?`,
	qSetBatch:   `UPDATE batches SET state=?, updated=? WHERE num=?`,
	qAddRows:    addRowsSQL(addRowsN),
	qSetRows:    setRowsSQL(setRowsN),
}

// Row is one input row as journaled.
type Row struct {
	Index    int
	Key      string
	State    string
	Info     json.RawMessage // the row's description (results.Row skeleton)
	Req      json.RawMessage // the request to send (nil for refused rows)
	Res      json.RawMessage // what the service answered, as the run keeps it
	Attempts int
}

// Batch is one cobv batch.
type Batch struct {
	Num        int
	ID         string
	First, End int // [First, End) indexes into the accepted rows in input order
	State      string
}

// Split is one Pix split configuration.
type Split struct {
	Key, ID string
	Body    json.RawMessage
	State   string // pending or done
}

// Create makes a new journal at path (which must not exist).
func Create(path string) (*Journal, error) {
	if _, err := os.Stat(path); err == nil {
		return nil, fmt.Errorf("journal: %s já existe", path)
	}
	return open(path)
}

// Open opens an existing journal.
func Open(path string) (*Journal, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	return open(path)
}

func open(path string) (*Journal, error) {
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(10000)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("journal: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	s := Schema
	s.Name = path
	if err := migrate.Up(context.Background(), db, &s); err != nil {
		db.Close()
		return nil, fmt.Errorf("journal: %w", err)
	}
	return newJournal(db, path)
}

// newJournal is the journal on db, whose tables exist (SQLite above; a
// run's schema in Postgres, postgres.go). It closes db when it fails.
func newJournal(db *sql.DB, path string) (*Journal, error) {
	j := &Journal{db: db, path: path, now: time.Now, cache: map[int64]cachedChunk{}}
	c, err := loadCodec(db)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("journal: %s: %w", path, err)
	}
	j.codec.Store(c)
	return j, nil
}

// prepareHot prepares every hot statement not prepared yet. Tx calls it
// before it begins, because the SQLite journal has one connection: a
// statement prepared inside a transaction would wait for that transaction.
func (j *Journal) prepareHot() error {
	j.smu.Lock()
	defer j.smu.Unlock()
	for q := range hotSQL {
		if j.stmts[q] != nil {
			continue
		}
		st, err := j.db.Prepare(hotSQL[q])
		if err != nil {
			return fmt.Errorf("journal: %s: %w", j.path, err)
		}
		j.stmts[q] = st
	}
	return nil
}

// hot is hot statement q, prepared now if no transaction prepared it yet
// (reads outside a transaction).
func (j *Journal) hot(q int) (*sql.Stmt, error) {
	j.smu.Lock()
	defer j.smu.Unlock()
	if j.stmts[q] == nil {
		st, err := j.db.Prepare(hotSQL[q])
		if err != nil {
			return nil, fmt.Errorf("journal: %s: %w", j.path, err)
		}
		j.stmts[q] = st
	}
	return j.stmts[q], nil
}

// stmt is hot statement q bound to tx, bound once per transaction.
func (tx *Tx) stmt(q int) *sql.Stmt {
	if tx.st[q] == nil {
		tx.st[q] = tx.t.Stmt(tx.j.stmts[q])
	}
	return tx.st[q]
}

// exec runs a hot statement inside tx.
func (tx *Tx) exec(q int, args ...any) error {
	_, err := tx.stmt(q).Exec(args...)
	return err
}

// Path returns the journal file path.
func (j *Journal) Path() string { return j.path }

// Close closes the journal.
func (j *Journal) Close() error {
	j.smu.Lock()
	for _, st := range j.stmts {
		if st != nil {
			st.Close()
		}
	}
	j.smu.Unlock()
	return j.db.Close()
}

// SetClock replaces the clock used for timestamps and call days (tests).
func (j *Journal) SetClock(now func() time.Time) { j.now = now }

func (j *Journal) stamp() string { return j.now().UTC().Format(time.RFC3339Nano) }

// rowStamp is a row's update time, Unix milliseconds (journals written
// before kept RFC 3339 text; nothing reads it back).
func (j *Journal) rowStamp() int64 { return j.now().UnixMilli() }

// Tx runs fn in one transaction, committed before Tx returns.
func (j *Journal) Tx(ctx context.Context, fn func(tx *Tx) error) error {
	j.txmu.Lock()
	defer j.txmu.Unlock()
	if err := j.prepareHot(); err != nil {
		return err
	}
	t, err := j.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("journal: begin: %w", err)
	}
	tx := &Tx{t: t, j: j}
	defer tx.stopCompressor() // (already stopped unless fn panicked)
	err = fn(tx)
	if err == nil {
		err = tx.flushChunk()
	}
	if err == nil {
		err = tx.writeChunks(0)
	}
	tx.stopCompressor()
	if err != nil {
		t.Rollback()
		j.dropCache()
		return err
	}
	if err := t.Commit(); err != nil {
		j.dropCache()
		return fmt.Errorf("journal: commit: %w", err)
	}
	if tx.newCodec != nil {
		j.codec.Store(tx.newCodec)
	}
	return nil
}

// Tx is a journal transaction.
type Tx struct {
	t        *sql.Tx
	j        *Journal
	newCodec *codec // the dictionaries with those this transaction wrote, in use once it commits
	chunk    *chunkBuf
	st       [nHot]*sql.Stmt // hot statements bound to t (closed with it)

	// Chunks are compressed by a goroutine of the transaction's (started
	// with its first chunk) while the rows go on being inserted, and
	// inserted, in order, as they come back (writeChunks): zq takes the
	// chunks to compress, pend the chunks sent and not yet inserted.
	zq        chan *zChunk
	zdone     chan struct{} // closed when the compressor has stopped
	pend      []*zChunk
	nextChunk int64    // the id of the next chunk (0: not known yet)
	freeRaw   [][]byte // chunk buffers to fill again
}

// zChunk is a chunk handed to the compressor.
type zChunk struct {
	id   int64
	c    *codec
	raw  []byte
	data []byte
	err  error
	done chan struct{} // closed once data or err is set
}

// maxPendChunks is how many chunks may be compressing or waiting to be
// inserted before a flush waits for the oldest.
const maxPendChunks = 4

// dropCache forgets the decoded chunks (a transaction that wrote one
// rolled back: its id will be used again).
func (j *Journal) dropCache() {
	j.cmu.Lock()
	clear(j.cache)
	j.cacheSize, j.rowChunk = 0, nil
	j.cmu.Unlock()
}

// flushChunk hands the chunk being filled to the compressor, and inserts
// the chunks compressed by then (waiting for the oldest when more than
// maxPendChunks are pending).
func (tx *Tx) flushChunk() error {
	b := tx.chunk
	if b == nil {
		return nil
	}
	tx.chunk = nil
	if tx.zq == nil {
		tx.zq, tx.zdone = make(chan *zChunk, maxPendChunks), make(chan struct{})
		go tx.j.compressor(tx.zq, tx.zdone)
	}
	z := &zChunk{id: b.id, c: tx.codec(), raw: b.raw, done: make(chan struct{})}
	tx.pend = append(tx.pend, z)
	tx.zq <- z
	return tx.writeChunks(maxPendChunks)
}

// compressor compresses the chunks it receives (with the journal's
// writer, which nothing else uses meanwhile) until zq is closed.
func (j *Journal) compressor(zq <-chan *zChunk, done chan<- struct{}) {
	defer close(done)
	for z := range zq {
		z.data, z.err = j.compressChunk(z.c, z.raw)
		close(z.done)
	}
}

// writeChunks inserts the pending chunks that are compressed, in order,
// waiting for the oldest ones until at most keep are pending.
func (tx *Tx) writeChunks(keep int) error {
	for len(tx.pend) > 0 {
		z := tx.pend[0]
		if len(tx.pend) <= keep {
			select {
			case <-z.done:
			default:
				return nil
			}
		}
		<-z.done
		tx.pend = tx.pend[1:]
		tx.freeRaw = append(tx.freeRaw, z.raw[:0]) // compressChunk keeps none of it
		if z.err != nil {
			return wrap("chunk", z.err)
		}
		if err := tx.exec(qAddChunk, z.id, z.data); err != nil {
			return wrap("chunk", err)
		}
	}
	return nil
}

// stopCompressor stops the transaction's compressor, if it started, and
// waits for it (pending chunks not inserted are dropped: the transaction
// rolls back).
func (tx *Tx) stopCompressor() {
	if tx.zq == nil {
		return
	}
	close(tx.zq)
	<-tx.zdone
	tx.zq = nil
	if n := len(tx.freeRaw); n > 0 {
		tx.j.chunkRaw = tx.freeRaw[n-1]
	}
}

// codec is the journal's coder of row values, nil for a journal written
// before they were compressed (its values stay JSON text).
func (tx *Tx) codec() *codec {
	if tx.newCodec != nil {
		return tx.newCodec
	}
	return tx.j.codec.Load()
}

// SetMeta sets a metadata value.
func (tx *Tx) SetMeta(k, v string) error {
	_, err := tx.t.Exec(`INSERT INTO meta(k,v) VALUES(?,?) ON CONFLICT(k) DO UPDATE SET v=excluded.v`, k, v)
	return wrap("meta "+k, err)
}

// AddRow inserts a row. The first row of a new journal also sets the
// journal's dictionary (its meta, in the same transaction): the row's
// values are stored compressed against it (see codec).
func (tx *Tx) AddRow(r Row) error { return tx.AddRows([]Row{r}) }

// SetRow records a row's state and, when res is not nil, its result:
// JSON text, or what PackResult made of it.
func (tx *Tx) SetRow(idx int, state string, res json.RawMessage) error {
	if res == nil {
		return wrapRow(idx, tx.exec(qSetRow, state, tx.j.rowStamp(), idx))
	}
	c := tx.codec()
	if c == nil {
		// a journal written before keeps JSON text (PackResult's columns are not)
		text, err := unpackResult(res)
		if err != nil {
			return wrapRow(idx, err)
		}
		return wrapRow(idx, tx.exec(qSetRowRes, state, string(text), tx.j.rowStamp(), idx))
	}
	v, err := tx.resArg(c, idx, res)
	if err != nil {
		return err
	}
	return wrapRow(idx, tx.exec(qSetRowRes, state, v, tx.j.rowStamp(), idx))
}

// resArg is what the res column of row idx stores of res, compressed
// against c and the row's key and description.
func (tx *Tx) resArg(c *codec, idx int, res json.RawMessage) (any, error) {
	id, ok := tx.j.chunkOfRow(idx)
	if !ok {
		var info []byte
		if err := tx.stmt(qRowInfo).QueryRow(idx).Scan(&info); err != nil {
			return nil, wrapRow(idx, err)
		}
		if id, ok = chunkOf(info); ok {
			tx.j.knowChunk(idx, id)
		}
	}
	var base []byte
	if ok {
		if tx.chunk != nil && tx.chunk.id == id {
			if err := tx.flushChunk(); err != nil {
				return nil, err
			}
		}
		if err := tx.writeChunks(0); err != nil { // the chunk may be one of them
			return nil, err
		}
		e, err := tx.j.chunkEntry(tx.stmt(qChunk), c, id, idx)
		if err != nil {
			return nil, wrapRow(idx, err)
		}
		base = e.keyInfo
	}
	return tx.encodeRes(c, base, res), nil
}

// SetRowAttempt records a row's state and counts one creation attempt.
func (tx *Tx) SetRowAttempt(idx int, state string) error {
	return wrap(fmt.Sprintf("row %d", idx), tx.exec(qSetAttempt, state, tx.j.rowStamp(), idx))
}

// CountAttempt adds one to a row's creation attempts.
func (tx *Tx) CountAttempt(idx int) error {
	return wrap(fmt.Sprintf("row %d", idx), tx.exec(qAttempt, idx))
}

// AddBatch inserts a batch.
func (tx *Tx) AddBatch(b Batch) error {
	_, err := tx.t.Exec(`INSERT INTO batches(num,id,first,end_,state,updated) VALUES(?,?,?,?,?,?)`, b.Num, b.ID, b.First, b.End, b.State, tx.j.stamp())
	return wrap(fmt.Sprintf("batch %d", b.Num), err)
}

// SetBatch records a batch's state.
func (tx *Tx) SetBatch(num int, state string) error {
	return wrap(fmt.Sprintf("batch %d", num), tx.exec(qSetBatch, state, tx.j.stamp(), num))
}

// AddSplit inserts a split configuration.
func (tx *Tx) AddSplit(s Split) error {
	_, err := tx.t.Exec(`INSERT INTO splits(key,id,body,state) VALUES(?,?,?,?)`, s.Key, s.ID, string(s.Body), s.State)
	return wrap("split "+s.ID, err)
}

// SetSplit records a split configuration's state.
func (tx *Tx) SetSplit(key, state string) error {
	_, err := tx.t.Exec(`UPDATE splits SET state=? WHERE key=?`, state, key)
	return wrap("split "+key, err)
}

// Intend records a call as intended and returns its sequence number.
func (tx *Tx) Intend(route, target string) (int64, error) {
	now := tx.j.now()
	res, err := tx.stmt(qIntend).Exec(route, target, Day(now), CallIntended, now.UTC().Format(time.RFC3339Nano))
	if err != nil {
		return 0, wrap("call "+route, err)
	}
	return res.LastInsertId()
}

// Withdraw removes call seq, journaled as intended and never sent (a run
// journals a few intents ahead of their calls and withdraws those it does
// not send when it stops). A call no longer intended is left as it is.
func (tx *Tx) Withdraw(seq int64) error {
	_, err := tx.t.Exec(`DELETE FROM calls WHERE seq=? AND state=?`, seq, CallIntended)
	return wrap(fmt.Sprintf("call %d", seq), err)
}

// Finish records the outcome of call seq.
func (tx *Tx) Finish(seq int64, state string, status int, errText string) error {
	return wrap(fmt.Sprintf("call %d", seq), tx.exec(qFinish, state, status, nullStr(errText), tx.j.stamp(), seq))
}

// Day is the São Paulo civil date of t, the unit of daily quotas.
func Day(t time.Time) string {
	return t.In(time.FixedZone("America/Sao_Paulo", -3*3600)).Format("2006-01-02")
}

// AbandonIntended marks the calls still "intended" — left by a process
// that stopped between journaling a call and journaling its outcome — as
// "unknown", and returns how many there were. Call it only while no other
// process works on the journal.
func (j *Journal) AbandonIntended(ctx context.Context) (int64, error) {
	res, err := j.db.ExecContext(ctx, `UPDATE calls SET state=?, error=? WHERE state=?`, CallUnknown, "processo interrompido antes da resposta", CallIntended)
	if err != nil {
		return 0, wrap("calls", err)
	}
	return res.RowsAffected()
}

// wrapRow is wrap for row idx (the text is made only for an error).
func wrapRow(idx int, err error) error {
	if err == nil {
		return nil
	}
	return wrap(fmt.Sprintf("row %d", idx), err)
}

func wrap(what string, err error) error {
	if err == nil {
		return err
	}
	return fmt.Errorf("journal: %s: %w", what, err)
}

func nullable(b json.RawMessage) any {
	if b == nil {
		return nil
	}
	return string(b)
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}
