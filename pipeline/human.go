package pipeline

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
	"unicode"

	"remessa/formats"
	"remessa/rules"
)

// isPercent reports whether s is written as a percentage.
func isPercent(s string) bool { return strings.HasSuffix(strings.TrimSpace(s), "%") }

// fold lowercases and strips accents and repeated spaces.
func fold(s string) string {
	t := transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
	r, _, err := transform.String(t, s)
	if err != nil {
		r = s
	}
	return strings.Join(strings.Fields(strings.ToLower(r)), " ")
}

var (
	reISODate = regexp.MustCompile(`^\d{4}-\d{1,2}-\d{1,2}$`)
	reBRDate  = regexp.MustCompile(`^\d{1,2}[/.-]\d{1,2}[/.-]\d{4}$`)
	reRelN    = regexp.MustCompile(`^([+-])\s*(\d{1,4})\s*(d|dia|dias|day|days|w|sem|semana|semanas|week|weeks|m|mes|meses|month|months)$`)
	reDayOf   = []*regexp.Regexp{
		regexp.MustCompile(`^dia (\d{1,2}) (?:do|no) (proximo mes|mes que vem|mes seguinte)$`),
		regexp.MustCompile(`^(proximo mes|mes que vem),? dia (\d{1,2})$`),
		regexp.MustCompile(`^day (\d{1,2}) of (next month)$`),
		regexp.MustCompile(`^(next month),? day (\d{1,2})$`),
		regexp.MustCompile(`^dia (\d{1,2}) (?:deste|do|neste|no) (mes atual|este mes|mes)$`),
		regexp.MustCompile(`^dia (\d{1,2}) (deste mes)$`),
		regexp.MustCompile(`^day (\d{1,2}) of (this month)$`),
		regexp.MustCompile(`^(this month),? day (\d{1,2})$`),
		regexp.MustCompile(`^dia (\d{1,2}) daqui a (\d{1,2}) mes(?:es)?$`),
		regexp.MustCompile(`^day (\d{1,2}) in (\d{1,2}) months?$`),
		regexp.MustCompile(`^(?:dia|day) (\d{1,2})$`),
	}
)

// ParseDateExpr converts an absolute or relative date into a civil date,
// relative to today (a civil date in São Paulo). The grammar, in
// Portuguese and English, accent- and case-insensitive:
//
//	2027-02-10 | 10/02/2027              absolute
//	hoje | today | amanhã | tomorrow
//	+30d | +2 semanas | +1m | +3 meses   today plus days, weeks or months (month end clamped)
//	dia 10 do próximo mês | dia 10 do mês que vem | próximo mês dia 10
//	day 10 of next month | next month day 10
//	dia 10 deste mês | day 10 of this month | this month day 10
//	dia 5 daqui a 2 meses | day 5 in 2 months
//	dia 10 | day 10                       the next day 10 after today
//
// A day beyond the month's end is clamped to its last day ("dia 31" in
// February is the 28th or 29th).
func ParseDateExpr(s string, today time.Time) (time.Time, error) {
	if t, err := formats.ParseDate(s); err == nil {
		return t, nil
	} else if reISODate.MatchString(strings.TrimSpace(s)) || reBRDate.MatchString(strings.TrimSpace(s)) {
		return time.Time{}, err
	}
	f := fold(s)
	switch f {
	case "hoje", "today":
		return today, nil
	case "amanha", "tomorrow":
		return today.AddDate(0, 0, 1), nil
	}
	if g := reRelN.FindStringSubmatch(f); g != nil {
		n, _ := strconv.Atoi(g[2])
		if g[1] == "-" {
			n = -n
		}
		switch g[3][0] {
		case 'd':
			return today.AddDate(0, 0, n), nil
		case 'w', 's':
			return today.AddDate(0, 0, 7*n), nil
		default:
			return rules.AddMonthsClamped(today, n), nil
		}
	}
	for i, re := range reDayOf {
		g := re.FindStringSubmatch(f)
		if g == nil {
			continue
		}
		var dayS, which string
		if _, err := strconv.Atoi(g[1]); err == nil {
			dayS = g[1]
			if len(g) > 2 {
				which = g[2]
			}
		} else {
			which, dayS = g[1], g[2]
		}
		day, _ := strconv.Atoi(dayS)
		if day < 1 || day > 31 {
			break
		}
		months := 0
		if n, err := strconv.Atoi(which); err == nil {
			months = n
		} else if strings.Contains(which, "next") || strings.Contains(which, "proximo") || strings.Contains(which, "que vem") || strings.Contains(which, "seguinte") {
			months = 1
		}
		d := dayInMonth(today, months, day)
		if i == len(reDayOf)-1 && !d.After(today) { // "dia N": the next one after today
			d = dayInMonth(today, 1, day)
		}
		return d, nil
	}
	return time.Time{}, bilingual(
		fmt.Sprintf("data %q não reconhecida: use dd/mm/aaaa, aaaa-mm-dd, +30d, \"dia 10 do próximo mês\" ou \"dia 10\"", s),
		fmt.Sprintf("date %q not recognised: use dd/mm/yyyy, yyyy-mm-dd, +30d, \"day 10 of next month\" or \"day 10\"", s))
}

// dayInMonth is day (clamped to the month's end) of the month months after
// today's.
func dayInMonth(today time.Time, months, day int) time.Time {
	first := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, months, 0)
	if dim := rules.DaysIn(first.Year(), first.Month()); day > dim {
		day = dim
	}
	return time.Date(first.Year(), first.Month(), day, 0, 0, 0, 0, time.UTC)
}
