package journal

import (
	"bytes"
	"encoding/binary"
)

// Runs of lowercase hex digits in a value (the service's tokens, txids
// and hashes: random, so the LZ coder can only copy them a byte a
// character) are packed two digits to a byte before the value is coded: a
// run of at least hexMinRun digits with a letter among them becomes
// hexMark, the uvarint count of digit pairs and the pairs' bytes; a run of
// odd length leaves its last digit as it is. hexMark is a control byte,
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

// packHex appends v with its hex runs packed to dst; false when nothing
// was packed (the value is coded as it is).
func packHex(dst, v []byte) ([]byte, bool) {
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
		j, letter := i, false
		for j < len(v) && isHex(v[j]) {
			letter = letter || v[j] >= 'a'
			j++
		}
		if j-i < hexMinRun || !letter {
			dst = append(dst, v[i:j]...)
			i = j
			continue
		}
		pairs := (j - i) / 2
		dst = binary.AppendUvarint(append(dst, hexMark), uint64(pairs))
		for k := i; k < i+2*pairs; k += 2 {
			dst = append(dst, nibble(v[k])<<4|nibble(v[k+1]))
		}
		i += 2 * pairs // an odd run's last digit goes as it is
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
