package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// Index is a secondary index row: what a listing filters and orders on, or
// an alias (a token, a location) that leads to a document. Several rows
// may lead to one document (the parcels of a carnet), so a row names its
// Owner, the id of the document that holds it. The meaning of S1..S4 and
// I1..I3 is the writing module's; a row is replaced whole by PutIndex.
type Index struct {
	Owner          string // id of the document this row belongs to ("" = the row's own id)
	N              int64  // order key: listings run by N, then id
	S1, S2, S3, S4 string
	I1, I2, I3     int64
}

// PutIndex writes (replaces) the index row (kind, account, id).
func (tx *Tx) PutIndex(kind, account, id string, ix Index) error {
	if ix.Owner == "" {
		ix.Owner = id
	}
	err := tx.exec("putIdx", kind, account, id, ix.Owner, ix.N, ix.S1, ix.S2, ix.S3, ix.S4, ix.I1, ix.I2, ix.I3)
	if err != nil {
		return fmt.Errorf("store: put index %s/%s/%s: %w", kind, account, id, err)
	}
	return nil
}

// DeleteIndex removes the index row (kind, account, id), if any.
func (tx *Tx) DeleteIndex(kind, account, id string) error {
	if err := tx.exec("delIdx", kind, account, id); err != nil {
		return fmt.Errorf("store: delete index %s/%s/%s: %w", kind, account, id, err)
	}
	return nil
}

// GetIndex reads the index row (kind, account, id) inside the transaction.
func (tx *Tx) GetIndex(kind, account, id string) (Index, bool, error) {
	return scanIndex(tx.tx.QueryRowContext(tx.ctx, tx.s.q["getIdx"], kind, account, id), kind, account, id)
}

// GetIndex reads the index row (kind, account, id).
func (s *Store) GetIndex(ctx context.Context, kind, account, id string) (Index, bool, error) {
	return scanIndex(s.r.QueryRowContext(ctx, s.q["getIdx"], kind, account, id), kind, account, id)
}

func scanIndex(row *sql.Row, kind, account, id string) (Index, bool, error) {
	var ix Index
	err := row.Scan(&ix.Owner, &ix.N, &ix.S1, &ix.S2, &ix.S3, &ix.S4, &ix.I1, &ix.I2, &ix.I3)
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
)

var validCols = map[Col]bool{ColN: true, ColS1: true, ColS2: true, ColS3: true, ColS4: true, ColI1: true, ColI2: true, ColI3: true}

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
}

func (s *Store) where(q Query) (string, []any, error) {
	var b strings.Builder
	b.WriteString(" FROM idx WHERE kind = ? AND account = ?")
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
	var n int
	if err := s.r.QueryRowContext(ctx, s.be.rebind("SELECT count(*)"+w), args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count %s: %w", q.Kind, err)
	}
	return n, nil
}

// Find calls fn for each index row q selects, in order (N, id), streaming.
// An error from fn stops it and is returned.
func (s *Store) Find(ctx context.Context, q Query, fn func(id string, ix Index) error) error {
	return s.find(ctx, s.r.QueryContext, q, fn)
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
	sqlq := "SELECT id, owner, n, s1, s2, s3, s4, i1, i2, i3" + w + " ORDER BY n, id"
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
		if err := rows.Scan(&id, &ix.Owner, &ix.N, &ix.S1, &ix.S2, &ix.S3, &ix.S4, &ix.I1, &ix.I2, &ix.I3); err != nil {
			return fmt.Errorf("store: find %s: %w", q.Kind, err)
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
