package rules

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestParseDecimal(t *testing.T) {
	ok := []struct {
		s     string
		scale int
		want  int64
	}{
		{"12.5", 2, 1250}, {"0.033", 3, 33}, {"12", 2, 1200}, {"12.", 2, 1200}, {".5", 2, 50},
		{"+7", 0, 7}, {"-7.25", 2, -725}, {"-0.01", 2, -1}, {"0", 2, 0}, {"000123.40", 2, 12340},
		{"1234.56", 2, 123456}, {"2", 4, 20000},
		{"9223372036854775807", 0, math.MaxInt64}, {"-9223372036854775808", 0, math.MinInt64},
		{"92233720368547758.07", 2, math.MaxInt64}, {"-92233720368547758.08", 2, math.MinInt64},
	}
	for _, c := range ok {
		got, err := ParseDecimal(c.s, c.scale)
		if err != nil || got != c.want {
			t.Errorf("ParseDecimal(%q, %d) = %d, %v; want %d", c.s, c.scale, got, err, c.want)
		}
	}
	bad := []struct {
		s     string
		scale int
		why   string
	}{
		{"", 2, "empty"}, {"+", 2, "no digits"}, {"-", 2, "no digits"}, {".", 2, "no digits"}, {"-.", 2, "no digits"},
		{"1.234", 2, "decimal places"}, {"0.0331", 3, "decimal places"}, {"1.0", 0, "decimal places"},
		{"1,50", 2, "invalid character"}, {"1.2.3", 2, "invalid character"}, {" 1", 2, "invalid character"}, {"1 ", 2, "invalid character"},
		{"1e3", 2, "invalid character"}, {"--1", 2, "invalid character"}, {"+-1", 2, "invalid character"}, {"R$1", 2, "invalid character"},
		{"١", 2, "invalid character"},
		{"9223372036854775808", 0, "out of range"}, {"-9223372036854775809", 0, "out of range"},
		{"92233720368547758.08", 2, "out of range"}, {"92233720368547758", 3, "out of range"},
		{"99999999999999999999999", 2, "out of range"},
		{"1", -1, "scale"}, {"1", 19, "scale"},
	}
	for _, c := range bad {
		_, err := ParseDecimal(c.s, c.scale)
		if err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("ParseDecimal(%q, %d) err = %v, want %q", c.s, c.scale, err, c.why)
		}
	}
}

func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"12.5", "-0.033", "+7", "", ".", "9223372036854775807", "1.234"} {
		f.Add(s, 2)
	}
	f.Fuzz(func(t *testing.T, s string, scale int) {
		scale = ((scale % 7) + 7) % 7
		v, err := ParseDecimal(s, scale)
		if err != nil {
			return
		}
		// Round trip through an exact formatting of v at the given scale.
		neg := v < 0
		u := uint64(v)
		if neg {
			u = -u
		}
		p := uint64(1)
		for range scale {
			p *= 10
		}
		txt := strconv.FormatUint(u/p, 10)
		if scale > 0 {
			frac := strconv.FormatUint(u%p, 10)
			txt += "." + strings.Repeat("0", scale-len(frac)) + frac
		}
		if neg {
			txt = "-" + txt
		}
		back, err := ParseDecimal(txt, scale)
		if err != nil || back != v {
			t.Fatalf("%q -> %d -> %q -> %d, %v", s, v, txt, back, err)
		}
		// Accepted input contains only sign, digits and at most one dot.
		if strings.Trim(s, "+-.0123456789") != "" || strings.Count(s, ".") > 1 {
			t.Fatalf("accepted junk %q", s)
		}
	})
}

func TestPixAmount(t *testing.T) {
	for cents, want := range map[int64]string{123456: "1234.56", 5: "0.05", 0: "0.00", 100: "1.00", -150: "-1.50", 999999999999: "9999999999.99"} {
		if got := FormatPixAmount(cents); got != want {
			t.Errorf("FormatPixAmount(%d) = %q, want %q", cents, got, want)
		}
	}
	for s, want := range map[string]int64{"1234.56": 123456, "0.01": 1, "0.00": 0, "9999999999.99": 999999999999, "0012.30": 1230} {
		got, err := ParsePixAmount(s)
		if err != nil || got != want {
			t.Errorf("ParsePixAmount(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "1", "1.5", "1.500", "1,50", "-1.00", "+1.00", ".50", "12345678901.00", "1.5a", " 1.50", "1.-5"} {
		if _, err := ParsePixAmount(s); err == nil {
			t.Errorf("ParsePixAmount(%q): want error", s)
		}
	}
}

func TestFormatBRL(t *testing.T) {
	cases := map[int64]string{
		123456: "R$ 1.234,56", -100: "-R$ 1,00", 0: "R$ 0,00", 5: "R$ 0,05", 99999: "R$ 999,99",
		100000: "R$ 1.000,00", 123456789012: "R$ 1.234.567.890,12", math.MinInt64: "-R$ 92.233.720.368.547.758,08",
	}
	for c, want := range cases {
		if got := FormatBRL(c); got != want {
			t.Errorf("FormatBRL(%d) = %q, want %q", c, got, want)
		}
	}
}
