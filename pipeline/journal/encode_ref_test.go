package journal

import (
	"bytes"
	"encoding/binary"
)

// The coder written plainly (a copy of the dictionary's table per value,
// byte-at-a-time loops, as it was before it was made faster): the
// reference the fast one is compared against, byte for byte, in
// TestEncodeMatchesRef. Its functions are //go:norace: the tests call
// them on one goroutine, where the race detector's checks of every byte
// they touch (a copy of the 32 KB table per value) find nothing and cost
// half of TestEncodeMatchesRef's time under -race; the coder under test
// stays checked.

//go:norace
func encodeRef(c *codec, base, v []byte) []byte {
	n := len(c.dicts) - 1
	d := c.dicts[n]
	buf := append(append(append([]byte(nil), d.b...), base...), v...)
	t := new(lzTable)
	*t = d.t
	start := len(d.b) + len(base)
	for i := max(0, len(d.b)-lzMinMatch+1); i < start && i+lzMinMatch <= len(buf); i++ {
		t[lzHash(buf[i:])] = int32(i + 1)
	}
	format := byte(fmtLZ)
	if p, ok := packHexRef(buf[:start], v, base); ok {
		buf, format = p, fmtLZHex
	}
	out := binary.AppendUvarint([]byte{format}, uint64(n))
	return lzEncodeRef(out, buf, start, t)
}

//go:norace
func lzEncodeRef(dst, buf []byte, start int, t *lzTable) []byte {
	lit, i := start, start
	for i+lzMinMatch <= len(buf) {
		h := lzHash(buf[i:])
		cand := int(t[h]) - 1
		t[h] = int32(i + 1)
		if cand < 0 || binary.LittleEndian.Uint32(buf[cand:]) != binary.LittleEndian.Uint32(buf[i:]) {
			i++
			continue
		}
		for i > lit && cand > 0 && buf[i-1] == buf[cand-1] {
			i, cand = i-1, cand-1
		}
		n := lzMinMatch
		for i+n < len(buf) && buf[cand+n] == buf[i+n] {
			n++
		}
		dst = lzSeq(dst, buf[lit:i], n-lzMinMatch)
		dst = binary.AppendUvarint(dst, uint64(i-cand))
		if n-lzMinMatch >= 15 {
			dst = binary.AppendUvarint(dst, uint64(n-lzMinMatch-15))
		}
		for k := max(i+1, i+n-lzTail); k < i+n && k+lzMinMatch <= len(buf); k++ {
			t[lzHash(buf[k:])] = int32(k + 1)
		}
		i += n
		lit = i
	}
	return lzSeq(dst, buf[lit:], 0)
}

//go:norace
func packHexRef(dst, v, base []byte) ([]byte, bool) {
	if bytes.IndexByte(v, hexMark) >= 0 {
		return nil, false
	}
	packed := false
	for i := 0; i < len(v); {
		if !isHex(v[i]) {
			dst = append(dst, v[i])
			i++
			continue
		}
		j, first, last := i, -1, -1
		for j < len(v) && isHex(v[j]) {
			if v[j] >= 'a' {
				if first < 0 {
					first = j
				}
				last = j
			}
			j++
		}
		pairs := (last + 1 - first) / 2
		if first < 0 || 2*pairs < hexMinRun || bytes.Contains(base, v[first:first+2*pairs]) {
			dst = append(dst, v[i:j]...)
			i = j
			continue
		}
		dst = append(dst, v[i:first]...)
		dst = binary.AppendUvarint(append(dst, hexMark), uint64(pairs))
		for k := first; k < first+2*pairs; k += 2 {
			dst = append(dst, nibble(v[k])<<4|nibble(v[k+1]))
		}
		dst = append(dst, v[first+2*pairs:j]...)
		i = j
		packed = true
	}
	return dst, packed
}

// unpackHexRef and lzDecodeRef are the decoders written a byte at a time
// (as they were before bulk copies), for TestDecodeMatchesRef.
//
//go:norace
func unpackHexRef(b []byte) ([]byte, error) {
	out := make([]byte, 0, 2*len(b))
	for i := 0; i < len(b); {
		if b[i] != hexMark {
			out = append(out, b[i])
			i++
			continue
		}
		pairs, k := binary.Uvarint(b[i+1:])
		if k <= 0 || pairs > uint64(len(b)-i-1-k) {
			return nil, errCorrupt
		}
		i += 1 + k
		for _, x := range b[i : i+int(pairs)] {
			out = append(out, hexDigits[x>>4], hexDigits[x&15])
		}
		i += int(pairs)
	}
	return out, nil
}

//go:norace
func lzDecodeRef(buf, enc []byte) ([]byte, error) {
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
		p := len(buf) - int(off)
		for j := 0; j < int(m)+lzMinMatch; j++ {
			buf = append(buf, buf[p+j])
		}
	}
}
