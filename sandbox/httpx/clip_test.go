package httpx

import (
	"strings"
	"testing"
)

func TestClip(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc…"},
		{"çãoé", 2, "çã…"}, // runes, not bytes
		{"", 5, ""},
	} {
		if got := Clip(c.in, c.n); got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// An unknown property with a huge name is reported with a clipped name.
func TestUnknownPropertyNameClipped(t *testing.T) {
	var v struct {
		A int `json:"a"`
	}
	name := strings.Repeat("k", 50000)
	de := DecodeBytes([]byte(`{"`+name+`":1}`), &v)
	if de == nil || de.Kind != ErrUnknownProperty {
		t.Fatalf("%+v", de)
	}
	if len(de.Message) > 200 || len(de.Pointer) > 200 || !strings.HasPrefix(de.Pointer, "/kkk") {
		t.Fatalf("pointer %d bytes, message %d bytes", len(de.Pointer), len(de.Message))
	}
}
