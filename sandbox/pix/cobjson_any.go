package pix

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"unicode/utf8"

	"remessa/internal/jsonscan"
)

// decodeAnyFast is decodeAny for the bodies requests send, in one pass
// without encoding/json's reflection (internal/jsonscan's tokenizer): the
// same generic values (maps, []any, strings, json.Number, bools, nil).
// false, and decodeAny decodes by encoding/json (with its error
// messages), for anything jsonscan refuses (a syntax error, a key with an
// escape, nesting deeper than jsonscan.MaxDepth), a key that is not valid
// UTF-8 (encoding/json would rewrite it) and data after the value.
// cobjson_any_test.go compares it with encoding/json on fuzzed bodies.
func decodeAnyFast(body []byte) (any, bool) {
	s := jsonscan.New(body)
	v, err := anyValue(&s)
	if err != nil || s.End() != nil {
		return nil, false
	}
	return v, true
}

// errAnyKey is a key decodeAnyFast leaves to encoding/json.
var errAnyKey = errors.New("pix: a key that is not valid UTF-8")

// anyValue reads one value as encoding/json decodes it into an any with
// UseNumber.
func anyValue(s *jsonscan.Scanner) (any, error) {
	switch s.Peek() {
	case '{':
		m := map[string]any{}
		err := s.Object(func(key []byte) error {
			k, ok := knownKeys[string(key)] // the usual names, not allocated
			if !ok {
				if !utf8.Valid(key) {
					return errAnyKey
				}
				k = string(key)
			}
			v, err := anyValue(s)
			m[k] = v
			return err
		})
		return m, err
	case '[':
		a := []any{}
		err := s.Array(func() error {
			v, err := anyValue(s)
			a = append(a, v)
			return err
		})
		return a, err
	case '"':
		return s.Str()
	case 't', 'f':
		return s.Bool()
	case 'n':
		return nil, s.Skip() // null
	}
	n, err := s.Number()
	return json.Number(n), err
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
