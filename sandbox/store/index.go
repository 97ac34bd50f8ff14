package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
)

// Index is a secondary index row: what a listing filters and orders on.
// Queries are served by two indexes: (N, id) with the S columns and I2..I4, and
// (I1, N, id) for an equality or range on I1 (a batch, a day). Several rows
// may lead to one document (the parcels of a carnet), so a row names its
// Owner, the id of the document that holds it. The meaning of S1..S4 and
// I1..I3 is the writing module's; a row is replaced whole by PutIndex.
type Index struct {
	Owner          string // id of the document this row belongs to ("" on write = the row's own id)
	N              int64  // order key: listings run by N, then id
	S1, S2, S3, S4 string
	I1, I2, I3, I4 int64
}

// PutIndex writes (replaces) the index row (kind, account, id).
func (tx *Tx) PutIndex(kind, account, id string, ix Index) error {
	if ix.Owner == id || ix.Owner == "" {
		ix.Owner = "" // stored empty: most rows are their own document's
	}
	err := tx.exec("putIdx", kind, account, id, tx.now, ix.Owner, ix.N, ix.S1, ix.S2, ix.S3, ix.S4, ix.I1, ix.I2, ix.I3, ix.I4)
	if err != nil {
		return fmt.Errorf("store: put index %s/%s/%s: %w", kind, account, id, err)
	}
	tx.touch(kind, account)
	return nil
}

// putRawIndexed is PutRaw and PutIndex of the same key in one statement.
func (tx *Tx) putRawIndexed(kind, account, id string, raw []byte, ix Index) error {
	if ix.Owner == id {
		ix.Owner = ""
	}
	err := tx.exec("putDocIdx", kind, account, id, raw, tx.now, ix.Owner, ix.N, ix.S1, ix.S2, ix.S3, ix.S4, ix.I1, ix.I2, ix.I3, ix.I4)
	if err != nil {
		return fmt.Errorf("store: put %s/%s/%s with its index row: %w", kind, account, id, err)
	}
	tx.markWritten(kind, account, id)
	tx.touch(kind, account)
	return nil
}

// touch bumps, once the transaction commits, the version of the index rows
// of (kind, account) that cached counts and page cursors are checked
// against.
func (tx *Tx) touch(kind, account string) {
	if tx.s.lists == nil {
		return
	}
	k := kind + "\x00" + account
	if tx.touched == nil {
		tx.touched = map[string]bool{}
	}
	if tx.touched[k] {
		return
	}
	tx.touched[k] = true
	tx.OnCommit(func() { tx.s.lists.bump(k) })
}

// listCache remembers, for a single-process store, the counts and the
// keys at page boundaries of recent queries, valid while no index row of
// their kind and account changes: paging through 100,000 rows by offset
// then costs one seek per page instead of skipping every row before it.
type listCache struct {
	mu      sync.Mutex
	ver     map[string]uint64
	counts  map[string][2]uint64 // query -> version, count
	cursors map[string]cursor    // query + offset -> key of the row at that offset
}

type cursor struct {
	ver uint64
	n   int64
	id  string
}

const maxListCache = 4096

func newListCache() *listCache {
	return &listCache{ver: map[string]uint64{}, counts: map[string][2]uint64{}, cursors: map[string]cursor{}}
}

func (l *listCache) bump(k string) {
	l.mu.Lock()
	l.ver[k]++
	l.mu.Unlock()
}

func (l *listCache) version(q Query) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ver[q.Kind+"\x00"+q.Account]
}

func querySig(q Query) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q %q", q.Kind, q.Account)
	for _, c := range q.Where {
		fmt.Fprintf(&b, " %s %v %v %d %d", c.Col, c.Eq, c.Range, c.Lo, c.Hi)
	}
	return b.String()
}

// IndexRow is one row of PutIndexes.
type IndexRow struct {
	ID string
	Index
}

