package journal

import (
	"bytes"
	"compress/flate"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// How row values are stored. A journal keeps a few dictionaries in its
// meta (metaDict, metaDict.1, …). The first is written with its first
// row: a primer of the JSON the run stores, then that row's key,
// description and request. Each row's key and description are stored
// together, compressed against the newest dictionary; its request and
// result are compressed against a dictionary followed by the row's key
// and description (which they mostly repeat). A result that compresses
// poorly (it holds what the service answered, which no dictionary had
// yet) makes a new dictionary, the first one followed by that result,
// written in the same transaction; at most maxDicts.
//
// A compressed value is a BLOB: fmtLZ (a byte no JSON text starts with),
// the number of its dictionary (uvarint), the LZ coding (lz.go). A journal
// written before (no dictionary, values as JSON text, the key in its own
// column) reads and resumes as it is, and goes on being written that way.
const (
	metaDict = "journal.dict"
	fmtLZ    = 0x01
	fmtLZHex = 0x03 // fmtLZ of the value with its runs of hex digits packed (hex.go)
	maxDicts = 4
)

// dictPrimer starts every dictionary: what results the run stores look
// like before the first row's own values.
const dictPrimer = `{"outcome":"issued","batch_id":"","pix_copia_e_cola":"00020101021226","location":"","link":"https://",` +
	`"pdf":"https://","cover":"https://","typed_line":"","barcode":"","carnet_id":,"charge_ids":[],` +
	`"parcels":[{"number":1,"charge_id":,"due_date":"","value_cents":,"status":"waiting","typed_line":"","barcode":"",` +
	`"pix_copia_e_cola":"","link":"https://"}],"custom_id":"rm-","problems":[{"code":"","message":""}]}`

// codec is a journal's dictionaries; it does not change once in use.
type codec struct{ dicts []*dict }

type dict struct {
	b []byte
	t lzTable // positions of b
}

var (
	tables  = sync.Pool{New: func() any { return new(lzWork) }}
	readers sync.Pool // flate readers of chunks
)

func newDictOf(b []byte) *dict {
	d := &dict{b: b}
	d.t.index(b, 0, len(b))
	return d
}

// with is c and the dictionary b.
func (c *codec) with(b []byte) *codec {
	var n codec
	if c != nil {
		n.dicts = append(n.dicts, c.dicts...)
	}
	n.dicts = append(n.dicts, newDictOf(b))
	return &n
}

func dictKey(n int) string {
	if n == 0 {
		return metaDict
	}
	return metaDict + "." + strconv.Itoa(n)
}

// loadCodec reads a journal's dictionaries; nil when it has none.
func loadCodec(db *sql.DB) (*codec, error) {
	rs, err := db.Query(`SELECT k, v FROM meta WHERE k LIKE ?`, metaDict+"%")
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	byNum := map[int][]byte{}
	for rs.Next() {
		var k string
		var v []byte
		if err := rs.Scan(&k, &v); err != nil {
			return nil, err
		}
		n := 0
		if k != metaDict {
			if n, err = strconv.Atoi(strings.TrimPrefix(k, metaDict+".")); err != nil {
				continue
			}
		}
		byNum[n] = v
	}
	if err := rs.Err(); err != nil {
		return nil, err
	}
	var c *codec
	for n := 0; n < len(byNum); n++ {
		b, ok := byNum[n]
		if !ok {
			return nil, fmt.Errorf("dicionário %d ausente", n)
		}
		c = c.with(b)
	}
	return c, nil
}

// addDict writes the dictionary b after those of c in the transaction and
// returns the codec with it.
func (tx *Tx) addDict(c *codec, b []byte) (*codec, error) {
	n := 0
	if c != nil {
		n = len(c.dicts)
	}
	if _, err := tx.t.Exec(`INSERT INTO meta(k,v) VALUES(?,?)`, dictKey(n), b); err != nil {
		return nil, err
	}
	tx.newCodec = c.with(b)
	return tx.newCodec, nil
}

// encodeRes is encode for a result, which makes a new dictionary when it
// compresses poorly; nil for a nil value (SQL NULL).
func (tx *Tx) encodeRes(c *codec, base, v []byte) any {
	if v == nil {
		return nil
	}
	v = packResult(v)
	enc := c.encode(base, v)
	if len(v) < 128 || len(enc) <= len(v)/3 || len(c.dicts) >= maxDicts {
		return enc
	}
	first := c.dicts[0].b
	nc, err := tx.addDict(c, append(first[:len(first):len(first)], v...))
	if err != nil {
		return enc // compressed less, still right
	}
	return nc.encode(base, v)
}

// newDict is the first dictionary of a journal whose first row is r.
func newDict(r Row) []byte {
	d := append([]byte(dictPrimer), keyInfo(r.Key, r.Info)...)
	return append(d, r.Req...)
}

// keyInfo is what a row's key and description are stored as (before
// compression): the key's length, the key, the description.
func keyInfo(key string, info []byte) []byte {
	b := binary.AppendUvarint(make([]byte, 0, 2+len(key)+len(info)), uint64(len(key)))
	return append(append(b, key...), info...)
}

// encode compresses v against the newest dictionary followed by base.
func (c *codec) encode(base, v []byte) []byte {
	n := len(c.dicts) - 1
	d := c.dicts[n]
	sp := getScratch(len(d.b) + len(base) + len(v))
	buf := append(append(*sp, d.b...), base...)
	start := len(buf)
	buf, packed := packHex(buf, v, base)
	format := byte(fmtLZ)
	if packed {
		format = fmtLZHex
	}
	t := tables.Get().(*lzWork)
	t.reset(&d.t)
	t.index(buf, max(0, len(d.b)-lzMinMatch+1), start)
	out := binary.AppendUvarint(append(make([]byte, 0, 16+len(v)/3), format), uint64(n))
	out = lzEncode(out, buf, start, t)
	tables.Put(t)
	putScratch(sp, buf)
	return out
}

// scratch holds the buffers a value is coded in (its dictionary, its
// row's description, the value): nothing of them is kept once coded.
var scratch sync.Pool // *[]byte

func getScratch(n int) *[]byte {
	p, _ := scratch.Get().(*[]byte)
	if p == nil || cap(*p) < n {
		b := make([]byte, 0, n)
		return &b
	}
	*p = (*p)[:0]
	return p
}

// putScratch gives back p, whose buffer has become b (appended to).
func putScratch(p *[]byte, b []byte) {
	if cap(b) <= 1<<20 {
		*p = b[:0]
		scratch.Put(p)
	}
}

var errNoDict = errors.New("valor comprimido com um dicionário que o diário não tem")

// decode returns the value v stores, compressed against a dictionary and
// base or (a journal written before) as it is.
func (c *codec) decode(base, v []byte) ([]byte, error) {
	if len(v) == 0 || v[0] != fmtLZ && v[0] != fmtLZHex {
		return v, nil
	}
	num, k := binary.Uvarint(v[1:])
	if k <= 0 {
		return nil, errCorrupt
	}
	if c == nil || num >= uint64(len(c.dicts)) {
		return nil, errNoDict
	}
	d := c.dicts[num].b
	n := len(d) + len(base)
	sp := getScratch(n + 4*len(v))
	buf, err := lzDecode(append(append(*sp, d...), base...), v[1+k:])
	var out []byte
	switch {
	case err != nil:
	case v[0] == fmtLZHex:
		out, err = unpackHex(buf[n:])
	default:
		out = append([]byte(nil), buf[n:]...)
	}
	putScratch(sp, buf)
	return out, err
}

// decodeRes is decode for a result: a result stored in columns
// (packResult) comes back as its JSON.
func (c *codec) decodeRes(base, v []byte) ([]byte, error) {
	b, err := c.decode(base, v)
	if err != nil {
		return nil, err
	}
	return unpackResult(b)
}

// splitKeyInfo returns the key and the description keyInfo stored.
func splitKeyInfo(b []byte) (string, json.RawMessage, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return "", nil, fmt.Errorf("chave e descrição: %w", errCorrupt)
	}
	return string(b[k : k+int(n)]), json.RawMessage(b[k+int(n):]), nil
}

