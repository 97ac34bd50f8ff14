package journal

import (
	"bytes"
	"compress/flate"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"sync"
)

// Reading a page of rows in two steps: ReadPage reads (the rows' columns
// and their chunks' compressed bytes, on the journal's connection, one
// reader at a time) and PageData.Decode decodes (CPU only: chunks,
// results), so that a reader can read the next page while the rows of
// the pages before are decoded on other goroutines. RowsPage is the two
// in turn.

// PageData is a page of rows as the journal stores them, read and not
// decoded yet.
type PageData struct {
	j      *Journal
	c      *codec
	rows   []rawRow
	chunks map[int64]*pageChunk
	once   bool      // Page.Once
	bufs   []*[]byte // the decoded chunks' bytes (once), for Release
}

// rawRow is a row as read: its columns, before decoding.
type rawRow struct {
	r              Row
	info, req, res []byte
	chunk          int64 // the id of its chunk, 0 for none
}

// pageChunk is a chunk a page's rows are in: decoded (from the cache, or
// by Decode) or its compressed bytes.
type pageChunk struct {
	data []byte
	rows map[int]chunkEntry
}

// Len returns how many rows the page has.
func (d *PageData) Len() int { return len(d.rows) }

// Last returns the index of the page's last row, -1 when it has none:
// where the next page starts (Page.After).
func (d *PageData) Last() int {
	if len(d.rows) == 0 {
		return -1
	}
	return d.rows[len(d.rows)-1].r.Index
}

// pageQuery is the SELECT of the rows p selects and its arguments.
func pageQuery(p Page) (string, []any) {
	q := `SELECT idx,key,state,info,req,res,attempts FROM rows WHERE idx > ?`
	args := []any{p.After}
	if p.Before > 0 {
		q += ` AND idx < ?`
		args = append(args, p.Before)
	}
	for _, set := range []struct {
		op     string
		states []string
	}{{"IN", p.Only}, {"NOT IN", p.Not}} {
		if len(set.states) == 0 {
			continue
		}
		q += ` AND state ` + set.op + ` (?` + strings.Repeat(`,?`, len(set.states)-1) + `)`
		for _, s := range set.states {
			args = append(args, s)
		}
	}
	q += ` ORDER BY idx`
	if p.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, p.Limit)
	}
	return q, args
}

// ReadPage reads the rows p selects (as RowsPage) and the chunks they are
// in, without decoding them (PageData.Decode does).
func (j *Journal) ReadPage(ctx context.Context, p Page) (*PageData, error) {
	q, args := pageQuery(p)
	d := &PageData{j: j, c: j.codec.Load(), once: p.Once}
	if p.Limit > 0 {
		d.rows = make([]rawRow, 0, min(p.Limit, 4096))
	}
	// the cursor is read to its end and closed before any chunk is read:
	// the journal has one connection
	rs, err := j.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, wrap("rows", err)
	}
	var state, info, req, res sql.RawBytes
	var a arena
	for rs.Next() {
		d.rows = append(d.rows, rawRow{})
		x := &d.rows[len(d.rows)-1]
		if err := rs.Scan(&x.r.Index, &x.r.Key, &state, &info, &req, &res, &x.r.Attempts); err != nil {
			rs.Close()
			return nil, wrap("rows", err)
		}
		x.r.State = rowState(state)
		x.info, x.req, x.res = a.copy(info), a.copy(req), a.copy(res)
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return nil, wrap("rows", err)
	}
	var last int64
	for i := range d.rows {
		x := &d.rows[i]
		id, ok := chunkOf(x.info)
		if !ok {
			continue
		}
		x.chunk = id
		if id == last {
			continue
		}
		last = id
		if d.chunks == nil {
			d.chunks = map[int64]*pageChunk{}
		}
		if d.chunks[id] != nil {
			continue
		}
		ch := &pageChunk{}
		if !d.once {
			ch.rows = j.cachedRows(id)
		}
		if ch.rows == nil {
			st, err := j.hot(qChunk)
			if err != nil {
				return nil, err
			}
			if err := st.QueryRowContext(ctx, id).Scan(&ch.data); err != nil {
				return nil, wrap(fmt.Sprintf("row %d", x.r.Index), err)
			}
		}
		d.chunks[id] = ch
	}
	return d, nil
}

// Decode returns the page's rows, decoded as Rows decodes them. Pages
// decode on any goroutine, several at once; one page on one at a time.
func (d *PageData) Decode() ([]Row, error) {
	out := make([]Row, len(d.rows))
	for i := range d.rows {
		x := &d.rows[i]
		r := x.r
		var base []byte
		info, req := x.info, x.req
		if x.chunk != 0 {
			e, err := d.entry(x.chunk, r.Index)
			if err != nil {
				return nil, wrap(fmt.Sprintf("row %d", r.Index), err)
			}
			if r.Key, info, err = splitKeyInfo(e.keyInfo); err != nil {
				return nil, wrap(fmt.Sprintf("row %d", r.Index), err)
			}
			base, req = e.keyInfo, e.req
		}
		r.Info, r.Req = info, req
		var err error
		if r.Res, err = d.c.decodeRes(base, x.res); err != nil {
			return nil, wrap(fmt.Sprintf("row %d: resultado", r.Index), err)
		}
		out[i] = r
	}
	d.j.knowChunks(d.rows)
	return out, nil
}

// knowChunks records the chunk of each of rows that is in one (as
// knowChunk does, under one lock).
func (j *Journal) knowChunks(rows []rawRow) {
	j.cmu.Lock()
	defer j.cmu.Unlock()
	for i := range rows {
		idx, id := rows[i].r.Index, rows[i].chunk
		if idx < 0 || id <= 0 || id > 1<<32-1 {
			continue
		}
		if idx >= len(j.rowChunk) {
			j.rowChunk = append(j.rowChunk, make([]uint32, idx+1-len(j.rowChunk))...)
		}
		j.rowChunk[idx] = uint32(id)
	}
}

