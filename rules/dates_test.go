package rules

import (
	"testing"
	"time"
)

func TestToday(t *testing.T) {
	// 02:59 UTC on the 10th is still the 9th in São Paulo; 03:00 is the 10th.
	cases := map[time.Time]string{
		time.Date(2026, 3, 10, 2, 59, 0, 0, time.UTC):                   "2026-03-09",
		time.Date(2026, 3, 10, 3, 0, 0, 0, time.UTC):                    "2026-03-10",
		time.Date(2026, 3, 10, 23, 0, 0, 0, SaoPaulo):                   "2026-03-10",
		time.Date(2026, 3, 10, 1, 0, 0, 0, time.FixedZone("x", 9*3600)): "2026-03-09",
	}
	for now, want := range cases {
		got := Today(now)
		if got.Format(time.DateOnly) != want || got.Location() != time.UTC || got.Hour() != 0 {
			t.Errorf("Today(%s) = %s, want %s 00:00 UTC", now, got, want)
		}
	}
	if _, off := time.Date(2026, 1, 1, 0, 0, 0, 0, SaoPaulo).Zone(); off != -3*3600 {
		t.Errorf("SaoPaulo offset %d", off)
	}
}

func TestParseISODate(t *testing.T) {
	for _, s := range []string{"2026-03-10", "2028-02-29", "1999-12-31"} {
		got, err := ParseISODate(s)
		if err != nil || got.Format(time.DateOnly) != s || got.Location() != time.UTC {
			t.Errorf("ParseISODate(%q) = %s, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "2026-3-10", "2026/03/10", "10/03/2026", "2026-02-30", "2027-02-29", "2026-13-01", "2026-00-10", "2026-03-10T00:00:00Z", " 2026-03-10", "+026-03-10", "2026-03-1a"} {
		if _, err := ParseISODate(s); err == nil {
			t.Errorf("ParseISODate(%q): want error", s)
		}
	}
}

func TestAddMonthsClamped(t *testing.T) {
	cases := []struct {
		from string
		n    int
		want string
	}{
		{"2027-01-31", 1, "2027-02-28"},
		{"2028-01-31", 1, "2028-02-29"},
		{"2026-12-15", 1, "2027-01-15"},
		{"2026-12-31", 1, "2027-01-31"},
		{"2026-01-31", 2, "2026-03-31"},
		{"2026-01-31", 3, "2026-04-30"},
		{"2026-01-30", 13, "2027-02-28"},
		{"2026-05-10", 0, "2026-05-10"},
		{"2026-03-31", -1, "2026-02-28"},
		{"2026-01-15", -1, "2025-12-15"},
		{"2026-01-15", -13, "2024-12-15"},
		{"2026-01-31", 24, "2028-01-31"},
		{"2026-08-31", 6, "2027-02-28"},
	}
	for _, c := range cases {
		if got := AddMonthsClamped(d(c.from), c.n); got.Format(time.DateOnly) != c.want {
			t.Errorf("AddMonthsClamped(%s, %d) = %s, want %s", c.from, c.n, got.Format(time.DateOnly), c.want)
		}
	}
	// A carnet from Jan 31: each parcel counts from the first date, so March is back on the 31st.
	start := d("2027-01-31")
	want := []string{"2027-01-31", "2027-02-28", "2027-03-31", "2027-04-30", "2027-05-31"}
	for i, w := range want {
		if got := AddMonthsClamped(start, i).Format(time.DateOnly); got != w {
			t.Errorf("parcel %d: %s, want %s", i+1, got, w)
		}
	}
}

func TestDaysInAndFormatISODate(t *testing.T) {
	for d := time.Date(1899, 12, 25, 0, 0, 0, 0, time.UTC); d.Year() < 2101; d = d.AddDate(0, 0, 1) {
		if got := FormatISODate(d); got != d.Format("2006-01-02") {
			t.Fatalf("FormatISODate(%v) = %q", d, got)
		}
		if d.Day() == 1 {
			// the day before the 1st of the next month is the last day
			if got, want := DaysIn(d.Year(), d.Month()), d.AddDate(0, 1, -1).Day(); got != want {
				t.Fatalf("DaysIn(%d, %v) = %d, want %d", d.Year(), d.Month(), got, want)
			}
		}
	}
	for _, c := range []struct {
		y    int
		m    time.Month
		want int
	}{{1900, 2, 28}, {2000, 2, 29}, {2024, 2, 29}, {2027, 2, 28}, {2027, 12, 31}, {2027, 4, 30}} {
		if got := DaysIn(c.y, c.m); got != c.want {
			t.Errorf("DaysIn(%d, %d) = %d, want %d", c.y, c.m, got, c.want)
		}
	}
}
