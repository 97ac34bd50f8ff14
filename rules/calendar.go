package rules

import (
	"sort"
	"time"
)

// Holiday is one national bank holiday.
type Holiday struct {
	Date time.Time // civil date, 00:00 UTC
	Name string
}

// Easter returns Easter Sunday of year y (Gregorian calendar, the anonymous
// "Meeus/Jones/Butcher" algorithm), as 00:00 UTC.
func Easter(y int) time.Time {
	a := y % 19
	b, c := y/100, y%100
	d, e := b/4, b%4
	f := (b + 8) / 25
	g := (b - f + 1) / 3
	h := (19*a + b - d - g + 15) % 30
	i, k := c/4, c%4
	l := (32 + 2*e + 2*i - h - k) % 7
	m := (a + 11*h + 22*l) / 451
	month := (h + l - 7*m + 114) / 31
	day := (h+l-7*m+114)%31 + 1
	return civil(y, time.Month(month), day)
}

// NationalHolidays returns the days of year y on which Brazilian banks do
// not open nationwide, sorted and without repeats: the national holidays
// (1 Jan, 21 Apr, 1 May, 7 Sep, 12 Oct, 2 Nov, 15 Nov, 20 Nov from 2024,
// 25 Dec) and the bank holidays moved by Easter (Carnival Monday and
// Tuesday, Good Friday, Corpus Christi). Ash Wednesday (banks open at
// noon), 24 and 31 Dec and state or municipal holidays are not included.
func NationalHolidays(y int) []Holiday {
	return append([]Holiday(nil), holidaysOf(y)...)
}

// Years whose holidays are computed once, at start-up.
const tableFrom, tableTo = 1970, 2199

var holidayTable = func() [][]Holiday {
	t := make([][]Holiday, tableTo-tableFrom+1)
	for y := range t {
		t[y] = computeHolidays(tableFrom + y)
	}
	return t
}()

// holidaysOf is NationalHolidays(y) without the copy: read only.
func holidaysOf(y int) []Holiday {
	if y >= tableFrom && y <= tableTo {
		return holidayTable[y-tableFrom]
	}
	return computeHolidays(y)
}

func computeHolidays(y int) []Holiday {
	e := Easter(y)
	hs := []Holiday{
		{civil(y, time.January, 1), "Confraternização Universal"},
		{e.AddDate(0, 0, -48), "Carnaval (segunda-feira)"},
		{e.AddDate(0, 0, -47), "Carnaval (terça-feira)"},
		{e.AddDate(0, 0, -2), "Sexta-feira Santa"},
		{civil(y, time.April, 21), "Tiradentes"},
		{civil(y, time.May, 1), "Dia do Trabalho"},
		{e.AddDate(0, 0, 60), "Corpus Christi"},
		{civil(y, time.September, 7), "Independência do Brasil"},
		{civil(y, time.October, 12), "Nossa Senhora Aparecida"},
		{civil(y, time.November, 2), "Finados"},
		{civil(y, time.November, 15), "Proclamação da República"},
		{civil(y, time.December, 25), "Natal"},
	}
	if y >= 2024 { // Lei 14.759/2023
		hs = append(hs, Holiday{civil(y, time.November, 20), "Dia Nacional de Zumbi e da Consciência Negra"})
	}
	sort.SliceStable(hs, func(i, j int) bool { return hs[i].Date.Before(hs[j].Date) })
	out := hs[:1]
	for _, h := range hs[1:] {
		if !h.Date.Equal(out[len(out)-1].Date) {
			out = append(out, h)
		}
	}
	return out
}

// IsHoliday reports whether the civil date d (in d's location) is one of
// NationalHolidays.
func IsHoliday(d time.Time) bool {
	d = dateOf(d)
	for _, h := range holidaysOf(d.Year()) {
		if h.Date.Equal(d) {
			return true
		}
	}
	return false
}

// IsBusinessDay reports whether the civil date d is a bank business day:
// Monday to Friday and not one of NationalHolidays.
func IsBusinessDay(d time.Time) bool {
	d = dateOf(d)
	if wd := d.Weekday(); wd == time.Saturday || wd == time.Sunday {
		return false
	}
	return !IsHoliday(d)
}

// NextBusinessDay returns d itself when it is a business day, else the
// first business day after it (the adjusted due date). The result is 00:00
// UTC.
func NextBusinessDay(d time.Time) time.Time {
	d = dateOf(d)
	for !IsBusinessDay(d) {
		d = d.AddDate(0, 0, 1)
	}
	return d
}

// DaysBetween returns the number of calendar days from the civil date from
// to the civil date to: to − from, negative when to is earlier.
func DaysBetween(from, to time.Time) int {
	return int((dateOf(to).Unix() - dateOf(from).Unix()) / 86400)
}

// BusinessDaysBetween counts the business days d with from < d ≤ to (0 when
// to is not after from): paying on Tuesday what fell due on Friday is 2
// business days late (Monday, Tuesday), or 1 when Monday is a holiday.
func BusinessDaysBetween(from, to time.Time) int {
	from, to = dateOf(from), dateOf(to)
	n := DaysBetween(from, to)
	if n <= 0 {
		return 0
	}
	count := n / 7 * 5
	wd := from.Weekday()
	for i := 0; i < n%7; i++ {
		wd = (wd + 1) % 7
		if wd != time.Saturday && wd != time.Sunday {
			count++
		}
	}
	for y := from.Year(); y <= to.Year(); y++ {
		for _, h := range holidaysOf(y) {
			if h.Date.After(from) && !h.Date.After(to) {
				if wd := h.Date.Weekday(); wd != time.Saturday && wd != time.Sunday {
					count--
				}
			}
		}
	}
	return count
}
