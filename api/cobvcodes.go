package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"
)

// A page of GET /v2/cobv read in one pass for ListCobVCodes: a batch's
// listing is 1,000 charges of about 1 KB each, of which the run keeps five
// strings, and encoding/json reads it twice (it checks the whole text,
// then decodes it, skipping what it does not keep with the same checks).
// decodeCobVCodes reads exactly what json.Unmarshal reads into a
// CobVCodePage, checking the text as it goes; anything it does not read
// the same way for certain (a key that differs only in case or holds an
// escape, a member repeated where decoding merges, a value of another
// type, nesting deeper than maxCodesDepth) is an error, and the caller
// decodes the answer with encoding/json then (TestDecodeCobVCodes,
// FuzzDecodeCobVCodes).

var errCodesSlow = errors.New("api: página de cobv a decodificar por encoding/json")

const maxCodesDepth = 200

type codesReader struct {
	b []byte
	i int
}

// decodeCobVCodes decodes b into p as json.Unmarshal would, or fails.
func decodeCobVCodes(b []byte, p *CobVCodePage) error {
	r := codesReader{b: b}
	r.ws()
	if err := r.page(p); err != nil {
		return err
	}
	r.ws()
	if r.i != len(b) {
		return errCodesSlow
	}
	return nil
}

func (r *codesReader) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// key reads an object's key and its colon: the key's bytes when it holds
// no escape (else an error).
func (r *codesReader) key() ([]byte, error) {
	r.ws()
	s, esc, err := r.str()
	if err != nil || esc {
		return nil, errCodesSlow
	}
	r.ws()
	if r.i >= len(r.b) || r.b[r.i] != ':' {
		return nil, errCodesSlow
	}
	r.i++
	r.ws()
	return s, nil
}

// str reads a string at r.i: its bytes between the quotes, and whether it
// holds an escape or bytes that are not valid UTF-8 (then the text must
// be unquoted by encoding/json).
func (r *codesReader) str() (s []byte, slow bool, err error) {
	if r.i >= len(r.b) || r.b[r.i] != '"' {
		return nil, false, errCodesSlow
	}
	start := r.i + 1
	ascii := true
	for j := start; j < len(r.b); j++ {
		c := r.b[j]
		switch {
		case c == '"':
			r.i = j + 1
			s = r.b[start:j]
			return s, slow || !ascii && !utf8.Valid(s), nil
		case c == '\\':
			slow = true
			j++
			if j >= len(r.b) {
				return nil, false, errCodesSlow
			}
			switch r.b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(r.b) {
					return nil, false, errCodesSlow
				}
				for k := j + 1; k <= j+4; k++ {
					if !isHex(r.b[k]) {
						return nil, false, errCodesSlow
					}
				}
				j += 4
			default:
				return nil, false, errCodesSlow
			}
		case c < 0x20:
			return nil, false, errCodesSlow
		case c >= 0x80:
			ascii = false
		}
	}
	return nil, false, errCodesSlow
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// text reads a string value into *dst as json.Unmarshal would.
func (r *codesReader) text(dst *string) error {
	start := r.i
	s, slow, err := r.str()
	if err != nil {
		return err
	}
	if !slow {
		*dst = string(s)
		return nil
	}
	return json.Unmarshal(r.b[start:r.i], dst)
}

// skip reads any value, checking it.
func (r *codesReader) skip(depth int) error {
	if depth > maxCodesDepth || r.i >= len(r.b) {
		return errCodesSlow
	}
	switch c := r.b[r.i]; {
	case c == '"':
		_, _, err := r.str()
		return err
	case c == '{':
		return r.object(depth, func([]byte) error { return r.skip(depth + 1) })
	case c == '[':
		return r.array(depth, func() error { return r.skip(depth + 1) })
	case c == 't':
		return r.lit("true")
	case c == 'f':
		return r.lit("false")
	case c == 'n':
		return r.lit("null")
	default:
		return r.number()
	}
}

func (r *codesReader) lit(s string) error {
	if !bytes.HasPrefix(r.b[r.i:], []byte(s)) {
		return errCodesSlow
	}
	r.i += len(s)
	return nil
}

// number reads a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (r *codesReader) number() error {
	b, i := r.b, r.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() bool {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > j
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		return errCodesSlow
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return errCodesSlow
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return errCodesSlow
		}
	}
	r.i = i
	return nil
}