// Chunks. The key, description and request of a new journal's rows do
// not change once the run is seeded: they are stored by chunkRows rows
// together, DEFLATE-compressed against the first dictionary (rows of one
// job look alike: a chunk costs about a sixth of its rows' JSON), in the
// chunks table; a row's info column holds fmtChunk and its chunk's id.
// Decoded chunks are cached (a few, chunks never change once committed),
// for the results, which are compressed against their row's key and
// description.
const (
	fmtChunk     = 0x02
	chunkRows    = 128
	chunkCacheB  = 8 << 20 // decoded bytes cached at most
	chunkLevel   = 3       // about 2.5x faster than 6 for about 10% more bytes (a tenth of a cobv row's)
	chunkReqNull = 0       // a request's length + 1, 0 for none
)

// chunkBuf is the chunk a transaction is filling.
type chunkBuf struct {
	id  int64
	raw []byte // per row: uvarint idx, uvarint len + key and description, uvarint len+1 (0: none) + request
	n   int
}

// add appends row idx: its key and description as keyInfo stores them,
// and its request.
func (b *chunkBuf) add(idx int, key string, info, req []byte) {
	var n [binary.MaxVarintLen64]byte
	kn := binary.PutUvarint(n[:], uint64(len(key)))
	b.raw = binary.AppendUvarint(b.raw, uint64(idx))
	b.raw = binary.AppendUvarint(b.raw, uint64(kn+len(key)+len(info)))
	b.raw = append(append(append(b.raw, n[:kn]...), key...), info...)
	if req == nil {
		b.raw = binary.AppendUvarint(b.raw, chunkReqNull)
	} else {
		b.raw = binary.AppendUvarint(b.raw, uint64(len(req))+1)
		b.raw = append(b.raw, req...)
	}
	b.n++
}

