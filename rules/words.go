package rules

import (
	"strconv"
	"time"
)

// The words dates, months and times are shown in to people: one place for
// the reports, the reconciliation and the desk.

var monthsPT = [...]string{"jan", "fev", "mar", "abr", "mai", "jun", "jul", "ago", "set", "out", "nov", "dez"}

// FormatMonth shows a month "2026-12" as "dez/2026" (pt) or "Dec 2026"
// (en). Anything that is not YYYY-MM is returned unchanged.
func FormatMonth(lang, ym string) string {
	t, err := time.Parse("2006-01", ym)
	if err != nil {
		return ym
	}
	if lang == "en" {
		return t.Format("Jan 2006")
	}
	return monthsPT[t.Month()-1] + "/" + strconv.Itoa(t.Year())
}

// FormatDate shows a civil date "2026-12-10" as "10/12/2026" (pt) or
// unchanged (en). Anything that is not YYYY-MM-DD is returned unchanged.
func FormatDate(lang, iso string) string {
	if lang == "en" || len(iso) != 10 {
		return iso
	}
	if _, err := ParseISODate(iso); err != nil {
		return iso
	}
	return iso[8:10] + "/" + iso[5:7] + "/" + iso[0:4]
}

// FormatTime shows an RFC 3339 instant in São Paulo time: "28/11/2026
// 01:31" (pt) or "2026-11-28 01:31" (en), to the minute. Anything that is
// not RFC 3339 is returned unchanged.
func FormatTime(lang, ts string) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return ts
	}
	t = t.In(SaoPaulo)
	if lang == "en" {
		return t.Format("2006-01-02 15:04")
	}
	return t.Format("02/01/2006 15:04")
}
