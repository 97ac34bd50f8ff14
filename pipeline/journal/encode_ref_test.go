package journal

import (
	"bytes"
	"encoding/binary"
)

// The coder written plainly (a copy of the dictionary's table per value,
// byte-at-a-time loops, as it was before it was made faster): the
// reference the fast one is compared against, byte for byte, in
// TestEncodeMatchesRef.

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
