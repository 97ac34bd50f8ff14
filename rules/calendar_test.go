package rules

import (
	"testing"
	"time"
)

func day(s string) time.Time {
	d, err := ParseISODate(s)
	if err != nil {
		panic(err)
	}
	return d
}

func TestEaster(t *testing.T) {
	// Published Easter Sundays.
	want := map[int]string{
		2024: "2024-03-31", 2025: "2025-04-20", 2026: "2026-04-05", 2027: "2027-03-28",
		2028: "2028-04-16", 2029: "2029-04-01", 2030: "2030-04-21", 2031: "2031-04-13",
		2032: "2032-03-28", 2033: "2033-04-17", 2034: "2034-04-09", 2035: "2035-03-25",
		2000: "2000-04-23", 2019: "2019-04-21",
	}
	for y, w := range want {
		if got := FormatISODate(Easter(y)); got != w {
			t.Errorf("Easter(%d) = %s, want %s", y, got, w)
		}
	}
}

func TestNationalHolidays(t *testing.T) {
	// Carnival Monday/Tuesday, Good Friday and Corpus Christi as published
	// in the FEBRABAN bank-holiday calendars.
	movable := []string{
		"2024-02-12", "2024-02-13", "2024-03-29", "2024-05-30",
		"2025-03-03", "2025-03-04", "2025-04-18", "2025-06-19",
		"2026-02-16", "2026-02-17", "2026-04-03", "2026-06-04",
		"2027-02-08", "2027-02-09", "2027-03-26", "2027-05-27",
		"2028-02-28", "2028-02-29", "2028-04-14", "2028-06-15",
	}
	for _, s := range movable {
		if !IsHoliday(day(s)) || IsBusinessDay(day(s)) {
			t.Errorf("%s should be a bank holiday", s)
		}
	}
	fixed := []string{"2026-01-01", "2026-04-21", "2026-05-01", "2026-09-07", "2026-10-12", "2026-11-02",
		"2026-11-15", "2026-11-20", "2026-12-25", "2035-11-20"}
	for _, s := range fixed {
		if !IsHoliday(day(s)) {
			t.Errorf("%s should be a national holiday", s)
		}
	}
	// Ash Wednesday, 24 and 31 Dec, Nov 20 before Lei 14.759/2023, and
	// São Paulo's own holidays are business days here.
	for _, s := range []string{"2026-02-18", "2026-12-24", "2026-12-31", "2023-11-20", "2027-01-25", "2026-07-09"} {
		if !IsBusinessDay(day(s)) {
			t.Errorf("%s should be a business day", s)
		}
	}
	if n := len(NationalHolidays(2026)); n != 13 {
		t.Errorf("2026: %d holidays, want 13 (9 fixed + 4 movable)", n)
	}
	if n := len(NationalHolidays(2023)); n != 12 {
		t.Errorf("2023: %d holidays, want 12 (no 20 Nov yet)", n)
	}
	hs := NationalHolidays(2030)
	for i := 1; i < len(hs); i++ {
		if !hs[i].Date.After(hs[i-1].Date) {
			t.Errorf("2030 holidays not sorted/unique at %d: %v", i, hs)
		}
	}
	// Weekends.
	if IsBusinessDay(day("2026-03-14")) || IsBusinessDay(day("2026-03-15")) || !IsBusinessDay(day("2026-03-16")) {
		t.Error("2026-03-14/15 is a weekend, 16 a Monday")
	}
	// A time in São Paulo late at night is still that civil day.
	if IsBusinessDay(time.Date(2026, 4, 3, 23, 0, 0, 0, SaoPaulo)) {
		t.Error("Good Friday 23:00 in São Paulo")
	}
}

func TestNextBusinessDay(t *testing.T) {
	cases := map[string]string{
		"2026-03-10": "2026-03-10", // Tuesday
		"2026-03-14": "2026-03-16", // Saturday → Monday
		"2026-04-03": "2026-04-06", // Good Friday → Monday
		"2026-02-14": "2026-02-18", // Carnival Saturday → Ash Wednesday
		"2026-11-20": "2026-11-23", // Consciência Negra (Friday) → Monday
		"2026-12-25": "2026-12-28", // Christmas (Friday) → Monday
		"2028-02-28": "2028-03-01", // Carnival Monday of a leap year → Ash Wednesday
	}
	for in, want := range cases {
		if got := FormatISODate(NextBusinessDay(day(in))); got != want {
			t.Errorf("NextBusinessDay(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestBusinessDaysBetween(t *testing.T) {
	cases := []struct {
		from, to string
		want     int
	}{
		{"2026-03-10", "2026-03-10", 0},
		{"2026-03-10", "2026-03-09", 0},
		{"2026-03-10", "2026-03-11", 1},
		{"2026-03-13", "2026-03-16", 1},   // Fri → Mon
		{"2026-03-13", "2026-03-15", 0},   // Fri → Sun
		{"2026-03-10", "2026-03-20", 8},   // 11,12,13,16..20
		{"2026-04-02", "2026-04-07", 2},   // Good Friday, weekend: 6, 7
		{"2026-02-13", "2026-02-19", 2},   // Carnival: 18, 19
		{"2026-12-24", "2027-01-04", 5},   // 28,29,30,31 Dec, 4 Jan
		{"2026-01-01", "2026-12-31", 249}, // 2 Jan..31 Dec: 260 weekdays − 11 holidays on weekdays (15 Nov is a Sunday)
	}
	for _, c := range cases {
		if got := BusinessDaysBetween(day(c.from), day(c.to)); got != c.want {
			t.Errorf("BusinessDaysBetween(%s, %s) = %d, want %d", c.from, c.to, got, c.want)
		}
	}
	if DaysBetween(day("2028-02-28"), day("2028-03-01")) != 2 || DaysBetween(day("2026-03-01"), day("2026-02-28")) != -1 {
		t.Error("DaysBetween")
	}
}