// PutIndexes writes (replaces) several index rows of (kind, account) in a
// few statements.
func (tx *Tx) PutIndexes(kind, account string, rows []IndexRow) error {
	if tx.s.stmts != nil {
		// SQLite: the statement prepared once, row by row, costs less than
		// compiling a multi-row one for every call, and a single-row
		// statement needs no statement journal (a multi-row one copies
		// every page it changes there, in case a later row fails).
		for _, r := range rows {
			if err := tx.PutIndex(kind, account, r.ID, r.Index); err != nil {
				return err
			}
		}
		return nil
	}
	const per = 50
	for len(rows) > 0 {
		part := rows[:min(len(rows), per)]
		rows = rows[len(part):]
		args := make([]any, 0, 14*len(part))
		for _, r := range part {
			owner := r.Owner
			if owner == r.ID {
				owner = ""
			}
			args = append(args, kind, account, r.ID, tx.now, owner, r.N, r.S1, r.S2, r.S3, r.S4, r.I1, r.I2, r.I3, r.I4)
		}
		q := tx.s.be.rebind("INSERT INTO doc(kind, account, id, updated_at, " + idxCols + ") VALUES " + values(len(part), 14) +
			" ON CONFLICT(kind, account, id) DO UPDATE SET " + idxSet)
		if _, err := tx.execSQL(q, args...); err != nil {
			return fmt.Errorf("store: put indexes %s/%s: %w", kind, account, err)
		}
	}
	tx.touch(kind, account)
	return nil
}

// DeleteIndex removes the index row (kind, account, id), if any.
func (tx *Tx) DeleteIndex(kind, account, id string) error {
	err := tx.exec("delIdx", kind, account, id)
	if err == nil {
		err = tx.exec("unsetIdx", kind, account, id)
	}
	if err != nil {
		return fmt.Errorf("store: delete index %s/%s/%s: %w", kind, account, id, err)
	}
	tx.touch(kind, account)
	return nil
}

// GetIndex reads the index row (kind, account, id) inside the transaction.
func (tx *Tx) GetIndex(kind, account, id string) (Index, bool, error) {
	return scanIndex(tx.queryRow("getIdx", kind, account, id), kind, account, id)
}

// GetIndex reads the index row (kind, account, id).
func (s *Store) GetIndex(ctx context.Context, kind, account, id string) (Index, bool, error) {
	return scanIndex(s.r.QueryRowContext(ctx, s.q["getIdx"], kind, account, id), kind, account, id)
}

func scanIndex(row *sql.Row, kind, account, id string) (Index, bool, error) {
	var ix Index
	err := row.Scan(&ix.Owner, &ix.N, &ix.S1, &ix.S2, &ix.S3, &ix.S4, &ix.I1, &ix.I2, &ix.I3, &ix.I4)
	if ix.Owner == "" {
		ix.Owner = id
	}
	if errors.Is(err, sql.ErrNoRows) {
		return Index{}, false, nil
	}
	if err != nil {
		return Index{}, false, fmt.Errorf("store: get index %s/%s/%s: %w", kind, account, id, err)
	}
	return ix, true, nil
}

// Col names a filterable column of the index rows.
type Col string

// Index columns.
const (
	ColN  Col = "n"
	ColS1 Col = "s1"
	ColS2 Col = "s2"
	ColS3 Col = "s3"
	ColS4 Col = "s4"
	ColI1 Col = "i1"
	ColI2 Col = "i2"
	ColI3 Col = "i3"
	ColI4 Col = "i4"
)

var validCols = map[Col]bool{ColN: true, ColS1: true, ColS2: true, ColS3: true, ColS4: true, ColI1: true, ColI2: true, ColI3: true, ColI4: true}

// Cond is one condition of a Query: Col = Eq, or Lo <= Col <= Hi when
// Range is set (integer columns).
type Cond struct {
	Col    Col
	Eq     any
	Range  bool
	Lo, Hi int64
}

// Eq is the condition col = v.
func Eq(col Col, v any) Cond { return Cond{Col: col, Eq: v} }

// Between is the condition lo <= col <= hi.
func Between(col Col, lo, hi int64) Cond { return Cond{Col: col, Range: true, Lo: lo, Hi: hi} }

// Query selects index rows of one kind and account, ordered by N then id.
type Query struct {
	Kind, Account string
	Where         []Cond
	Offset, Limit int // Limit 0 = no limit
	// Keys makes Find read only each row's id and N (the other fields of
	// the Index it hands out are zero, Owner is the id): an index that
	// holds the conditions' columns then serves the query alone, without
	// a look-up of each row (a batch's charges by (i1, n) read 1,000
	// entries of doc_i1 instead of also seeking 1,000 rows scattered
	// across the table).
	Keys bool

	after *cursor // start at this key instead of Offset (Store.Find's page cursors)
}

func (s *Store) where(q Query) (string, []any, error) {
	var b strings.Builder
	b.WriteString(" FROM doc WHERE kind = ? AND account = ? AND n IS NOT NULL")
	args := []any{q.Kind, q.Account}
	for _, c := range q.Where {
		if !validCols[c.Col] {
			return "", nil, fmt.Errorf("store: query on unknown column %q", c.Col)
		}
		if c.Range {
			b.WriteString(" AND " + string(c.Col) + " BETWEEN ? AND ?")
			args = append(args, c.Lo, c.Hi)
		} else {
			b.WriteString(" AND " + string(c.Col) + " = ?")
			args = append(args, c.Eq)
		}
	}
	return b.String(), args, nil
}

