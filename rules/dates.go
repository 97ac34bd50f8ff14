package rules

import (
	"fmt"
	"time"
)

// SaoPaulo is the São Paulo wall clock: UTC-3, without daylight saving time
// since 2019.
var SaoPaulo = time.FixedZone("America/Sao_Paulo", -3*3600)

// civil returns the civil date y-m-d as 00:00 UTC.
func civil(y int, m time.Month, d int) time.Time {
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// dateOf returns the civil date of t in t's own location, as 00:00 UTC.
func dateOf(t time.Time) time.Time {
	y, m, d := t.Date()
	return civil(y, m, d)
}

// Today returns the civil date of now in São Paulo, as 00:00 UTC.
func Today(now time.Time) time.Time {
	return dateOf(now.In(SaoPaulo))
}

// ParseISODate parses a strict YYYY-MM-DD date (exactly 10 characters, a real
// calendar day) into 00:00 UTC.
func ParseISODate(s string) (time.Time, error) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return time.Time{}, fmt.Errorf("data %q: formato esperado AAAA-MM-DD", s)
	}
	for i, c := range []byte(s) {
		if i == 4 || i == 7 {
			continue
		}
		if c < '0' || c > '9' {
			return time.Time{}, fmt.Errorf("data %q: formato esperado AAAA-MM-DD", s)
		}
	}
	t, err := time.ParseInLocation("2006-01-02", s, time.UTC)
	if err != nil {
		return time.Time{}, fmt.Errorf("data %q: data inexistente", s)
	}
	return t, nil
}

// DaysIn returns the number of days of month m of year y (proleptic
// Gregorian calendar).
func DaysIn(y int, m time.Month) int {
	switch m {
	case time.April, time.June, time.September, time.November:
		return 30
	case time.February:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	}
	return 31
}

// FormatISODate writes the civil date of t (in t's location) as
// YYYY-MM-DD, the inverse of ParseISODate.
func FormatISODate(t time.Time) string {
	var buf [10]byte
	return string(AppendISODate(buf[:0], t))
}

// AppendISODate appends FormatISODate(t) to b.
func AppendISODate(b []byte, t time.Time) []byte {
	y, m, d := t.Date()
	if y < 0 || y > 9999 {
		return t.AppendFormat(b, "2006-01-02")
	}
	return append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+int(m)/10), byte('0'+int(m)%10), '-', byte('0'+d/10), byte('0'+d%10))
}

// AddMonthsClamped adds n months (n may be negative) to the civil date d,
// keeping the day of month when it exists and otherwise clamping to the
// last day of the target month: Jan 31 + 1 gives Feb 28 (or 29 in leap
// years). The result is 00:00 UTC.
func AddMonthsClamped(d time.Time, n int) time.Time {
	y, m, day := d.Date()
	total := int(m) - 1 + n
	ny := y + total/12
	nm := total % 12
	if nm < 0 {
		nm += 12
		ny--
	}
	month := time.Month(nm + 1)
	if last := DaysIn(ny, month); day > last {
		day = last
	}
	return civil(ny, month, day)
}
