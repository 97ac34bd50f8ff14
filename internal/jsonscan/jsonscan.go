// Package jsonscan reads JSON text token by token in one pass, for the
// hand-written readers that decode a few known shapes faster than
// encoding/json does (api's page of cobv codes, pipeline/run's journaled
// rows, the sandbox's generic decoding of request bodies): a reader walks the text with a Scanner and keeps only its own
// mapping of members to fields.
//
// A Scanner checks the text as it reads it, by RFC 8259 as encoding/json
// does (white space, strings and their escapes, numbers, literals,
// nesting), so that what it reads encoding/json reads too, and decodes a
// string to the value encoding/json gives it (an invalid UTF-8 byte or a
// lone surrogate escape becomes U+FFFD). It refuses, with a *SyntaxError
// that says at which byte, whatever it does not read, and also two things
// it chooses not to: a key holding an escape (readers match keys byte for
// byte, and an escaped key could spell any name) and nesting deeper than
// MaxDepth. A reader that is refused decodes the text with encoding/json
// instead: a Scanner is a fast path, never the only one.
package jsonscan

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is how deep a Scanner nests objects and arrays; deeper is a
// *SyntaxError (encoding/json's own limit is 10,000).
const MaxDepth = 200

// SyntaxError is what a Scanner refuses and the byte offset, in the text,
// of the byte it refused (the text's length when the text ended early).
type SyntaxError struct {
	Offset int
	Msg    string
}

// Error says what was refused and where.
func (e *SyntaxError) Error() string {
	return "jsonscan: " + e.Msg + " at byte " + strconv.Itoa(e.Offset)
}

// Scanner reads a JSON text from its start; each method reads one value
// (or checks one token) after any white space, and leaves the Scanner
// after it. After an error the Scanner's position is unspecified.
type Scanner struct {
	b      []byte
	i      int
	depth  int
	shared bool   // Str returns substrings of text
	text   string // string(b), when shared
}

// New returns a Scanner at the start of b.
func New(b []byte) Scanner { return Scanner{b: b} }

// NewShared returns a Scanner at the start of b whose Str returns a
// string without escapes as a substring of one copy of b, made here: one
// allocation for all of the text's strings instead of one each, at the
// price of the whole copy staying in memory while any of them does. It
// suits a small text whose strings are kept together (a journaled row),
// not a large one of which little is kept.
func NewShared(b []byte) Scanner { return Scanner{b: b, shared: true, text: string(b)} }

// Rest is the text from the Scanner's position on.
func (s *Scanner) Rest() []byte { return s.b[s.i:] }

func (s *Scanner) fail(msg string) error { return &SyntaxError{Offset: s.i, Msg: msg} }

// unexpected is the error for the byte at s.i (or the text's end) where
// want was expected.
func (s *Scanner) unexpected(want string) error {
	if s.i >= len(s.b) {
		return s.fail("text ends where " + want + " was expected")
	}
	return s.fail(strconv.QuoteRune(rune(s.b[s.i])) + " where " + want + " was expected")
}

// Peek skips white space and returns the next byte without reading it
// (0 at the end of the text): a reader looks at it to tell which kind of
// value comes ('{', '[', '"', 't', 'f', 'n', or a number's first byte).
func (s *Scanner) Peek() byte {
	for s.i < len(s.b) {
		c := s.b[s.i]
		if c > ' ' || c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c
		}
		s.i++
	}
	return 0
}

// End checks that nothing but white space is left.
func (s *Scanner) End() error {
	if s.Peek(); s.i != len(s.b) {
		return s.unexpected("the end of the text")
	}
	return nil
}

// list reads an object or an array: open, then items separated by
// commas (item reads each), then close, one level deeper inside.
func (s *Scanner) list(open, close byte, what, after string, item func() error) error {
	if s.Peek() != open {
		return s.unexpected(what)
	}
	if s.depth >= MaxDepth {
		return s.fail("nesting deeper than " + strconv.Itoa(MaxDepth))
	}
	s.depth++
	s.i++
	if s.Peek() != close {
		for {
			if err := item(); err != nil {
				return err
			}
			if s.Peek() != ',' {
				break
			}
			s.i++
		}
		if s.Peek() != close {
			return s.unexpected(after)
		}
	}
	s.i++
	s.depth--
	return nil
}

