package pix

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"unicode/utf8"
)

// decodeAnyFast is decodeAny for the bodies most requests send, in one
// pass without encoding/json's reflection: the same generic values (maps,
// []any, strings, json.Number, bools, nil). false, and decodeAny decodes
// by encoding/json (with its error messages), for anything else: a syntax
// error, data after the value, a string with an escape, a control
// character or invalid UTF-8 (encoding/json would rewrite it), nesting
// deeper than maxFastDepth. cobjson_any_test.go compares it with
// encoding/json on fuzzed bodies.
func decodeAnyFast(body []byte) (any, bool) {
	p := anyParser{s: body}
	v, ok := p.value(0)
	if !ok {
		return nil, false
	}
	p.ws()
	if p.i != len(p.s) {
		return nil, false
	}
	return v, true
}

// maxFastDepth bounds the nesting decodeAnyFast follows (encoding/json's
// own limit, 10,000, is reached through it).
const maxFastDepth = 200

type anyParser struct {
	s []byte
	i int
}

func (p *anyParser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *anyParser) value(depth int) (any, bool) {
	p.ws()
	if p.i >= len(p.s) || depth > maxFastDepth {
		return nil, false
	}
	switch c := p.s[p.i]; {
	case c == '{':
		p.i++
		m := map[string]any{}
		p.ws()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return m, true
		}
		for {
			p.ws()
			k, ok := p.key()
			if !ok {
				return nil, false
			}
			p.ws()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return nil, false
			}
			p.i++
			v, ok := p.value(depth + 1)
			if !ok {
				return nil, false
			}
			m[k] = v
			p.ws()
			if p.i >= len(p.s) {
				return nil, false
			}
			switch p.s[p.i] {
			case ',':
				p.i++
			case '}':
				p.i++
				return m, true
			default:
				return nil, false
			}
		}
	case c == '[':
		p.i++
		a := []any{}
		p.ws()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return a, true
		}
		for {
			v, ok := p.value(depth + 1)
			if !ok {
				return nil, false
			}
			a = append(a, v)
			p.ws()
			if p.i >= len(p.s) {
				return nil, false
			}
			switch p.s[p.i] {
			case ',':
				p.i++
			case ']':
				p.i++
				return a, true
			default:
				return nil, false
			}
		}
	case c == '"':
		s, ok := p.str()
		return s, ok
	case c == '-' || ('0' <= c && c <= '9'):
		return p.number()
	case c == 't':
		return true, p.lit("true")
	case c == 'f':
		return false, p.lit("false")
	case c == 'n':
		return nil, p.lit("null")
	}
	return nil, false
}

func (p *anyParser) lit(word string) bool {
	if len(p.s)-p.i < len(word) || string(p.s[p.i:p.i+len(word)]) != word {
		return false
	}
	p.i += len(word)
	return true
}

// key is str for an object's key: the known member names of the Pix
// bodies (knownKeys) without allocating a string each time.
func (p *anyParser) key() (string, bool) {
	if p.i < len(p.s) && p.s[p.i] == '"' {
		if end := bytes.IndexByte(p.s[p.i+1:], '"'); end >= 0 {
			if k, ok := knownKeys[string(p.s[p.i+1:p.i+1+end])]; ok {
				p.i += end + 2
				return k, true
			}
		}
	}
	return p.str()
}

// knownKeys holds the JSON member names of Cob and what it holds, and of
// a batch's body.
var knownKeys = func() map[string]string {
	m := map[string]string{"cobsv": "cobsv", "descricao": "descricao"}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return
		}
		for i := range t.NumField() {
			f := t.Field(i)
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" {
				m[name] = name
			}
			walk(f.Type)
		}
	}
	walk(reflect.TypeFor[Cob]())
	return m
}()

// str reads a string without escapes, controls or invalid UTF-8.
func (p *anyParser) str() (string, bool) {
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		return "", false
	}
	start := p.i + 1
	ascii := true
	for i := start; i < len(p.s); i++ {
		switch c := p.s[i]; {
		case c == '"':
			b := p.s[start:i]
			if !ascii && !utf8.Valid(b) {
				return "", false
			}
			p.i = i + 1
			return string(b), true
		case c == '\\' || c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", false
}

// number reads a number as the JSON grammar has it, kept as its text.
func (p *anyParser) number() (any, bool) {
	s, i := p.s, p.i
	start := i
	if s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return nil, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return nil, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	p.i = i
	return json.Number(s[start:i]), true
}
