package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	_ "modernc.org/sqlite" // database/sql driver "sqlite"
)

// Reading a journal back: its metadata, rows (whole or by page, through
// the chunk index and cache), batches, splits and calls.

// Meta returns every metadata value.
func (j *Journal) Meta(ctx context.Context) (map[string]string, error) {
	rs, err := j.db.QueryContext(ctx, `SELECT k, v FROM meta WHERE k NOT LIKE ?`, metaDict+"%")
	if err != nil {
		return nil, wrap("meta", err)
	}
	defer rs.Close()
	m := map[string]string{}
	for rs.Next() {
		var k, v string
		if err := rs.Scan(&k, &v); err != nil {
			return nil, wrap("meta", err)
		}
		m[k] = v
	}
	return m, wrap("meta", rs.Err())
}

// Rows returns every row in input order.
func (j *Journal) Rows(ctx context.Context) ([]Row, error) {
	c := j.codec.Load()
	chunks := map[int64]map[int]chunkEntry{}
	if c != nil {
		cs, err := j.db.QueryContext(ctx, `SELECT id, data FROM chunks`)
		if err != nil {
			return nil, wrap("rows", err)
		}
		for cs.Next() {
			var id int64
			var data []byte
			if err := cs.Scan(&id, &data); err != nil {
				cs.Close()
				return nil, wrap("rows", err)
			}
			if chunks[id], err = decodeChunk(c, data); err != nil {
				cs.Close()
				return nil, wrap(fmt.Sprintf("chunk %d", id), err)
			}
		}
		cs.Close()
		if err := cs.Err(); err != nil {
			return nil, wrap("rows", err)
		}
	}
	rs, err := j.db.QueryContext(ctx, `SELECT idx,key,state,info,req,res,attempts FROM rows ORDER BY idx`)
	if err != nil {
		return nil, wrap("rows", err)
	}
	defer rs.Close()
	var out []Row
	for rs.Next() {
		var r Row
		var info, req, res []byte
		if err := rs.Scan(&r.Index, &r.Key, &r.State, &info, &req, &res, &r.Attempts); err != nil {
			return nil, wrap("rows", err)
		}
		var base []byte
		if id, ok := chunkOf(info); ok {
			e, found := chunks[id][r.Index]
			if !found {
				return nil, wrap(fmt.Sprintf("row %d", r.Index), errCorrupt)
			}
			j.knowChunk(r.Index, id)
			if r.Key, info, err = splitKeyInfo(e.keyInfo); err != nil {
				return nil, wrap(fmt.Sprintf("row %d", r.Index), err)
			}
			base, req = e.keyInfo, e.req
		}
		r.Info, r.Req = info, req
		if r.Res, err = c.decodeRes(base, res); err != nil {
			return nil, wrap(fmt.Sprintf("row %d: resultado", r.Index), err)
		}
		out = append(out, r)
	}
	return out, wrap("rows", rs.Err())
}

// Batches returns every batch in order.
func (j *Journal) Batches(ctx context.Context) ([]Batch, error) {
	rs, err := j.db.QueryContext(ctx, `SELECT num,id,first,end_,state FROM batches ORDER BY num`)
	if err != nil {
		return nil, wrap("batches", err)
	}
	defer rs.Close()
	var out []Batch
	for rs.Next() {
		var b Batch
		if err := rs.Scan(&b.Num, &b.ID, &b.First, &b.End, &b.State); err != nil {
			return nil, wrap("batches", err)
		}
		out = append(out, b)
	}
	return out, wrap("batches", rs.Err())
}

// Splits returns every split configuration.
func (j *Journal) Splits(ctx context.Context) ([]Split, error) {
	rs, err := j.db.QueryContext(ctx, `SELECT key,id,body,state FROM splits ORDER BY key`)
	if err != nil {
		return nil, wrap("splits", err)
	}
	defer rs.Close()
	var out []Split
	for rs.Next() {
		var s Split
		var body string
		if err := rs.Scan(&s.Key, &s.ID, &body, &s.State); err != nil {
			return nil, wrap("splits", err)
		}
		s.Body = json.RawMessage(body)
		out = append(out, s)
	}
	return out, wrap("splits", rs.Err())
}

// CallsOn counts the calls journaled on route during day (any outcome):
// what a daily quota counts.
func (j *Journal) CallsOn(ctx context.Context, route, day string) (int, error) {
	var n int
	err := j.db.QueryRowContext(ctx, `SELECT count(*) FROM calls WHERE route=? AND day=?`, route, day).Scan(&n)
	return n, wrap("calls", err)
}

// CallCounts returns how many calls each route had, by state.
func (j *Journal) CallCounts(ctx context.Context) (map[string]map[string]int, error) {
	rs, err := j.db.QueryContext(ctx, `SELECT route, state, count(*) FROM calls GROUP BY route, state`)
	if err != nil {
		return nil, wrap("calls", err)
	}
	defer rs.Close()
	out := map[string]map[string]int{}
	for rs.Next() {
		var route, state string
		var n int
		if err := rs.Scan(&route, &state, &n); err != nil {
			return nil, wrap("calls", err)
		}
		if out[route] == nil {
			out[route] = map[string]int{}
		}
		out[route][state] = n
	}
	return out, wrap("calls", rs.Err())
}

