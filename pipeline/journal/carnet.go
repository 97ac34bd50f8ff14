package journal

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"time"

	"remessa/pipeline/results"
	"remessa/rules"
)

// Results with parcels (a carnet's: 12 parcels, each with its typed line,
// Pix code, links, two random 32-digit tokens) are stored in columns
// before they are compressed: the row without its parcels (JSON, which
// mostly repeats the row's description, so the LZ coder copies it), then
// each parcel field for all parcels in turn, each parcel's value coded
// against the previous parcel's (the same text but for a few places: a
// txid, a check digit, a token's last two digits), numbers as varints and
// runs of lowercase hex packed two digits a byte. A value is stored so
// only when it decodes back to exactly the same bytes (checked as it is
// encoded); anything else is stored as before. A packed value starts with
// fmtParcels, which no JSON text starts with; journals written before hold
// none and read as they are.
const fmtParcels = 0x04

// maxPacked is the longest result packed: the parcels' texts decoded from
// a packed value may not add up to more (a corrupt value must not make
// an unbounded one).
const maxPacked = 1 << 20

// packResult returns v in columns, or v itself when it is not a result
// with parcels or would not come back the same.
func packResult(v []byte) []byte {
	if !packable(v) {
		return v
	}
	var row results.Row
	if err := json.Unmarshal(v, &row); err != nil || len(row.Parcels) == 0 {
		return v
	}
	return packRow(&row, v)
}

// packable says whether v may be a result with parcels packResult packs.
func packable(v []byte) bool {
	return len(v) >= 256 && len(v) <= maxPacked && v[0] == '{' && hasParcels(v)
}

// hasParcels is bytes.Contains(v, `"parcels":[`), looking for its '['
// (a byte a result holds a few of) instead of its '"' (which JSON is full
// of, and which bytes.Index would try at each).
func hasParcels(v []byte) bool {
	const key = `"parcels":`
	for off := 0; ; {
		k := bytes.IndexByte(v[off:], '[')
		if k < 0 {
			return false
		}
		k += off
		if k >= len(key) && string(v[k-len(key):k]) == key {
			return true
		}
		off = k + 1
	}
}

// PackResult is what SetRow stores of a result v, the JSON text of row
// (json.Marshal's bytes), before it is compressed: v in columns when row
// has parcels, else v itself. It reads row instead of decoding v, and
// keeps the columns only when they decode back to exactly v, as SetRow
// does. A run packs a carnet's result this way outside the transaction
// that journals it (SetRow then stores it as it is): packing costs about
// 0.1 ms, which would hold the journal's writer, and the intents of the
// calls waiting to be sent, for every carnet journaled with them.
func PackResult(row *results.Row, v json.RawMessage) json.RawMessage {
	if row == nil || len(row.Parcels) == 0 || !packable(v) {
		return v
	}
	return packRow(row, v)
}

// packRow is v in columns when they decode back to exactly v (row is v
// decoded), else v.
func packRow(row *results.Row, v []byte) []byte {
	p, err := encodeParcels(row)
	if err != nil {
		return v
	}
	if back, err := unpackResult(p); err != nil || !bytes.Equal(back, v) {
		return v
	}
	return p
}

// encodeParcels is the columns of row (which has parcels).
func encodeParcels(row *results.Row) ([]byte, error) {
	ps := row.Parcels
	skel := *row
	skel.Parcels = nil
	idsDerived := len(row.ChargeIDs) == len(ps)
	for i := range row.ChargeIDs {
		if idsDerived && row.ChargeIDs[i] != ps[i].ChargeID {
			idsDerived = false
		}
	}
	if idsDerived {
		skel.ChargeIDs = nil
	}
	sb, err := json.Marshal(&skel)
	if err != nil {
		return nil, err
	}
	out := []byte{fmtParcels}
	flags := byte(0)
	if idsDerived {
		flags |= 1
	}
	out = append(out, flags)
	out = appendBytes(out, sb)
	out = binary.AppendUvarint(out, uint64(len(ps)))
	prev := int64(0)
	for _, p := range ps {
		out = binary.AppendVarint(out, int64(p.Number))
		out = binary.AppendVarint(out, p.ChargeID-prev)
		prev = p.ChargeID
		out = binary.AppendVarint(out, p.ValueCents)
	}
	for c, col := range parcelColumns {
		vals := make([]string, len(ps))
		for i := range ps {
			vals[i] = *col(&ps[i])
		}
		out = appendColumn(out, c, vals)
	}
	for i := range ps {
		var sp []byte
		if ps[i].Split != nil {
			if sp, err = json.Marshal(ps[i].Split); err != nil {
				return nil, err
			}
		}
		out = appendBytes(out, sp)
	}
	return out, nil
}