// Count counts the index rows q selects (Offset and Limit ignored).
func (s *Store) Count(ctx context.Context, q Query) (int, error) {
	w, args, err := s.where(q)
	if err != nil {
		return 0, err
	}
	var sig string
	var ver uint64
	if s.lists != nil {
		sig, ver = querySig(q), s.lists.version(q)
		s.lists.mu.Lock()
		c, ok := s.lists.counts[sig]
		s.lists.mu.Unlock()
		if ok && c[0] == ver {
			return int(c[1]), nil
		}
	}
	var n int
	if err := s.r.QueryRowContext(ctx, s.be.rebind("SELECT count(*)"+w), args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count %s: %w", q.Kind, err)
	}
	if s.lists != nil {
		s.lists.mu.Lock()
		if len(s.lists.counts) >= maxListCache {
			s.lists.counts = map[string][2]uint64{}
		}
		s.lists.counts[sig] = [2]uint64{ver, uint64(n)}
		s.lists.mu.Unlock()
	}
	return n, nil
}

// Find calls fn for each index row q selects, in order (N, id), streaming.
// An error from fn stops it and is returned.
func (s *Store) Find(ctx context.Context, q Query, fn func(id string, ix Index) error) error {
	if s.lists == nil || q.Limit <= 0 {
		return s.find(ctx, s.r.QueryContext, q, fn)
	}
	// A page: start from the remembered key at its offset when the rows
	// have not changed since, and remember the next page's.
	sig, ver := querySig(q), s.lists.version(q)
	s.lists.mu.Lock()
	cur, ok := s.lists.cursors[sig+" @"+strconv.Itoa(q.Offset)]
	s.lists.mu.Unlock()
	paged := q
	paged.Limit++
	if ok && cur.ver == ver {
		paged.Offset = 0
		paged.after = &cur
		// The seek starts at the cursor's N (SQLite picks one range on n).
		paged.Where = append([]Cond(nil), q.Where...)
		ranged := false
		for i, c := range paged.Where {
			if c.Col == ColN && c.Range {
				paged.Where[i].Lo = max(c.Lo, cur.n)
				ranged = true
			}
		}
		if !ranged {
			paged.Where = append(paged.Where, Between(ColN, cur.n, math.MaxInt64))
		}
	}
	seen := 0
	err := s.find(ctx, s.r.QueryContext, paged, func(id string, ix Index) error {
		seen++
		if seen > q.Limit {
			s.lists.mu.Lock()
			if len(s.lists.cursors) >= maxListCache {
				s.lists.cursors = map[string]cursor{}
			}
			s.lists.cursors[sig+" @"+strconv.Itoa(q.Offset+q.Limit)] = cursor{ver: ver, n: ix.N, id: id}
			s.lists.mu.Unlock()
			return nil
		}
		return fn(id, ix)
	})
	return err
}

// Find is Store.Find inside the transaction. fn must not write to it.
func (tx *Tx) Find(q Query, fn func(id string, ix Index) error) error {
	return tx.s.find(tx.ctx, tx.tx.QueryContext, q, fn)
}

