package journal

import (
	"encoding/binary"
	"errors"
	"math/bits"
)

// A small LZ77 coder for the journal's JSON values, compressed against a
// preset dictionary (the journal's, kept in its meta, followed by the
// row's own description). compress/flate would compress better but its
// writer costs about 20 µs to reset (it clears 640 KB of hash tables) and
// far more to create with a dictionary that changes per row; this one
// costs a few microseconds per value.
//
// Encoded form: a sequence of
//
//	token byte: literal count (high 4 bits) and match length - lzMinMatch (low 4 bits), 15 = more follows
//	[uvarint: literal count - 15]
//	literals
//	-- the end of the input after the last literals --
//	uvarint: match offset, back from the current position in dictionary||output
//	[uvarint: match length - lzMinMatch - 15]
const (
	lzHashBits = 13
	lzMinMatch = 4
	lzTail     = 4 // positions at the end of a match recorded in the table
)

// lzTable maps a 4-byte hash to a position + 1 in the buffer being coded.
type lzTable [1 << lzHashBits]int32

func lzHash(b []byte) uint32 {
	return (binary.LittleEndian.Uint32(b) * 2654435761) >> (32 - lzHashBits)
}

// index records the positions [from, to) of buf.
func (t *lzTable) index(buf []byte, from, to int) {
	for i := from; i < to && i+lzMinMatch <= len(buf); i++ {
		t[lzHash(buf[i:])] = int32(i + 1)
	}
}

// lzWork is a dictionary's table with the positions a value's coding
// adds over it: an entry stamped with the current generation overrides
// the dictionary's, so the 32 KB of the dictionary's table are not copied
// for every value (it reads as a copy of it that the coding then changed).
type lzWork struct {
	dict *lzTable
	gen  uint32
	e    [1 << lzHashBits]uint64 // gen<<32 | position+1
}

// reset makes w the dictionary table d, unchanged.
func (w *lzWork) reset(d *lzTable) {
	w.dict = d
	w.gen++
	if w.gen == 0 { // wrapped: stamps of 2^32 values ago would read as new
		clear(w.e[:])
		w.gen = 1
	}
}

func (w *lzWork) get(h uint32) int {
	if e := w.e[h]; uint32(e>>32) == w.gen {
		return int(uint32(e))
	}
	return int(w.dict[h])
}

func (w *lzWork) set(h uint32, pos1 int) { w.e[h] = uint64(w.gen)<<32 | uint64(uint32(pos1)) }

// index records the positions [from, to) of buf.
func (w *lzWork) index(buf []byte, from, to int) {
	to = min(to, len(buf)-lzMinMatch+1)
	for i := from; i < to; i++ {
		w.set(lzHash(buf[i:]), i+1)
	}
}

// lzEncode appends to dst the coding of buf[start:] against buf[:start]
// (the dictionary), t holding positions of buf[:start] (it is changed).
func lzEncode(dst, buf []byte, start int, t *lzWork) []byte {
	lit, i := start, start
	for i+lzMinMatch <= len(buf) {
		h := lzHash(buf[i:])
		cand := t.get(h) - 1
		t.set(h, i+1)
		if cand < 0 || binary.LittleEndian.Uint32(buf[cand:]) != binary.LittleEndian.Uint32(buf[i:]) {
			i++
			continue
		}
		for i > lit && cand > 0 && buf[i-1] == buf[cand-1] {
			i, cand = i-1, cand-1
		}
		n := lzMinMatch
		for i+n+8 <= len(buf) {
			if x := binary.LittleEndian.Uint64(buf[cand+n:]) ^ binary.LittleEndian.Uint64(buf[i+n:]); x != 0 {
				n += bits.TrailingZeros64(x) >> 3
				goto matched
			}
			n += 8
		}
		for i+n < len(buf) && buf[cand+n] == buf[i+n] {
			n++
		}
	matched:
		dst = lzSeq(dst, buf[lit:i], n-lzMinMatch)
		dst = binary.AppendUvarint(dst, uint64(i-cand))
		if n-lzMinMatch >= 15 {
			dst = binary.AppendUvarint(dst, uint64(n-lzMinMatch-15))
		}
		// the match's text is mostly in the table already (it is what
		// was matched): only its last positions, where the next match may
		// start, are recorded (every one costs 0.6 µs a cobv result for
		// half a byte less)
		t.index(buf, max(i+1, i+n-lzTail), i+n)
		i += n
		lit = i
	}
	return lzSeq(dst, buf[lit:], 0)
}

// lzSeq appends a token and its literals.
func lzSeq(dst, lits []byte, m int) []byte {
	tok := byte(min(m, 15))
	tok |= byte(min(len(lits), 15)) << 4
	dst = append(dst, tok)
	if len(lits) >= 15 {
		dst = binary.AppendUvarint(dst, uint64(len(lits)-15))
	}
	return append(dst, lits...)
}

var errCorrupt = errors.New("valor comprimido inválido")

// lzDecode appends to buf (which holds the dictionary) the data coded in
// enc, and returns buf.
func lzDecode(buf, enc []byte) ([]byte, error) {
	for {
		if len(enc) == 0 {
			return nil, errCorrupt
		}
		tok := enc[0]
		enc = enc[1:]
		l := uint64(tok >> 4)
		if l == 15 {
			x, k := binary.Uvarint(enc)
			if k <= 0 {
				return nil, errCorrupt
			}
			l, enc = l+x, enc[k:]
		}
		if uint64(len(enc)) < l {
			return nil, errCorrupt
		}
		buf = append(buf, enc[:l]...)
		enc = enc[l:]
		if len(enc) == 0 {
			return buf, nil
		}
		off, k := binary.Uvarint(enc)
		if k <= 0 {
			return nil, errCorrupt
		}
		enc = enc[k:]
		m := uint64(tok & 15)
		if m == 15 {
			x, k := binary.Uvarint(enc)
			if k <= 0 || x > 1<<30 {
				return nil, errCorrupt
			}
			m, enc = m+x, enc[k:]
		}
		if off == 0 || off > uint64(len(buf)) {
			return nil, errCorrupt
		}
		p, n := len(buf)-int(off), int(m)+lzMinMatch
		if int(off) >= n { // the copy's source ends before it starts
			buf = append(buf, buf[p:p+n]...)
			continue
		}
		for j := 0; j < n; j++ {
			buf = append(buf, buf[p+j])
		}
	}
}