// unpackResult returns the JSON of a value packResult stored; any other
// value as it is.
func unpackResult(b []byte) ([]byte, error) {
	if len(b) == 0 || b[0] != fmtParcels {
		return b, nil
	}
	d := &reader{b: b[1:], budget: maxPacked}
	flags := d.byte()
	sb := d.bytes()
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.b)) {
		return nil, errCorrupt
	}
	var row results.Row
	if err := json.Unmarshal(sb, &row); err != nil {
		return nil, errCorrupt
	}
	ps := make([]results.Parcel, n)
	prev := int64(0)
	for i := range ps {
		ps[i].Number = int(d.varint())
		prev += d.varint()
		ps[i].ChargeID = prev
		ps[i].ValueCents = d.varint()
	}
	for c, col := range parcelColumns {
		vals := d.column(c, len(ps))
		for i := range ps {
			if vals == nil {
				break
			}
			*col(&ps[i]) = vals[i]
		}
	}
	for i := range ps {
		if sp := d.bytes(); len(sp) > 0 {
			if err := json.Unmarshal(sp, &ps[i].Split); err != nil {
				return nil, errCorrupt
			}
		}
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, errCorrupt
	}
	if flags&1 != 0 {
		row.ChargeIDs = make([]int64, len(ps))
		for i := range ps {
			row.ChargeIDs[i] = ps[i].ChargeID
		}
	}
	row.Parcels = ps
	return json.Marshal(&row)
}

// parcelColumns are the text fields of a parcel, in the order stored.
var parcelColumns = []func(*results.Parcel) *string{
	func(p *results.Parcel) *string { return &p.DueDate },
	func(p *results.Parcel) *string { return &p.Status },
	func(p *results.Parcel) *string { return &p.TypedLine },
	func(p *results.Parcel) *string { return &p.Barcode },
	func(p *results.Parcel) *string { return &p.PixCopiaECola },
	func(p *results.Parcel) *string { return &p.Link },
	func(p *results.Parcel) *string { return &p.PDF },
}

// How a column is stored: colDiff, each value against the previous
// (appendDiff); colDays, dates (YYYY-MM-DD) as the days from the previous
// one (varints, the first from the epoch); colPixCRC, Pix codes without
// their CRC (the last 4 digits, the CRC16-CCITT of the rest), then as
// colDiff.
const (
	colDiff = iota
	colDays
	colPixCRC
)

func appendColumn(out []byte, c int, vals []string) []byte {
	if c == 0 {
		days := make([]int64, len(vals))
		ok := true
		for i, v := range vals {
			if days[i], ok = dayNumber(v); !ok {
				break
			}
		}
		if ok {
			out = append(out, colDays)
			prev := int64(0)
			for _, d := range days {
				out = binary.AppendVarint(out, d-prev)
				prev = d
			}
			return out
		}
	}
	mode := byte(colDiff)
	if c == 4 {
		mode = colPixCRC
		for _, v := range vals {
			if !pixCRCOK(v) {
				mode = colDiff
				break
			}
		}
	}
	out = append(out, mode)
	last := ""
	for _, s := range vals {
		if mode == colPixCRC {
			s = s[:len(s)-4]
		}
		out = appendDiff(out, last, s)
		last = s
	}
	return out
}

// column reads a column of n values; nil once the input is corrupt.
func (r *reader) column(c, n int) []string {
	vals := make([]string, n)
	switch mode := r.byte(); mode {
	case colDays:
		if c != 0 {
			r.fail()
			return nil
		}
		day := int64(0)
		for i := range vals {
			day += r.varint()
			if r.err != nil || day < 0 || day > maxDay {
				r.fail()
				return nil
			}
			vals[i] = dayString(day)
		}
	case colDiff, colPixCRC:
		last := ""
		for i := range vals {
			s := r.diff(last)
			if r.budget -= len(s); r.budget < 0 {
				r.fail()
				return nil
			}
			last = s
			if mode == colPixCRC {
				s += pixCRC(s)
			}
			vals[i] = s
		}
	default:
		r.fail()
	}
	if r.err != nil {
		return nil
	}
	return vals
}

// maxDay is 9999-12-31's day number.
var maxDay = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC).Unix() / 86400

// dayNumber is the days from 1970-01-01 of a date written YYYY-MM-DD
// (false for anything that would not be written back the same).
func dayNumber(s string) (int64, bool) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil || t.Format(time.DateOnly) != s || t.Unix() < 0 {
		return 0, false
	}
	return t.Unix() / 86400, true
}

func dayString(d int64) string { return time.Unix(d*86400, 0).UTC().Format(time.DateOnly) }

// pixCRC is the CRC field's value of a Pix code up to and including its
// "6304" (rules.CRC16).
func pixCRC(s string) string { return rules.CRC16(s) }

func pixCRCOK(s string) bool {
	return len(s) >= 8 && s[len(s)-8:len(s)-4] == "6304" && pixCRC(s[:len(s)-4]) == s[len(s)-4:]
}

func appendBytes(out, b []byte) []byte {
	return append(binary.AppendUvarint(out, uint64(len(b))), b...)
}

