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

// packHex appends v with its hex runs packed to dst, but for the runs
// base holds (the LZ coder copies those from base for a few bytes: a cobv
// result repeats its row's txid); false when nothing was packed (the
// value is coded as it is).
func packHex(dst, v, base []byte) ([]byte, bool) {
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
		// the run [i, j); what is packed is from its first letter to its
		// last: digits around a token are often constant text the coder
		// copies (a Pix code's "5204000053039865802BR…" after the txid)
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

// unpackHex undoes packHex.
func unpackHex(b []byte) ([]byte, error) {
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