// Object reads an object, calling member for each member with its key's
// bytes (as they stand between the quotes: a key holding an escape is
// refused) and the Scanner at its value, which member must read (Skip
// reads one it does not want). An error from member is returned as it is.
func (s *Scanner) Object(member func(key []byte) error) error {
	return s.list('{', '}', "an object", "',' or '}' after an object member", func() error {
		key, err := s.key()
		if err != nil {
			return err
		}
		return member(key)
	})
}

// Array reads an array, calling elem with the Scanner at each element,
// which elem must read. An error from elem is returned as it is.
func (s *Scanner) Array(elem func() error) error {
	return s.list('[', ']', "an array", "',' or ']' after an array element", elem)
}

// key reads a member's key and its colon.
func (s *Scanner) key() ([]byte, error) {
	if s.Peek() != '"' {
		return nil, s.unexpected("a key")
	}
	start := s.i
	raw, esc, _, err := s.str()
	if err != nil {
		return nil, err
	}
	if esc {
		s.i = start
		return nil, s.fail("a key with an escape")
	}
	if s.Peek() != ':' {
		return nil, s.unexpected("':' after a key")
	}
	s.i++
	return raw, nil
}

// Str reads a string and returns its value as encoding/json decodes it.
func (s *Scanner) Str() (string, error) {
	if s.Peek() != '"' {
		return "", s.unexpected("a string")
	}
	raw, esc, wide, err := s.str()
	if err != nil {
		return "", err
	}
	if esc || wide && !utf8.Valid(raw) {
		return string(unquote(raw)), nil
	}
	if s.shared {
		return s.text[s.i-1-len(raw) : s.i-1], nil
	}
	return string(raw), nil
}

