package httpx

import (
	"encoding/json"
	"testing"
	"time"
)

func TestControlChar(t *testing.T) {
	for _, c := range []struct {
		s         string
		multiline bool
		char      rune
		pos       int
	}{
		{"Ana Silva", false, 0, 0},
		{"Ana\tSilva", false, 0, 0},
		{"São\x00Paulo", false, 0, 4}, // position in characters, not bytes
		{"a\x01", false, 1, 2},
		{"a\x1f", false, 0x1f, 2},
		{"a\x7f", false, 0x7f, 2},
		{"linha 1\nlinha 2", false, '\n', 8},
		{"linha 1\nlinha 2", true, 0, 0},
		{"linha 1\r\nlinha 2", true, 0, 0},
		{"linha 1\rlinha 2", true, '\r', 8},
		{"fim\r", true, '\r', 4},
		{"ü€😀", false, 0, 0},
	} {
		char, pos, ok := ControlChar(c.s, c.multiline)
		if ok != (c.pos != 0) || char != c.char || pos != c.pos {
			t.Errorf("ControlChar(%q, %v) = %U %d %v, want %U %d", c.s, c.multiline, char, pos, ok, c.char, c.pos)
		}
	}
}

type selfDecoding struct{ s string }

func (d *selfDecoding) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, &d.s) }

type textBody struct {
	Name    string            `json:"name"`
	Message *string           `json:"message" text:"multiline"`
	Lines   []string          `json:"lines"`
	Tags    map[string]string `json:"tags"`
	Any     any               `json:"any"`
	Raw     json.RawMessage   `json:"raw"`
	Self    selfDecoding      `json:"self"`
	When    *time.Time        `json:"when"`
	Inner   *struct {
		Note string `json:"note"`
	} `json:"inner"`
}

func TestDecodeRefusesControlCharacters(t *testing.T) {
	for _, c := range []struct{ body, pointer string }{
		{`{"name":"Ana\u0000Silva"}`, "/name"},
		{`{"name":"Ana\nSilva"}`, "/name"},
		{`{"message":"linha\rsolta"}`, "/message"},
		{`{"lines":["ok","a\u0002"]}`, "/lines/1"},
		{`{"tags":{"k":"v\u001b"}}`, "/tags/k"},
		{`{"tags":{"k\u0000":"v"}}`, "/tags/k\x00"},
		{`{"any":{"a":[1,"x\u0007"]}}`, "/any/a/1"},
		{`{"raw":{"b":"\u0000"}}`, "/raw/b"},
		{`{"self":"a\u0000"}`, "/self"},
		{`{"inner":{"note":"\u007f"}}`, "/inner/note"},
	} {
		var v textBody
		de := DecodeBytes([]byte(c.body), &v)
		if de == nil || de.Kind != ErrControlChar || de.Pointer != c.pointer || de.Status() != 400 {
			t.Errorf("%s: %+v, want a control character at %q", c.body, de, c.pointer)
		}
	}
	for _, body := range []string{
		`{"name":"Ana\tSilva","message":"linha 1\nlinha 2\r\nlinha 3","lines":["a\tb"],"tags":{"k":"v"},"any":"x","raw":"y","self":"z","when":"2026-01-01T00:00:00Z"}`,
		`{"name":"São Paulo – ü€😀"}`,
	} {
		var v textBody
		if de := DecodeBytes([]byte(body), &v); de != nil {
			t.Errorf("%s: %v", body, de)
		}
	}
}
