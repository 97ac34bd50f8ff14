package pipeline

import (
	"strconv"
	"time"

	"remessa/formats"
)

// Fast paths for the per-row checks. Each is equivalent to the rules or
// formats function named in its comment (fast_test.go checks that on
// generated and fuzzed input); they exist because validation runs them on
// every row of files with a million rows, where a regular expression or
// fmt.Sprintf per field dominates the time.

// pixAmount is rules.FormatPixAmount without fmt.
func pixAmount(cents int64) string {
	var buf [24]byte
	b := buf[:0]
	u := uint64(cents)
	if cents < 0 {
		b = append(b, '-')
		u = uint64(-cents)
	}
	b = strconv.AppendUint(b, u/100, 10)
	b = append(b, '.', byte('0'+u%100/10), byte('0'+u%10))
	return string(b)
}

// isoDate writes a civil date as YYYY-MM-DD (time.Format without the
// layout interpretation).
func isoDate(t time.Time) string {
	y, m, d := t.Date()
	if y < 0 || y > 9999 {
		return t.Format("2006-01-02")
	}
	b := [10]byte{byte('0' + y/1000), byte('0' + y/100%10), byte('0' + y/10%10), byte('0' + y%10), '-',
		byte('0' + int(m)/10), byte('0' + int(m)%10), '-', byte('0' + d/10), byte('0' + d%10)}
	return string(b[:])
}

// cleanDocFast handles the three common shapes of a CPF/CNPJ cell
// without allocating more than the result: 11 or 14 letters and digits as
// they are, "ddd.ddd.ddd-dd" and "XX.XXX.XXX/XXXX-dd". It uppercases
// letters, like formats.RestoreDocument; ok is false for anything else,
// which then goes to formats.RestoreDocument.
func cleanDocFast(s string) (string, bool) {
	var mask string
	switch {
	case len(s) == 18:
		mask = "__.___.___/____-__"
	case len(s) == 14 && s[3] == '.':
		mask = "___.___.___-__"
	case len(s) == 11 || len(s) == 14:
	default:
		return "", false
	}
	var buf [14]byte
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if mask != "" && mask[i] != '_' {
			if c != mask[i] {
				return "", false
			}
			continue
		}
		switch {
		case c >= '0' && c <= '9':
		case c >= 'A' && c <= 'Z':
		case c >= 'a' && c <= 'z':
			c -= 'a' - 'A'
		default:
			return "", false
		}
		if n == len(buf) {
			return "", false
		}
		buf[n] = c
		n++
	}
	if n != 11 && n != 14 {
		return "", false
	}
	return string(buf[:n]), true
}

// restoreDocument is formats.RestoreDocument with the fast path first.
func restoreDocument(s string) (string, bool) {
	if d, ok := cleanDocFast(s); ok {
		return d, false
	}
	return formats.RestoreDocument(s)
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// validEmail is rules.ValidEmail (its regular expression, by hand): a
// local part of [A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+, "@", and at least two
// dot-separated labels of 1 to 63 letters, digits and inner hyphens; at
// most 254 characters.
func validEmail(s string) bool {
	if len(s) > 254 {
		return false
	}
	at := -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '@' {
			at = i
			break
		}
		if !isAlnum(c) && !isLocalSym(c) {
			return false
		}
	}
	if at < 1 {
		return false
	}
	labels, start := 0, at+1
	for i := at + 1; i <= len(s); i++ {
		if i < len(s) && s[i] != '.' {
			c := s[i]
			if !isAlnum(c) && c != '-' {
				return false
			}
			continue
		}
		l := s[start:i]
		if len(l) < 1 || len(l) > 63 || !isAlnum(l[0]) || !isAlnum(l[len(l)-1]) {
			return false
		}
		labels++
		start = i + 1
	}
	return labels >= 2
}

func isLocalSym(c byte) bool {
	switch c {
	case '.', '!', '#', '$', '%', '&', '\'', '*', '+', '/', '=', '?', '^', '_', '`', '{', '|', '}', '~', '-':
		return true
	}
	return false
}

// validCEP is rules.ValidCEP: ^\d{5}-?\d{3}$.
func validCEP(s string) bool {
	switch len(s) {
	case 8:
		return isDigits(s)
	case 9:
		return s[5] == '-' && isDigits(s[:5]) && isDigits(s[6:])
	}
	return false
}

