// Package jsonw appends JSON values to a byte slice exactly as
// encoding/json's Marshal writes them, for the hand-written writers of
// the sandbox's most frequent answers and documents (sandbox/pix,
// sandbox/charges): the usual values are appended in place, without
// reflection, and anything unusual is handed to encoding/json itself, so
// the bytes never differ.
package jsonw

import (
	"encoding/json"
	"time"
	"unicode/utf8"
)

// plain marks the bytes Marshal writes as they are inside a string:
// printable ASCII but '"', '\\' and the HTML characters '<', '>', '&'
// (Marshal escapes those). Bytes from 0x80 on are not marked: UTF-8
// sequences are checked one by one.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = true
	}
	for _, c := range `"\<>&` {
		t[c] = false
	}
	return t
}()

// AppendString appends s quoted as Marshal quotes it: as it is when
// nothing in it needs an escape (printable ASCII other than the five
// above, valid UTF-8 other than U+2028 and U+2029), otherwise by
// encoding/json.
func AppendString(b []byte, s string) []byte {
	for i := 0; i < len(s); {
		if plain[s[i]] {
			i++
			continue
		}
		if s[i] < utf8.RuneSelf {
			return appendStringSlow(b, s)
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
			return appendStringSlow(b, s)
		}
		i += size
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendStringSlow is AppendString by encoding/json.
func appendStringSlow(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always encodes
	return append(b, q...)
}

// AppendTime appends t as Marshal writes a time.Time (RFC 3339 with
// nanoseconds, quoted); false when Marshal would refuse it (a year outside
// 0..9999, a zone offset of 24 hours or more, or of seconds).
func AppendTime(b []byte, t time.Time) ([]byte, bool) {
	ok := true
	b = append(b, '"')
	n0 := len(b)
	b = t.AppendFormat(b, time.RFC3339Nano)
	switch {
	case len(b) < n0+5 || b[n0+4] != '-': // the year must be 4 digits
		ok = false
	case b[len(b)-1] != 'Z':
		c := b[len(b)-len("Z07:00")]
		h := 10*int(b[len(b)-5]-'0') + int(b[len(b)-4]-'0')
		if ('0' <= c && c <= '9') || h >= 24 {
			ok = false
		}
	}
	return append(b, '"'), ok
}

// AppendArray appends xs as Marshal writes a slice of them: null when xs
// is nil, else the elements, each appended by elem, in brackets and
// separated by commas.
func AppendArray[T any](b []byte, xs []T, elem func(b []byte, x *T) []byte) []byte {
	if xs == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = elem(b, &xs[i])
	}
	return append(b, ']')
}
