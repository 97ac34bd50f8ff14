package journal

import (
	"bytes"
	"encoding/binary"
)

// Runs of lowercase hex digits in a value (the service's tokens, txids
// and hashes: random, so the LZ coder can only copy them a byte a
// character) are packed two digits to a byte before the value is coded:
// the part of a run from its first letter (a-f) to its last, when that is
// at least hexMinRun digits, becomes hexMark, the uvarint count of digit
// pairs and the pairs' bytes; the digits before and after it (and an odd
// one at its end) stay as they are. hexMark is a control byte,
// which JSON text never holds raw (json.Marshal escapes it): a value that
// holds one is not packed.
const (
	hexMark   = 0x1f
	hexMinRun = 16
)

const hexDigits = "0123456789abcdef"

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

func nibble(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

// hexClass is 1 for a digit, 2 for a lowercase hex letter, 0 otherwise.
var hexClass = func() (t [256]uint8) {
	for c := '0'; c <= '9'; c++ {
		t[c] = 1
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = 2
	}
	return t
}()

// packHex appends v with its hex runs packed to dst, but for the runs
// base holds (the LZ coder copies those from base for a few bytes: a cobv
// result repeats its row's txid); false when nothing was packed (v is
// appended as it is).
func packHex(dst, v, base []byte) ([]byte, bool) {
	if bytes.IndexByte(v, hexMark) >= 0 {
		return append(dst, v...), false
	}
	packed := false
	done := 0 // v[:done] is in dst
	// only a run of at least hexMinRun digits may be packed: the byte
	// hexMinRun-1 after p (which is 0 or follows a byte not a digit) is
	// looked at first, and the run holding it found from there
	for p := 0; p+hexMinRun <= len(v); {
		q := p + hexMinRun - 1
		if hexClass[v[q]] == 0 {
			p = q + 1
			continue
		}
		i := q
		for i > p && hexClass[v[i-1]] != 0 {
			i--
		}
		// the run [i, j); what is packed is from its first letter to its
		// last: digits around a token are often constant text the coder
		// copies (a Pix code's "5204000053039865802BR…" after the txid)
		j, first, last := i, -1, -1
		for ; j < len(v); j++ {
			c := hexClass[v[j]]
			if c == 0 {
				break
			}
			if c == 2 {
				if first < 0 {
					first = j
				}
				last = j
			}
		}
		p = j + 1
		pairs := (last + 1 - first) / 2
		if first < 0 || 2*pairs < hexMinRun || bytes.Contains(base, v[first:first+2*pairs]) {
			continue
		}
		dst = append(dst, v[done:first]...)
		dst = binary.AppendUvarint(append(dst, hexMark), uint64(pairs))
		o := len(dst)
		dst = append(dst, v[first:first+pairs]...) // room for the pairs
		for k := range pairs {
			dst[o+k] = nibble(v[first+2*k])<<4 | nibble(v[first+2*k+1])
		}
		done = first + 2*pairs
		packed = true
	}
	return append(dst, v[done:]...), packed
}

// unpackHex undoes packHex.
func unpackHex(b []byte) ([]byte, error) {
	out := make([]byte, 0, 2*len(b))
	for i := 0; i < len(b); {
		k := bytes.IndexByte(b[i:], hexMark)
		if k < 0 {
			return append(out, b[i:]...), nil
		}
		out = append(out, b[i:i+k]...)
		i += k
		pairs, n := binary.Uvarint(b[i+1:])
		if n <= 0 || pairs > uint64(len(b)-i-1-n) {
			return nil, errCorrupt
		}
		i += 1 + n
		for _, x := range b[i : i+int(pairs)] {
			out = append(out, hexDigits[x>>4], hexDigits[x&15])
		}
		i += int(pairs)
	}
	return out, nil
}