// plainByte says which bytes stand for themselves in a string: printable
// ASCII but '"' and '\\'.
var plainByte = func() (t [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str reads the string at s.i (its '"'): its bytes between the quotes,
// whether they hold an escape and whether they hold bytes beyond ASCII.
func (s *Scanner) str() (raw []byte, esc, wide bool, err error) {
	b := s.b
	start := s.i + 1
	for j := start; ; {
		for j < len(b) && plainByte[b[j]] {
			j++
		}
		if j >= len(b) {
			s.i = len(b)
			return nil, false, false, s.fail("text ends inside a string")
		}
		switch c := b[j]; {
		case c == '"':
			s.i = j + 1
			return b[start:j], esc, wide, nil
		case c == '\\':
			esc = true
			n, msg, ends := escapeLen(b[j:])
			if n == 0 {
				s.i = j
				if ends {
					s.i = len(b)
				}
				return nil, false, false, s.fail(msg)
			}
			j += n
		case c < ' ':
			s.i = j
			return nil, false, false, s.fail("a control character in a string")
		default:
			wide = true
			j++
		}
	}
}

// escapeLen is the length of the escape at the start of b, or 0 and why
// it is not one (ends: the text ends inside it).
func escapeLen(b []byte) (n int, msg string, ends bool) {
	if len(b) < 2 {
		return 0, "text ends inside an escape", true
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, "", false
	case 'u':
		for k := 2; k < 6; k++ {
			if k == len(b) {
				return 0, "text ends inside an escape", true
			}
			if c := b[k]; (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
				return 0, "an escape \\u without four hex digits", false
			}
		}
		return 6, "", false
	}
	return 0, "an invalid escape", false
}

// hex4 is the value of four hex digits, or -1.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// unquote decodes a string's bytes between its quotes, checked by str,
// as encoding/json does: escapes, surrogate pairs, U+FFFD for a lone
// surrogate and for each byte of invalid UTF-8.
func unquote(raw []byte) []byte {
	out := make([]byte, 0, len(raw)+8)
	for j := 0; j < len(raw); {
		c := raw[j]
		switch {
		case c == '\\':
			switch e := raw[j+1]; e {
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r := hex4(raw[j+2:])
				j += 6
				if utf16.IsSurrogate(r) {
					if j+6 <= len(raw) && raw[j] == '\\' && raw[j+1] == 'u' {
						if p := utf16.DecodeRune(r, hex4(raw[j+2:])); p != utf8.RuneError {
							out = utf8.AppendRune(out, p)
							j += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				out = utf8.AppendRune(out, r)
				continue
			default: // '"', '\\', '/'
				out = append(out, e)
			}
			j += 2
		case c < utf8.RuneSelf:
			out = append(out, c)
			j++
		default:
			r, n := utf8.DecodeRune(raw[j:])
			out = utf8.AppendRune(out, r)
			j += n
		}
	}
	return out
}

// Number reads a number, -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?,
// and returns its bytes.
func (s *Scanner) Number() ([]byte, error) {
	s.Peek()
	start, b, i := s.i, s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func(what string) error {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			s.i = i
			return s.unexpected(what)
		}
		return nil
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if err := digits("a number"); err != nil {
		return nil, err
	}
	if i < len(b) && b[i] == '.' {
		i++
		if err := digits("a digit after a decimal point"); err != nil {
			return nil, err
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if err := digits("a digit in an exponent"); err != nil {
			return nil, err
		}
	}
	s.i = i
	return b[start:i], nil
}

// Int reads a number that encoding/json decodes into an int64: an
// integer (no fraction or exponent; "-0" is 0) within int64's range.
func (s *Scanner) Int() (int64, error) {
	const limit = 1 << 63 // the magnitude of int64's least value
	c := s.Peek()
	start, b, i := s.i, s.b, s.i
	neg := c == '-'
	if neg {
		i++
	}
	first, over := i, false
	var v uint64
	if i < len(b) && b[i] == '0' {
		i++
	} else {
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			d := uint64(b[i] - '0')
			over = over || v > (limit-d)/10
			v = v*10 + d
			i++
		}
	}
	if i == first {
		s.i = i
		return 0, s.unexpected("an integer")
	}
	if i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E') {
		num, err := s.Number()
		if err != nil {
			return 0, err
		}
		s.i = start
		return 0, s.fail("a number that is not an integer (" + clip(num) + ")")
	}
	if over || !neg && v == limit {
		s.i = start
		return 0, s.fail("an integer out of int64's range (" + clip(b[start:i]) + ")")
	}
	s.i = i
	if neg {
		return -int64(v), nil // -(1<<63) is itself
	}
	return int64(v), nil
}

// clip is a number for an error message, its first 40 bytes at most.
func clip(num []byte) string {
	if len(num) > 40 {
		return string(num[:40]) + "…"
	}
	return string(num)
}

// Bool reads true or false.
func (s *Scanner) Bool() (bool, error) {
	switch s.Peek() {
	case 't':
		return true, s.lit("true")
	case 'f':
		return false, s.lit("false")
	}
	return false, s.unexpected("true or false")
}

// lit reads the literal word at s.i.
func (s *Scanner) lit(word string) error {
	rest := s.b[s.i:]
	if len(rest) < len(word) && string(rest) == word[:len(rest)] {
		s.i = len(s.b)
		return s.fail("text ends inside " + word)
	}
	if len(rest) < len(word) || string(rest[:len(word)]) != word {
		return s.fail("not the literal " + word)
	}
	s.i += len(word)
	return nil
}

// Skip reads any value, checking it, and drops it.
func (s *Scanner) Skip() error {
	switch s.Peek() {
	case '"':
		_, _, _, err := s.str()
		return err
	case '{':
		return s.Object(func([]byte) error { return s.Skip() })
	case '[':
		return s.Array(s.Skip)
	case 't':
		return s.lit("true")
	case 'f':
		return s.lit("false")
	case 'n':
		return s.lit("null")
	}
	_, err := s.Number()
	return err
}

// Value reads any value, checking it, and returns its bytes (to decode
// them with encoding/json, say).
func (s *Scanner) Value() ([]byte, error) {
	s.Peek()
	start := s.i
	if err := s.Skip(); err != nil {
		return nil, err
	}
	return s.b[start:s.i], nil
}
