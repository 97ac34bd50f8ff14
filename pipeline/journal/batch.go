package journal

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// Rows written many at a time. Each statement SQLite runs costs about a
// microsecond besides its row's work (binding, stepping, resetting, and
// database/sql's own): AddRows inserts addRowsN rows with one INSERT, and
// SetRows sets setRowsN rows' states and results with one UPDATE … FROM
// (VALUES …), the same SQL on both backends (CAST … AS BLOB is bytea in
// Postgres, postgres.go). At 1,000 rows a batch, about 1 µs a row less
// for each.
const (
	addRowsN = 128
	setRowsN = 100
)

func addRowsSQL(n int) string {
	return `INSERT INTO rows(idx,key,state,info,req,res,attempts,updated) VALUES ` +
		strings.TrimSuffix(strings.Repeat(`(?,?,?,?,?,?,?,?),`, n), ",")
}

// setRowsSQL sets n rows: the first argument is the time, then each row's
// index, state and result. Postgres types a VALUES list's columns from
// its values, hence the casts (no-ops in SQLite).
func setRowsSQL(n int) string {
	return `UPDATE rows SET state=v.column2, res=v.column3, updated=? FROM (VALUES ` +
		strings.TrimSuffix(strings.Repeat(`(CAST(? AS INTEGER),CAST(? AS TEXT),CAST(? AS BLOB)),`, n), ",") +
		`) AS v WHERE rows.idx=v.column1`
}

// argsPool holds the argument lists of AddRows and SetRows.
var argsPool = sync.Pool{New: func() any { return new([]any) }}

// putArgs gives back an argument list, holding none of its values.
func putArgs(ap *[]any) {
	clear((*ap)[:cap(*ap)])
	*ap = (*ap)[:0]
	argsPool.Put(ap)
}

// AddRows inserts rows, in order, as AddRow does each.
func (tx *Tx) AddRows(rows []Row) error {
	ap := argsPool.Get().(*[]any)
	defer putArgs(ap)
	args := (*ap)[:0]
	first := 0 // the index in rows of the first row in args
	insert := func(end int) error {
		n := len(args) / 8
		var err error
		switch n {
		case 0:
			return nil
		case 1:
			err = tx.exec(qAddRow, args...)
		case addRowsN:
			err = tx.exec(qAddRows, args...)
		default:
			_, err = tx.t.Exec(addRowsSQL(n), args...)
		}
		if err != nil {
			return wrap(fmt.Sprintf("rows %d..%d", rows[first].Index, rows[end-1].Index), err)
		}
		args, first = args[:0], end
		return nil
	}
	for i, r := range rows {
		c := tx.codec()
		if c == nil {
			var n int
			if err := tx.t.QueryRow(`SELECT count(*) FROM rows`).Scan(&n); err != nil {
				return wrapRow(r.Index, err)
			}
			if n > 0 { // a journal written before: its rows stay JSON text
				if err := tx.exec(qAddRow, r.Index, r.Key, r.State, string(r.Info), nullable(r.Req), nullable(r.Res), r.Attempts, tx.j.rowStamp()); err != nil {
					return wrapRow(r.Index, err)
				}
				first = i + 1
				continue
			}
			var err error
			if c, err = tx.addDict(nil, newDict(r)); err != nil {
				return wrapRow(r.Index, err)
			}
		}
		if tx.chunk == nil {
			if tx.nextChunk == 0 {
				// the chunks pending are not in the table yet: their ids are counted here
				if err := tx.t.QueryRow(`SELECT ifnull(max(id),0)+1 FROM chunks`).Scan(&tx.nextChunk); err != nil {
					return wrapRow(r.Index, err)
				}
			}
			raw := tx.j.chunkRaw
			tx.j.chunkRaw = nil
			if n := len(tx.freeRaw); n > 0 {
				raw, tx.freeRaw = tx.freeRaw[n-1], tx.freeRaw[:n-1]
			}
			tx.chunk = &chunkBuf{id: tx.nextChunk, raw: raw}
			tx.nextChunk++
		}
		tx.chunk.add(r.Index, r.Key, r.Info, r.Req)
		var base []byte // the row's key and description, for its result
		if r.Res != nil {
			base = keyInfo(r.Key, r.Info)
		}
		info := binary.AppendUvarint([]byte{fmtChunk}, uint64(tx.chunk.id))
		args = append(args, r.Index, "", r.State, info, nil, tx.encodeRes(c, base, r.Res), r.Attempts, tx.j.rowStamp())
		tx.j.knowChunk(r.Index, tx.chunk.id)
		if len(args) == 8*addRowsN {
			if err := insert(i + 1); err != nil {
				return err
			}
		}
		if tx.chunk.n >= chunkRows {
			if err := tx.flushChunk(); err != nil {
				return err
			}
		}
	}
	err := insert(len(rows))
	*ap = args
	return err
}

// RowSet is a row's new state and result, for SetRows.
type RowSet struct {
	Idx   int
	State string
	Res   json.RawMessage // as SetRow's res; nil keeps the row's result
}

// SetRows sets rows' states and results as SetRow does each, in order.
func (tx *Tx) SetRows(rows []RowSet) error {
	c := tx.codec()
	if c == nil || len(rows) < 2 || !uniqueRows(rows) {
		// a journal written before, or a row set twice (the last one
		// wins, which one UPDATE would not say)
		for _, r := range rows {
			if err := tx.SetRow(r.Idx, r.State, r.Res); err != nil {
				return err
			}
		}
		return nil
	}
	ap := argsPool.Get().(*[]any)
	defer putArgs(ap)
	args := (*ap)[:0]
	var from int // the index of the first row in args
	update := func() error {
		n := (len(args) - 1) / 3
		var err error
		switch n {
		case 0:
			return nil
		case 1:
			err = tx.exec(qSetRowRes, args[2], args[3], args[0], args[1])
		case setRowsN:
			err = tx.exec(qSetRows, args...)
		default:
			_, err = tx.t.Exec(setRowsSQL(n), args...)
		}
		if err != nil {
			return wrap(fmt.Sprintf("rows %d..", from), err)
		}
		args = args[:0]
		return nil
	}
	for _, r := range rows {
		if r.Res == nil {
			if err := tx.SetRow(r.Idx, r.State, nil); err != nil {
				return err
			}
			continue
		}
		v, err := tx.resArg(tx.codec(), r.Idx, r.Res) // (a result may add a dictionary)
		if err != nil {
			return err
		}
		if len(args) == 0 {
			args, from = append(args, tx.j.rowStamp()), r.Idx
		}
		args = append(args, r.Idx, r.State, v)
		if len(args) == 1+3*setRowsN {
			if err := update(); err != nil {
				return err
			}
		}
	}
	err := update()
	*ap = args
	return err
}

// uniqueRows says whether no row is in rows twice.
func uniqueRows(rows []RowSet) bool {
	sorted := true
	for i := 1; i < len(rows) && sorted; i++ {
		sorted = rows[i].Idx > rows[i-1].Idx
	}
	if sorted {
		return true
	}
	seen := make(map[int]bool, len(rows))
	for _, r := range rows {
		if seen[r.Idx] {
			return false
		}
		seen[r.Idx] = true
	}
	return true
}