func (s *Store) find(ctx context.Context, query func(context.Context, string, ...any) (*sql.Rows, error), q Query, fn func(id string, ix Index) error) error {
	w, args, err := s.where(q)
	if err != nil {
		return err
	}
	if q.after != nil {
		w += " AND (n > ? OR id >= ?)" // n >= after.n is among the conditions
		args = append(args, q.after.n, q.after.id)
	}
	cols := "SELECT id, owner, n, s1, s2, s3, s4, i1, i2, i3, i4"
	if q.Keys {
		cols = "SELECT id, n"
	}
	sqlq := cols + w + " ORDER BY n, id"
	if q.Limit > 0 {
		sqlq += fmt.Sprintf(" LIMIT %d", q.Limit)
	}
	if q.Offset > 0 {
		if q.Limit <= 0 {
			sqlq += " LIMIT -1"
			if s.be.name() == "postgres" {
				sqlq = strings.TrimSuffix(sqlq, " LIMIT -1") + " LIMIT ALL"
			}
		}
		sqlq += fmt.Sprintf(" OFFSET %d", q.Offset)
	}
	rows, err := query(ctx, s.be.rebind(sqlq), args...)
	if err != nil {
		return fmt.Errorf("store: find %s: %w", q.Kind, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var ix Index
		var err error
		if q.Keys {
			err = rows.Scan(&id, &ix.N)
		} else {
			err = rows.Scan(&id, &ix.Owner, &ix.N, &ix.S1, &ix.S2, &ix.S3, &ix.S4, &ix.I1, &ix.I2, &ix.I3, &ix.I4)
		}
		if err != nil {
			return fmt.Errorf("store: find %s: %w", q.Kind, err)
		}
		if ix.Owner == "" {
			ix.Owner = id
		}
		if err := fn(id, ix); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: find %s: %w", q.Kind, err)
	}
	return nil
}

// maxIn is the most ids one IN (...) query carries.
const maxIn = 500

func inList(n int) string {
	return "(" + strings.TrimSuffix(strings.Repeat("?,", n), ",") + ")"
}

// GetIndexes reads the index rows (kind, account, id) of ids inside the
// transaction, in a few queries; ids without one are absent from the map.
func (tx *Tx) GetIndexes(kind, account string, ids []string) (map[string]Index, error) {
	out := make(map[string]Index, len(ids))
	for len(ids) > 0 {
		part := ids[:min(len(ids), maxIn)]
		ids = ids[len(part):]
		args := []any{kind, account}
		for _, id := range part {
			args = append(args, id)
		}
		q := tx.s.be.rebind("SELECT id, " + idxCols + " FROM doc WHERE kind = ? AND account = ? AND n IS NOT NULL AND id IN " + inList(len(part)))
		rows, err := tx.querySQL(q, args...)
		if err != nil {
			return nil, fmt.Errorf("store: get indexes %s/%s: %w", kind, account, err)
		}
		for rows.Next() {
			var id string
			var ix Index
			if err := rows.Scan(&id, &ix.Owner, &ix.N, &ix.S1, &ix.S2, &ix.S3, &ix.S4, &ix.I1, &ix.I2, &ix.I3, &ix.I4); err != nil {
				rows.Close()
				return nil, fmt.Errorf("store: get indexes %s/%s: %w", kind, account, err)
			}
			if ix.Owner == "" {
				ix.Owner = id
			}
			out[id] = ix
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("store: get indexes %s/%s: %w", kind, account, err)
		}
	}
	return out, nil
}

// DeleteIndexes removes the index rows (kind, account, id) of ids.
func (tx *Tx) DeleteIndexes(kind, account string, ids []string) error {
	if tx.s.stmts != nil { // SQLite: row by row (see PutIndexes)
		for _, id := range ids {
			if err := tx.DeleteIndex(kind, account, id); err != nil {
				return err
			}
		}
		return nil
	}
	for len(ids) > 0 {
		part := ids[:min(len(ids), maxIn)]
		ids = ids[len(part):]
		args := []any{kind, account}
		for _, id := range part {
			args = append(args, id)
		}
		in := inList(len(part))
		for _, q := range []string{
			"DELETE FROM doc WHERE kind = ? AND account = ? AND json IS NULL AND id IN " + in,
			"UPDATE doc SET owner = NULL, n = NULL, s1 = NULL, s2 = NULL, s3 = NULL, s4 = NULL, i1 = NULL, i2 = NULL, i3 = NULL, i4 = NULL" +
				" WHERE kind = ? AND account = ? AND json IS NOT NULL AND id IN " + in,
		} {
			if _, err := tx.execSQL(tx.s.be.rebind(q), args...); err != nil {
				return fmt.Errorf("store: delete indexes %s/%s: %w", kind, account, err)
			}
		}
	}
	tx.touch(kind, account)
	return nil
}

// getRawMany reads the documents (kind, account, id) of ids, through q
// (a reader or a transaction), in a few queries.
func (s *Store) getRawMany(ctx context.Context, query func(context.Context, string, ...any) (*sql.Rows, error),
	kind, account string, ids []string, fn func(id string, raw []byte) error) error {
	for len(ids) > 0 {
		part := ids[:min(len(ids), maxIn)]
		ids = ids[len(part):]
		args := []any{kind, account}
		for _, id := range part {
			args = append(args, id)
		}
		q := s.be.rebind("SELECT account, id, json FROM doc WHERE kind = ? AND account = ? AND json IS NOT NULL AND id IN " + inList(len(part)))
		if err := eachRow(ctx, query, func(_, id string, raw []byte) error { return fn(id, raw) }, q, args...); err != nil {
			return err
		}
	}
	return nil
}