// validPhone is rules.ValidPhone: ^[1-9]{2}9?[0-9]{8}$.
func validPhone(s string) bool {
	switch len(s) {
	case 10:
	case 11:
		if s[2] != '9' {
			return false
		}
	default:
		return false
	}
	return s[0] >= '1' && s[0] <= '9' && s[1] >= '1' && s[1] <= '9' && isDigits(s[2:])
}

// cleanPhone is rules.CleanPhone without a builder when nothing needs
// removing.
func cleanPhone(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ' || c == '(' || c == ')' || c == '-' || c == '.' || c == '\t' || c == '+' || c >= 0x80:
			clean = false
		}
	}
	if clean {
		return s
	}
	var buf [32]byte
	b := buf[:0]
	for _, r := range s {
		switch r {
		case ' ', '(', ')', '-', '.', '\u00a0', '\t':
			continue
		}
		b = append(b, string(r)...)
	}
	p := string(b)
	if len(p) >= 3 && p[:3] == "+55" {
		p = p[3:]
	}
	return p
}

// validCPF is rules.ValidCPF for an 11-digit string, without allocating.
func validCPF(c string) bool {
	if len(c) != 11 || !isDigits(c) {
		return false
	}
	same := true
	for i := 1; i < 11; i++ {
		same = same && c[i] == c[0]
	}
	if same {
		return false
	}
	dv := func(n int) int {
		sum := 0
		for i := 0; i < n; i++ {
			sum += int(c[i]-'0') * (n + 1 - i)
		}
		if r := sum % 11; r >= 2 {
			return 11 - r
		}
		return 0
	}
	return dv(9) == int(c[9]-'0') && dv(10) == int(c[10]-'0')
}

// parseDateFast reads "dd/mm/yyyy" and "yyyy-mm-dd" exactly (ten
// characters) like formats.ParseDate; ok is false for anything else, which
// then goes to formats.ParseDate.
func parseDateFast(s string) (time.Time, bool) {
	if len(s) != 10 {
		return time.Time{}, false
	}
	num := func(a string) int {
		n := 0
		for i := 0; i < len(a); i++ {
			if a[i] < '0' || a[i] > '9' {
				return -1
			}
			n = n*10 + int(a[i]-'0')
		}
		return n
	}
	var y, m, d int
	switch {
	case s[2] == '/' && s[5] == '/':
		d, m, y = num(s[:2]), num(s[3:5]), num(s[6:])
	case s[4] == '-' && s[7] == '-':
		y, m, d = num(s[:4]), num(s[5:7]), num(s[8:])
	default:
		return time.Time{}, false
	}
	if y < 1900 || m < 1 || m > 12 || d < 1 || d > daysIn(y, time.Month(m)) {
		return time.Time{}, false
	}
	return time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC), true
}

// parseDate is formats.ParseDate with the fast path first.
func parseDate(s string) (time.Time, error) {
	if t, ok := parseDateFast(s); ok {
		return t, nil
	}
	return formats.ParseDate(s)
}

// parseMoneyFast reads the common shapes of an amount exactly like
// formats.ParseMoneyCell: in a numeric cell "1234", "1234.5", "1234.56";
// in text "150", "1234,56", "1.234,56" (at most 15 digits). ok is false for
// anything else, which goes to formats.ParseMoneyCell.
func parseMoneyFast(s string, numeric bool) (int64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	var v int64
	digits, frac := 0, -1 // frac counts digits after the decimal separator
	group := -1           // text: digits since the last thousands dot (-1: no dot seen)
	dec := byte(',')
	if numeric {
		dec = '.'
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			v = v*10 + int64(c-'0')
			digits++
			if frac >= 0 {
				frac++
			} else if group >= 0 {
				group++
			}
		case c == dec && frac < 0 && digits > 0:
			if group >= 0 && group != 3 {
				return 0, false
			}
			frac = 0
		case !numeric && c == '.' && frac < 0 && digits > 0 && digits <= 3 && group < 0:
			group = 0
		case !numeric && c == '.' && frac < 0 && group == 3:
			group = 0
		default:
			return 0, false
		}
	}
	if digits > 15 || (group >= 0 && frac < 0) {
		return 0, false
	}
	switch {
	case frac < 0:
		return v * 100, true
	case frac == 1 && numeric:
		return v * 10, true
	case frac == 2:
		return v, true
	}
	return 0, false
}