// Call is one journaled call.
type Call struct {
	Seq                  int64
	Route, Target, State string
	Status               int
	At, DoneAt           time.Time // DoneAt zero while the outcome is not journaled
}

// Calls returns every call in the order they were journaled.
func (j *Journal) Calls(ctx context.Context) ([]Call, error) {
	rs, err := j.db.QueryContext(ctx, `SELECT seq,route,target,state,status,at,done_at FROM calls ORDER BY seq`)
	if err != nil {
		return nil, wrap("calls", err)
	}
	defer rs.Close()
	var out []Call
	for rs.Next() {
		var c Call
		var at string
		var done sql.NullString
		if err := rs.Scan(&c.Seq, &c.Route, &c.Target, &c.State, &c.Status, &at, &done); err != nil {
			return nil, wrap("calls", err)
		}
		c.At, _ = time.Parse(time.RFC3339Nano, at)
		if done.Valid {
			c.DoneAt, _ = time.Parse(time.RFC3339Nano, done.String)
		}
		out = append(out, c)
	}
	return out, wrap("calls", rs.Err())
}

// knowChunk records that row idx is in chunk id.
func (j *Journal) knowChunk(idx int, id int64) {
	if idx < 0 || id <= 0 || id > 1<<32-1 {
		return
	}
	j.cmu.Lock()
	defer j.cmu.Unlock()
	if idx >= len(j.rowChunk) {
		j.rowChunk = append(j.rowChunk, make([]uint32, idx+1-len(j.rowChunk))...)
	}
	j.rowChunk[idx] = uint32(id)
}

// chunkOfRow returns the id of row idx's chunk when it is known.
func (j *Journal) chunkOfRow(idx int) (int64, bool) {
	j.cmu.Lock()
	defer j.cmu.Unlock()
	if idx < 0 || idx >= len(j.rowChunk) || j.rowChunk[idx] == 0 {
		return 0, false
	}
	return int64(j.rowChunk[idx]), true
}

// Page selects rows for RowsPage: those with After < idx < Before (Before
// 0 or less: no upper bound), in a state of Only (none: any) and not in a
// state of Not, at most Limit of them (0: no limit), in input order.
// Once (ReadPage) says the rows are used once, right after Decode: their
// chunks are not cached, and PageData.Release gives their bytes back.
type Page struct {
	After, Before int
	Only, Not     []string
	Limit         int
	Once          bool
}

// RowsPage returns the rows p selects, decoded as Rows does. A run reads
// its rows this way, a window at a time, instead of all of them at once.
func (j *Journal) RowsPage(ctx context.Context, p Page) ([]Row, error) {
	d, err := j.ReadPage(ctx, p)
	if err != nil {
		return nil, err
	}
	return d.Decode()
}

// StateCounts returns how many rows are in each state.
func (j *Journal) StateCounts(ctx context.Context) (map[string]int, error) {
	rs, err := j.db.QueryContext(ctx, `SELECT state, count(*) FROM rows GROUP BY state`)
	if err != nil {
		return nil, wrap("rows", err)
	}
	defer rs.Close()
	out := map[string]int{}
	for rs.Next() {
		var s string
		var n int
		if err := rs.Scan(&s, &n); err != nil {
			return nil, wrap("rows", err)
		}
		out[s] = n
	}
	return out, wrap("rows", rs.Err())
}

// BatchRows returns, for each batch of bs (in order, as Batches returns
// them), the range [first, end) of row indexes its accepted rows lie in:
// a batch's First and End count accepted rows, refused rows between them
// are not part of it. One pass over the rows' indexes.
func (j *Journal) BatchRows(ctx context.Context, bs []Batch) ([][2]int, error) {
	out := make([][2]int, len(bs))
	if len(bs) == 0 {
		return out, nil
	}
	rs, err := j.db.QueryContext(ctx, `SELECT idx FROM rows WHERE state != ? ORDER BY idx`, RowRefused)
	if err != nil {
		return nil, wrap("rows", err)
	}
	defer rs.Close()
	ord, b, last := 0, 0, -1
	for rs.Next() {
		var idx int
		if err := rs.Scan(&idx); err != nil {
			return nil, wrap("rows", err)
		}
		for b < len(bs) && ord >= bs[b].End {
			out[b][1] = last + 1
			b++
		}
		if b < len(bs) && ord == bs[b].First {
			out[b][0] = idx
		}
		last = idx
		ord++
	}
	if err := rs.Err(); err != nil {
		return nil, wrap("rows", err)
	}
	for ; b < len(bs); b++ {
		if ord < bs[b].End {
			return nil, wrap(fmt.Sprintf("batch %d", bs[b].Num), fmt.Errorf("%d linhas aceitas, o lote vai até %d: %w", ord, bs[b].End, errCorrupt))
		}
		out[b][1] = last + 1
	}
	return out, nil
}
