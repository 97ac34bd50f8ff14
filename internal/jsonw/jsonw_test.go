package jsonw

import (
	"encoding/json"
	"testing"
	"time"
)

// TestAppendString: every byte alone and inside a string, runes up to
// U+3000, and what encoding/json escapes or replaces (quotes, backslashes,
// <>&, controls, invalid UTF-8, U+2028/9) are quoted as it quotes them.
func TestAppendString(t *testing.T) {
	cases := []string{"", "abc", "São Paulo", "日本😀", `a"b`, `a\b`, "<a&b>", "\x00\x1f\x7f", "\u2028x\u2029", "\xff", "a\xc3", "ok\ttab",
		"\xed\xa0\x80", "nl\n", "\b\f\r", "€\xe2\x82"}
	for c := 0; c < 256; c++ {
		cases = append(cases, string([]byte{byte(c)}), "ab"+string([]byte{byte(c)})+"cd")
	}
	for r := rune(0x80); r < 0x3000; r += 7 {
		cases = append(cases, string(r))
	}
	for _, s := range cases {
		want, _ := json.Marshal(s)
		if got := AppendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("AppendString(%q) = %s, encoding/json %s", s, got[1:], want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "é", `"\`, "\u2028", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Fatalf("AppendString(%q) = %s, encoding/json %s", s, got, want)
		}
	})
}

func TestAppendTime(t *testing.T) {
	zones := []*time.Location{time.UTC, time.FixedZone("BRT", -3*3600), time.FixedZone("odd", 5*3600+30*60), time.FixedZone("secs", 3600+7),
		time.FixedZone("big", 24*3600), time.FixedZone("neg", -25*3600)}
	var times []time.Time
	for _, z := range zones {
		times = append(times,
			time.Date(2026, 11, 26, 12, 0, 0, 0, z),
			time.Date(2026, 1, 2, 3, 4, 5, 123456789, z),
			time.Date(2026, 1, 2, 3, 4, 5, 120000000, z),
			time.Date(0, 1, 1, 0, 0, 0, 0, z),
			time.Date(9999, 12, 31, 23, 59, 59, 999999999, z),
			time.Date(10000, 1, 1, 0, 0, 0, 0, z),
			time.Date(-1, 1, 1, 0, 0, 0, 0, z))
	}
	times = append(times, time.Time{})
	for _, tm := range times {
		want, err := json.Marshal(tm)
		got, ok := AppendTime(nil, tm)
		if ok != (err == nil) {
			t.Errorf("AppendTime(%v): ok %v, encoding/json %v", tm, ok, err)
			continue
		}
		if ok && string(got) != string(want) {
			t.Errorf("AppendTime(%v) = %s, encoding/json %s", tm, got, want)
		}
	}
}