// entry returns row idx of chunk id, decoding the chunk (once) when it
// was not cached.
func (d *PageData) entry(id int64, idx int) (chunkEntry, error) {
	ch := d.chunks[id]
	if ch.rows == nil && d.once {
		buf, _ := chunkBufs.Get().(*[]byte)
		if buf == nil {
			buf = new([]byte)
		}
		d.bufs = append(d.bufs, buf)
		m, err := decodeChunkInto(d.c, ch.data, buf)
		if err != nil {
			return chunkEntry{}, err
		}
		ch.rows, ch.data = m, nil
	}
	if ch.rows == nil {
		m, err := decodeChunk(d.c, ch.data)
		if err != nil {
			return chunkEntry{}, err
		}
		d.j.cacheRows(id, m, len(ch.data)*8)
		ch.rows, ch.data = m, nil
	}
	e, ok := ch.rows[idx]
	if !ok {
		return chunkEntry{}, fmt.Errorf("linha %d ausente do bloco %d: %w", idx, id, errCorrupt)
	}
	return e, nil
}

// cachedRows returns chunk id's rows when the cache has them (nil when
// not), as used now.
func (j *Journal) cachedRows(id int64) map[int]chunkEntry {
	j.cmu.Lock()
	defer j.cmu.Unlock()
	ch, ok := j.cache[id]
	if !ok {
		return nil
	}
	j.cacheTick++
	ch.used = j.cacheTick
	j.cache[id] = ch
	return ch.rows
}

// cacheRows caches chunk id's decoded rows (about size bytes), unless it
// is cached already, forgetting the chunks used least recently to make
// room.
func (j *Journal) cacheRows(id int64, rows map[int]chunkEntry, size int) {
	j.cmu.Lock()
	defer j.cmu.Unlock()
	if _, dup := j.cache[id]; dup {
		return
	}
	for len(j.cache) > 0 && j.cacheSize+size > chunkCacheB {
		var old int64
		least := ^uint64(0)
		for k, v := range j.cache {
			if v.used < least {
				old, least = k, v.used
			}
		}
		j.cacheSize -= j.cache[old].size
		delete(j.cache, old)
	}
	j.cacheTick++
	j.cache[id] = cachedChunk{rows: rows, size: size, used: j.cacheTick}
	j.cacheSize += size
}

// rowState returns the state b names, without a copy for the known ones.
func rowState(b []byte) string {
	for _, s := range rowStates {
		if string(b) == s {
			return s
		}
	}
	return string(b)
}

var rowStates = [...]string{RowIssued, RowPending, RowRefused, RowDenied, RowSending, RowAmbiguous, RowCreated}

// arena copies the values of a page's rows into a few large buffers
// instead of one each.
type arena struct{ buf []byte }

// copy returns a copy of b (nil for nil: SQL NULL).
func (a *arena) copy(b []byte) []byte {
	if b == nil {
		return nil
	}
	if len(a.buf)+len(b) > cap(a.buf) {
		a.buf = make([]byte, 0, max(32<<10, len(b)))
	}
	n := len(a.buf)
	a.buf = append(a.buf, b...)
	return a.buf[n:len(a.buf):len(a.buf)]
}

// Release gives back the bytes of the chunks a page read with Page.Once
// decoded: none of its rows' values (Info, Req) may be used after.
func (d *PageData) Release() {
	for _, b := range d.bufs {
		if cap(*b) <= 1<<20 {
			chunkBufs.Put(b)
		}
	}
	d.bufs, d.chunks = nil, nil
}

// chunkBufs holds buffers chunks are decoded into (Page.Once).
var chunkBufs sync.Pool // *[]byte

// decodeChunkInto is decodeChunk decoding into *buf (grown as needed):
// the rows it returns are slices of it.
func decodeChunkInto(c *codec, data []byte, buf *[]byte) (map[int]chunkEntry, error) {
	if c == nil {
		return nil, errNoDict
	}
	size, k := binary.Uvarint(data)
	if k <= 0 || size > 1<<30 {
		return nil, errCorrupt
	}
	if uint64(cap(*buf)) < size {
		*buf = make([]byte, size)
	}
	raw := (*buf)[:size]
	src := bytes.NewReader(data[k:])
	fr, _ := readers.Get().(io.ReadCloser)
	if fr == nil {
		fr = flate.NewReaderDict(src, c.dicts[0].b)
	} else if err := fr.(flate.Resetter).Reset(src, c.dicts[0].b); err != nil {
		return nil, err
	}
	_, err := io.ReadFull(fr, raw)
	readers.Put(fr)
	if err != nil {
		return nil, err
	}
	m := make(map[int]chunkEntry, chunkRows)
	next := func() (uint64, bool) {
		v, k := binary.Uvarint(raw)
		if k <= 0 {
			return 0, false
		}
		raw = raw[k:]
		return v, true
	}
	for len(raw) > 0 {
		idx, ok1 := next()
		n, ok2 := next()
		if !ok1 || !ok2 || uint64(len(raw)) < n {
			return nil, errCorrupt
		}
		var e chunkEntry
		e.keyInfo, raw = raw[:n:n], raw[n:]
		n, ok := next()
		if !ok || (n > 0 && uint64(len(raw)) < n-1) {
			return nil, errCorrupt
		}
		if n > 0 {
			e.req, raw = raw[:n-1:n-1], raw[n-1:]
		}
		m[int(idx)] = e
	}
	return m, nil
}