// appendDiff codes s against prev. When they have the same length: the
// places they differ, as (same count, literal) pairs, places closer than
// diffGap merged; otherwise: the common prefix and suffix lengths and the
// literal between. Literals are coded by appendLit.
func appendDiff(out []byte, prev, s string) []byte {
	if len(prev) != len(s) || len(s) == 0 {
		pre := commonPrefix(prev, s)
		suf := commonSuffix(prev[pre:], s[pre:])
		out = append(out, 0)
		out = binary.AppendUvarint(out, uint64(pre))
		out = binary.AppendUvarint(out, uint64(suf))
		return appendLit(out, s[pre:len(s)-suf])
	}
	out = append(out, 1)
	type run struct{ same, from, to int }
	var runs []run
	i, at := 0, 0
	for i < len(s) {
		if s[i] == prev[i] {
			i++
			continue
		}
		j := i
		for j < len(s) {
			if s[j] != prev[j] {
				j++
				continue
			}
			k := j
			for k < len(s) && k-j < diffGap && s[k] == prev[k] {
				k++
			}
			if k == len(s) || k-j >= diffGap {
				break
			}
			j = k
		}
		runs = append(runs, run{i - at, i, j})
		at, i = j, j
	}
	out = binary.AppendUvarint(out, uint64(len(runs)))
	for _, r := range runs {
		out = binary.AppendUvarint(out, uint64(r.same))
		out = appendLit(out, s[r.from:r.to])
	}
	return out
}

const diffGap = 4

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func commonSuffix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[len(a)-1-n] == b[len(b)-1-n] {
		n++
	}
	return n
}

// appendLit codes s as segments: uvarint (length<<1 | packed) then the
// bytes, runs of at least hexMinRun lowercase hex digits (an even count)
// packed two to a byte.
func appendLit(out []byte, s string) []byte {
	type seg struct {
		from, to int
		hex      bool
	}
	var segs []seg
	start := 0
	for i := 0; i < len(s); {
		if !isHex(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isHex(s[j]) {
			j++
		}
		if n := (j - i) &^ 1; n >= hexMinRun {
			if i > start {
				segs = append(segs, seg{start, i, false})
			}
			segs = append(segs, seg{i, i + n, true})
			start = i + n
		}
		i = j
	}
	if start < len(s) {
		segs = append(segs, seg{start, len(s), false})
	}
	out = binary.AppendUvarint(out, uint64(len(segs)))
	for _, g := range segs {
		if !g.hex {
			out = binary.AppendUvarint(out, uint64(g.to-g.from)<<1)
			out = append(out, s[g.from:g.to]...)
			continue
		}
		out = binary.AppendUvarint(out, uint64(g.to-g.from)<<1|1)
		for k := g.from; k < g.to; k += 2 {
			out = append(out, nibble(s[k])<<4|nibble(s[k+1]))
		}
	}
	return out
}

// reader reads what the append functions above wrote; the first failure
// sticks in err and every later read gives zero values.
type reader struct {
	b      []byte
	err    error
	budget int // bytes of text left to decode
}

func (r *reader) fail() { r.err, r.b = errCorrupt, nil }

func (r *reader) byte() byte {
	if r.err != nil || len(r.b) == 0 {
		r.fail()
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[k:]
	return v
}

func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, k := binary.Varint(r.b)
	if k <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[k:]
	return v
}

// take returns the next n bytes.
func (r *reader) take(n uint64) []byte {
	if r.err != nil || n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b
}

func (r *reader) bytes() []byte { return r.take(r.uvarint()) }

func (r *reader) lit() []byte {
	segs := r.uvarint()
	if segs > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	var out []byte
	for range segs {
		h := r.uvarint()
		if h&1 == 0 {
			out = append(out, r.take(h>>1)...)
			continue
		}
		n := h >> 1
		if n%2 != 0 {
			r.fail()
			return nil
		}
		for _, x := range r.take(n / 2) {
			out = append(out, hexDigits[x>>4], hexDigits[x&15])
		}
	}
	return out
}

// diff reads what appendDiff wrote against prev.
func (r *reader) diff(prev string) string {
	switch r.byte() {
	case 0:
		pre, suf := r.uvarint(), r.uvarint()
		if pre > uint64(len(prev)) || suf > uint64(len(prev))-pre {
			r.fail()
			return ""
		}
		mid := r.lit()
		return prev[:pre] + string(mid) + prev[uint64(len(prev))-suf:]
	case 1:
		runs := r.uvarint()
		if runs > uint64(len(r.b)) {
			r.fail()
			return ""
		}
		out := []byte(prev)
		at := uint64(0)
		for range runs {
			at += r.uvarint()
			lit := r.lit()
			if r.err != nil || at+uint64(len(lit)) > uint64(len(out)) {
				r.fail()
				return ""
			}
			copy(out[at:], lit)
			at += uint64(len(lit))
		}
		return string(out)
	}
	r.fail()
	return ""
}