// object reads an object, calling member for each key with r.i at its value.
func (r *codesReader) object(depth int, member func(key []byte) error) error {
	if depth > maxCodesDepth || r.i >= len(r.b) || r.b[r.i] != '{' {
		return errCodesSlow
	}
	r.i++
	r.ws()
	if r.i < len(r.b) && r.b[r.i] == '}' {
		r.i++
		return nil
	}
	for {
		k, err := r.key()
		if err != nil {
			return err
		}
		if err := member(k); err != nil {
			return err
		}
		r.ws()
		if r.i >= len(r.b) {
			return errCodesSlow
		}
		switch r.b[r.i] {
		case ',':
			r.i++
		case '}':
			r.i++
			return nil
		default:
			return errCodesSlow
		}
	}
}

// array reads an array, calling elem with r.i at each element.
func (r *codesReader) array(depth int, elem func() error) error {
	if depth > maxCodesDepth || r.i >= len(r.b) || r.b[r.i] != '[' {
		return errCodesSlow
	}
	r.i++
	r.ws()
	if r.i < len(r.b) && r.b[r.i] == ']' {
		r.i++
		return nil
	}
	for {
		r.ws()
		if err := elem(); err != nil {
			return err
		}
		r.ws()
		if r.i >= len(r.b) {
			return errCodesSlow
		}
		switch r.b[r.i] {
		case ',':
			r.i++
		case ']':
			r.i++
			return nil
		default:
			return errCodesSlow
		}
	}
}

// is reports whether key is name; a key that encoding/json could match
// with name otherwise (case, Unicode folding) is an error.
func is(key []byte, name string, err *error) bool {
	if string(key) == name {
		return true
	}
	if *err == nil && (strings.EqualFold(string(key), name) || !isASCII(key)) {
		*err = errCodesSlow
	}
	return false
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

func (r *codesReader) page(p *CobVCodePage) error {
	seenPar, seenCobs := false, false
	return r.object(0, func(k []byte) error {
		var err error
		switch {
		case is(k, "parametros", &err):
			if seenPar {
				return errCodesSlow
			}
			seenPar = true
			start := r.i
			if err := r.skip(1); err != nil {
				return err
			}
			return json.Unmarshal(r.b[start:r.i], &p.Parametros)
		case is(k, "cobs", &err):
			if seenCobs || r.i >= len(r.b) || r.b[r.i] != '[' {
				return errCodesSlow // null, another type or repeated: encoding/json
			}
			seenCobs = true
			p.Cobs = make([]CobVCode, 0, bytes.Count(r.b[r.i:], []byte(`"txid"`)))
			return r.array(1, func() error {
				p.Cobs = append(p.Cobs, CobVCode{})
				return r.cob(&p.Cobs[len(p.Cobs)-1])
			})
		}
		if err != nil {
			return err
		}
		return r.skip(1)
	})
}

func (r *codesReader) cob(c *CobVCode) error {
	if r.i >= len(r.b) || r.b[r.i] != '{' {
		return errCodesSlow
	}
	return r.object(2, func(k []byte) error {
		var err error
		switch {
		case is(k, "txid", &err):
			return r.text(&c.Txid)
		case is(k, "location", &err):
			return r.text(&c.Location)
		case is(k, "pixCopiaECola", &err):
			return r.text(&c.PixCopiaECola)
		case is(k, "calendario", &err):
			if r.i >= len(r.b) || r.b[r.i] != '{' {
				return errCodesSlow
			}
			return r.object(3, func(k []byte) error {
				var err error
				if is(k, "dataDeVencimento", &err) {
					return r.text(&c.Calendario.DataDeVencimento)
				}
				if err != nil {
					return err
				}
				return r.skip(4)
			})
		case is(k, "loc", &err):
			if r.i >= len(r.b) || r.b[r.i] != '{' {
				return errCodesSlow
			}
			if c.Loc == nil {
				c.Loc = &struct {
					Location string `json:"location"`
				}{}
			}
			return r.object(3, func(k []byte) error {
				var err error
				if is(k, "location", &err) {
					return r.text(&c.Loc.Location)
				}
				if err != nil {
					return err
				}
				return r.skip(4)
			})
		}
		if err != nil {
			return err
		}
		return r.skip(3)
	})
}