type chunkEntry struct{ keyInfo, req []byte }

type cachedChunk struct {
	rows map[int]chunkEntry
	size int    // about its decoded bytes
	used uint64 // when it was last used (Journal.cacheTick)
}

// compressChunk compresses a chunk's bytes with the journal's writer.
func (j *Journal) compressChunk(c *codec, raw []byte) ([]byte, error) {
	var out bytes.Buffer
	out.Write(binary.AppendUvarint(nil, uint64(len(raw))))
	if j.fw == nil || j.fwDict != c.dicts[0] {
		w, err := flate.NewWriterDict(&out, chunkLevel, c.dicts[0].b)
		if err != nil {
			return nil, err
		}
		j.fw, j.fwDict = w, c.dicts[0]
	} else {
		j.fw.Reset(&out)
	}
	if _, err := j.fw.Write(raw); err != nil {
		return nil, err
	}
	if err := j.fw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// decodeChunk returns the rows a chunk holds.
func decodeChunk(c *codec, data []byte) (map[int]chunkEntry, error) {
	var buf []byte // a buffer of its own: the rows stay valid
	return decodeChunkInto(c, data, &buf)
}

// chunkOf returns the id of the chunk a row's info column points to.
func chunkOf(info []byte) (int64, bool) {
	if len(info) < 2 || info[0] != fmtChunk {
		return 0, false
	}
	id, k := binary.Uvarint(info[1:])
	return int64(id), k > 0
}

// chunkEntry returns row idx of chunk id, read through q when not cached.
// The cache forgets the chunk used least recently: a cobv batch reads its
// rows' chunks when it starts and their descriptions again when it
// journals the results, after the other batches in flight read theirs.
func (j *Journal) chunkEntry(q *sql.Stmt, c *codec, id int64, idx int) (chunkEntry, error) {
	j.cmu.Lock()
	ch, ok := j.cache[id]
	if ok {
		j.cacheTick++
		ch.used = j.cacheTick
		j.cache[id] = ch
	}
	j.cmu.Unlock()
	if !ok {
		var data []byte
		if err := q.QueryRow(id).Scan(&data); err != nil {
			return chunkEntry{}, err
		}
		m, err := decodeChunk(c, data)
		if err != nil {
			return chunkEntry{}, err
		}
		ch = cachedChunk{rows: m}
		j.cacheRows(id, m, len(data)*8)
	}
	e, ok := ch.rows[idx]
	if !ok {
		return chunkEntry{}, fmt.Errorf("linha %d ausente do bloco %d: %w", idx, id, errCorrupt)
	}
	return e, nil
}
