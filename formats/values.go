package formats

import (
	"strconv"
	"strings"
	"time"
	"unicode"

	"remessa/rules"
)

// maxMoneyIntDigits bounds the integer part of an amount: 15 digits of reais
// still fit an int64 of cents with room to spare.
const maxMoneyIntDigits = 15

func isSpaceLike(r rune) bool {
	return r == ' ' || r == '\t' || r == '\u00a0' || r == '\u202f' || r == '\u2007' || r == '\r' || r == '\n'
}

func stripSpaces(s string) string {
	if strings.IndexFunc(s, isSpaceLike) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !isSpaceLike(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// ParseMoney converts a human or spreadsheet amount to integer cents,
// exactly (no floating point). Accepted: "1.234,56", "R$ 1.234,56",
// "1234,5", "1234.56" (a numeric cell), "1,234.56", "-1.234,56",
// "(1.234,56)" and "1.234,56-" (negative), with spaces, NBSP and thin
// spaces anywhere. When both separators appear the last one is the decimal
// separator. A single separator is decimal, except a lone dot followed by
// exactly three digits ("1.234"), which is the pt-BR thousands separator.
// More than two decimals is an error, never rounded.
func ParseMoney(s string) (int64, error) {
	orig := s
	t := stripSpaces(s)
	neg := false
	setNeg := func() bool {
		if neg {
			return false
		}
		neg = true
		return true
	}
	bad := func(pt, en string) (int64, error) {
		return 0, valueErr(CodeBadMoney, orig, pt, en)
	}
	for i := 0; i < 3; i++ {
		switch {
		case strings.HasPrefix(t, "(") && strings.HasSuffix(t, ")") && len(t) >= 2:
			if !setNeg() {
				return bad("valor com dois sinais negativos", "amount with two minus signs")
			}
			t = t[1 : len(t)-1]
		case strings.HasPrefix(t, "-"):
			if !setNeg() {
				return bad("valor com dois sinais negativos", "amount with two minus signs")
			}
			t = t[1:]
		case strings.HasSuffix(t, "-") && len(t) > 1:
			if !setNeg() {
				return bad("valor com dois sinais negativos", "amount with two minus signs")
			}
			t = t[:len(t)-1]
		case strings.HasPrefix(t, "+"):
			t = t[1:]
		case len(t) >= 2 && (t[0] == 'R' || t[0] == 'r') && t[1] == '$':
			t = t[2:]
		}
	}
	if t == "" {
		if orig == "" || strings.TrimFunc(orig, isSpaceLike) == "" {
			return bad("valor vazio", "empty amount")
		}
		return bad("valor sem dígitos", "amount without digits")
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if (c < '0' || c > '9') && c != '.' && c != ',' {
			return bad("valor inválido: use dígitos, com vírgula decimal (ex.: 1.234,56)",
				"invalid amount: use digits with a decimal separator (e.g. 1,234.56 or 1.234,56)")
		}
	}
	lastDot, lastComma := strings.LastIndexByte(t, '.'), strings.LastIndexByte(t, ',')
	nDots, nCommas := strings.Count(t, "."), strings.Count(t, ",")
	var intPart, frac string
	var thousands byte
	switch {
	case nDots > 0 && nCommas > 0:
		dec := lastComma
		thousands = '.'
		if lastDot > lastComma {
			dec, thousands = lastDot, ','
		}
		if strings.Count(t, string(t[dec])) > 1 {
			return bad("separador decimal repetido", "repeated decimal separator")
		}
		intPart, frac = t[:dec], t[dec+1:]
	case nCommas == 1:
		intPart, frac = t[:lastComma], t[lastComma+1:]
	case nDots == 1 && len(t)-lastDot-1 == 3 && lastDot > 0:
		intPart, thousands = t, '.'
	case nDots == 1:
		intPart, frac = t[:lastDot], t[lastDot+1:]
	case nDots > 1:
		intPart, thousands = t, '.'
	case nCommas > 1:
		intPart, thousands = t, ','
	default:
		intPart = t
	}
	if thousands != 0 && strings.IndexByte(intPart, thousands) >= 0 {
		groups := strings.Split(intPart, string(thousands))
		for i, g := range groups {
			if !rules.AllDigits(g) || (i == 0 && len(g) > 3) || (i > 0 && len(g) != 3) {
				return bad("separador de milhar fora do lugar (ex.: 1.234.567,89)",
					"misplaced thousands separator (e.g. 1,234,567.89)")
			}
		}
		intPart = strings.Join(groups, "")
	}
	if intPart == "" && frac == "" {
		return bad("valor sem dígitos", "amount without digits")
	}
	if (intPart != "" && !rules.AllDigits(intPart)) || (frac != "" && !rules.AllDigits(frac)) {
		return bad("valor inválido", "invalid amount")
	}
	if len(frac) > 2 {
		return bad("mais de 2 casas decimais (centavos); o valor não é arredondado",
			"more than 2 decimal places (cents); amounts are never rounded")
	}
	intPart = strings.TrimLeft(intPart, "0")
	if len(intPart) > maxMoneyIntDigits {
		return bad("valor grande demais", "amount too large")
	}
	var cents int64
	for i := 0; i < len(intPart); i++ {
		cents = cents*10 + int64(intPart[i]-'0')
	}
	frac += "00"[:2-len(frac)]
	cents = cents*100 + int64(frac[0]-'0')*10 + int64(frac[1]-'0')
	if neg {
		cents = -cents
	}
	return cents, nil
}

// ParseMoneyCell parses the amount in a cell. A numeric spreadsheet cell
// stores a plain decimal with a dot ("1234.5" or "1.234"), so the pt-BR
// thousands rule of ParseMoney does not apply to it.
func ParseMoneyCell(c Cell) (int64, error) {
	if v, ok := parseMoneyFast(c.Value, c.Kind == KindNumber); ok {
		return v, nil
	}
	return parseMoneyCell(c)
}

// parseMoneyCell is ParseMoneyCell without the fast path.
func parseMoneyCell(c Cell) (int64, error) {
	if c.Kind == KindNumber || c.Kind == KindFormula && isPlainNumber(c.Value) {
		if i := strings.IndexByte(c.Value, '.'); i >= 0 && strings.IndexByte(c.Value[i+1:], '.') < 0 {
			return ParseMoney(strings.Replace(c.Value, ".", ",", 1))
		}
	}
	return ParseMoney(c.Value)
}

// parseMoneyFast reads the common shapes of an amount in one pass, with
// the same result as the general path: in a numeric cell "1234",
// "1234.5", "1234.56"; in text "150", "1234,56", "1.234,56" (at most 15
// digits). ok is false for anything else, which takes the general path.
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
	if digits > maxMoneyIntDigits || (group >= 0 && frac < 0) {
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

func isPlainNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	i := strings.IndexByte(s, '.')
	if i < 0 {
		return rules.AllDigits(s)
	}
	return (i == 0 || rules.AllDigits(s[:i])) && rules.AllDigits(s[i+1:])
}

// FormatMoney writes cents the pt-BR way without the currency sign:
// 123456 -> "1.234,56", -100 -> "-1,00". ParseMoney reads it back.
func FormatMoney(cents int64) string {
	neg := cents < 0
	u := uint64(cents)
	if neg {
		u = uint64(-cents)
	}
	ip := strconv.FormatUint(u/100, 10)
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i := 0; i < len(ip); i++ {
		if i > 0 && (len(ip)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteByte(ip[i])
	}
	f := u % 100
	b.WriteByte(',')
	b.WriteByte(byte('0' + f/10))
	b.WriteByte(byte('0' + f%10))
	return b.String()
}

// ParsePercent converts a percentage to integer units of 10^-scale percent:
// ("2%",2) = 200, ("0,033%",3) = 33, ("0.033",3) = 33, ("2",2) = 200.
// The % sign is optional; the decimal separator may be a comma or a dot;
// more decimals than scale is an error, never rounded.
func ParsePercent(s string, scale int) (int64, error) {
	orig := s
	bad := func(pt, en string) (int64, error) {
		return 0, valueErr(CodeBadPercent, orig, pt, en)
	}
	if scale < 0 || scale > 9 {
		return bad("escala inválida", "invalid scale")
	}
	t := stripSpaces(s)
	t = strings.TrimSuffix(t, "%")
	neg := false
	if strings.HasPrefix(t, "-") {
		neg, t = true, t[1:]
	} else {
		t = strings.TrimPrefix(t, "+")
	}
	if t == "" {
		return bad("percentual vazio", "empty percentage")
	}
	intPart, frac := t, ""
	if i := strings.IndexAny(t, ".,"); i >= 0 {
		intPart, frac = t[:i], t[i+1:]
		if strings.ContainsAny(frac, ".,") {
			return bad("percentual com mais de um separador decimal", "percentage with more than one decimal separator")
		}
	}
	if (intPart == "" && frac == "") || (intPart != "" && !rules.AllDigits(intPart)) || (frac != "" && !rules.AllDigits(frac)) {
		return bad("percentual inválido (ex.: 2% ou 0,033%)", "invalid percentage (e.g. 2% or 0.033%)")
	}
	if len(frac) > scale {
		return bad("casas decimais demais para um percentual (no máximo "+strconv.Itoa(scale)+")",
			"too many decimal places for a percentage (at most "+strconv.Itoa(scale)+")")
	}
	intPart = strings.TrimLeft(intPart, "0")
	if len(intPart)+scale > 17 {
		return bad("percentual grande demais", "percentage too large")
	}
	var v int64
	for i := 0; i < len(intPart); i++ {
		v = v*10 + int64(intPart[i]-'0')
	}
	for i := 0; i < scale; i++ {
		d := int64(0)
		if i < len(frac) {
			d = int64(frac[i] - '0')
		}
		v = v*10 + d
	}
	if neg {
		v = -v
	}
	return v, nil
}

// FormatPercent writes v units of 10^-scale percent the pt-BR way:
// (33,3) -> "0,033%", (200,2) -> "2%". ParsePercent reads it back.
func FormatPercent(v int64, scale int) string {
	neg := v < 0
	u := uint64(v)
	if neg {
		u = uint64(-v)
	}
	s := strconv.FormatUint(u, 10)
	if len(s) <= scale {
		s = strings.Repeat("0", scale-len(s)+1) + s
	}
	ip, fp := s[:len(s)-scale], strings.TrimRight(s[len(s)-scale:], "0")
	out := ip
	if fp != "" {
		out += "," + fp
	}
	if neg {
		out = "-" + out
	}
	return out + "%"
}

// ParseDate reads a civil date, returned at 00:00 UTC: "10/02/2027" and
// "10/2/2027" (day first, always; "-" and "." also separate), "2027-02-10"
// (optionally followed by a time, which is ignored), "20270210", and an
// Excel serial in the 1900 system ("46023", a fraction is a time of day and
// ignored). Two-digit years are refused.
func ParseDate(s string) (time.Time, error) {
	if t, ok := parseDateFast(s); ok {
		return t, nil
	}
	return parseDate(s)
}

// parseDate is ParseDate without the fast path.
func parseDate(s string) (time.Time, error) {
	orig := s
	t := strings.TrimFunc(s, isSpaceLike)
	bad := func(pt, en string) (time.Time, error) {
		return time.Time{}, valueErr(CodeBadDate, orig, pt, en)
	}
	if t == "" {
		return bad("data vazia", "empty date")
	}
	// Excel serial (1900 system) or compact YYYYMMDD.
	if ip, fp, ok := strings.Cut(t, "."); rules.AllDigits(ip) && (!ok || rules.AllDigits(fp)) {
		if len(ip) == 8 && !ok {
			return civilDate(orig, atoiSmall(ip[:4]), atoiSmall(ip[4:6]), atoiSmall(ip[6:]))
		}
		if len(ip) <= 7 {
			d, err := ExcelSerialToDate(t, false)
			if err != nil {
				return bad(err.(*ValueError).msgPT(), err.(*ValueError).msgEN())
			}
			return d, nil
		}
		return bad("data inválida; use dd/mm/aaaa", "invalid date; use dd/mm/yyyy")
	}
	// ISO: YYYY-MM-DD[T...]
	if len(t) >= 10 && rules.AllDigits(t[:4]) && (t[4] == '-' || t[4] == '/') && t[7] == t[4] && rules.AllDigits(t[5:7]) && rules.AllDigits(t[8:10]) {
		if len(t) == 10 || t[10] == 'T' || t[10] == ' ' {
			return civilDate(orig, atoiSmall(t[:4]), atoiSmall(t[5:7]), atoiSmall(t[8:10]))
		}
	}
	// dd/mm/yyyy hh:mm[:ss], as Excel exports a date-time cell to CSV: the
	// time is dropped.
	if sp := strings.IndexByte(t, ' '); sp > 0 && isClock(strings.TrimSpace(t[sp+1:])) {
		t = t[:sp]
	}
	parts := strings.FieldsFunc(t, func(r rune) bool { return r == '/' || r == '-' || r == '.' })
	if len(parts) == 3 && strings.Count(t, "/")+strings.Count(t, "-")+strings.Count(t, ".") == 2 {
		d, m, y := parts[0], parts[1], parts[2]
		if rules.AllDigits(d) && rules.AllDigits(m) && rules.AllDigits(y) && len(d) <= 2 && len(m) <= 2 {
			if len(y) != 4 {
				return bad("ano deve ter 4 dígitos (dd/mm/aaaa)", "the year must have 4 digits (dd/mm/yyyy)")
			}
			return civilDate(orig, atoiSmall(y), atoiSmall(m), atoiSmall(d))
		}
	}
	return bad("data inválida; use dd/mm/aaaa", "invalid date; use dd/mm/yyyy")
}

// parseDateFast reads the two common shapes, "dd/mm/yyyy" and
// "yyyy-mm-dd" (exactly ten characters), with the same result as the
// general path; ok is false for anything else, which takes it.
func parseDateFast(s string) (time.Time, bool) {
	if len(s) != 10 {
		return time.Time{}, false
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
	if y < 1900 || m < 1 || m > 12 || d < 1 || d > rules.DaysIn(y, time.Month(m)) {
		return time.Time{}, false
	}
	return time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC), true
}

// num is the value of a short run of ASCII digits, or -1.
func num(a string) int {
	n := 0
	for i := 0; i < len(a); i++ {
		if a[i] < '0' || a[i] > '9' {
			return -1
		}
		n = n*10 + int(a[i]-'0')
	}
	return n
}

// isClock reports whether s looks like hh:mm or hh:mm:ss.
func isClock(s string) bool {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return false
	}
	for _, p := range parts {
		if len(p) == 0 || len(p) > 2 || !rules.AllDigits(p) {
			return false
		}
	}
	return true
}

func (e *ValueError) msgPT() string {
	return strings.TrimPrefix(e.Message, strconv.Quote(e.Value)+": ")
}
func (e *ValueError) msgEN() string {
	return strings.TrimPrefix(e.MessageEN, strconv.Quote(e.Value)+": ")
}

func atoiSmall(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

func civilDate(orig string, y, m, d int) (time.Time, error) {
	if y < 1900 || y > 9999 || m < 1 || m > 12 || d < 1 || d > 31 {
		return time.Time{}, valueErr(CodeBadDate, orig, "data fora do calendário", "date outside the calendar")
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d {
		return time.Time{}, valueErr(CodeBadDate, orig, "dia inexistente nesse mês", "no such day in that month")
	}
	return t, nil
}

// FormatDate writes a civil date as dd/mm/yyyy; ParseDate reads it back.
func FormatDate(t time.Time) string { return t.Format("02/01/2006") }

var (
	excelEpoch1900  = time.Date(1899, 12, 31, 0, 0, 0, 0, time.UTC)
	excelEpoch1900b = time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)
	excelEpoch1904  = time.Date(1904, 1, 1, 0, 0, 0, 0, time.UTC)
)

// ExcelSerialToDate converts an Excel date serial, given as its decimal
// text ("46023", "46023.5"), to a civil date at 00:00 UTC; a fraction (the
// time of day) is dropped. In the 1900 system serial 1 is 1900-01-01 and
// serial 60 is Excel's non-existent 1900-02-29 (an error); from 61 on the
// date is 1899-12-30 + serial. In the 1904 system serial 0 is 1904-01-01.
func ExcelSerialToDate(serial string, date1904 bool) (time.Time, error) {
	orig := serial
	t := strings.TrimFunc(serial, isSpaceLike)
	bad := func(pt, en string) (time.Time, error) {
		return time.Time{}, valueErr(CodeBadSerial, orig, pt, en)
	}
	ip, fp, hasFrac := strings.Cut(t, ".")
	if !rules.AllDigits(ip) || (hasFrac && fp != "" && !rules.AllDigits(fp)) {
		return bad("número de série de data inválido", "invalid date serial number")
	}
	ip = strings.TrimLeft(ip, "0")
	if len(ip) > 7 {
		return bad("número de série de data fora do calendário", "date serial number outside the calendar")
	}
	n := atoiSmall(ip)
	var d time.Time
	switch {
	case date1904:
		d = excelEpoch1904.AddDate(0, 0, n)
	case n == 0:
		return bad("número de série 0 não é uma data", "serial 0 is not a date")
	case n == 60:
		return bad("29/02/1900 não existe (erro histórico do Excel)", "1900-02-29 does not exist (Excel's leap-year bug)")
	case n < 60:
		d = excelEpoch1900.AddDate(0, 0, n)
	default:
		d = excelEpoch1900b.AddDate(0, 0, n)
	}
	if d.Year() > 9999 {
		return bad("número de série de data fora do calendário", "date serial number outside the calendar")
	}
	return d, nil
}

// ExcelSerial converts a civil date back to its 1900-system serial (the
// inverse of ExcelSerialToDate for dates from 1900-03-01).
func ExcelSerial(t time.Time) int {
	d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	if d.Before(time.Date(1900, 3, 1, 0, 0, 0, 0, time.UTC)) {
		return int(d.Sub(excelEpoch1900).Hours() / 24)
	}
	return int(d.Sub(excelEpoch1900b).Hours() / 24)
}

// cleanDoc strips masks: everything but letters and digits goes; letters are
// uppercased.
func cleanDoc(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case unicode.IsLetter(r) && r < 128:
			b.WriteRune(unicode.ToUpper(r))
		}
	}
	return b.String()
}

// RestoreDocument strips a CPF/CNPJ mask ("." "-" "/" spaces) and
// uppercases letters (alphanumeric CNPJ). A number that lost its leading
// zeros in a spreadsheet is left-padded: up to 10 digits to a CPF of 11,
// 12 or 13 digits to a CNPJ of 14; restored is then true and the caller
// should warn. A numeric cell such as "1234567890.0" is accepted.
func RestoreDocument(s string) (clean string, restored bool) {
	if d, ok := cleanDocFast(s); ok {
		return d, false
	}
	return restoreDocument(s)
}

// restoreDocument is RestoreDocument without the fast path.
func restoreDocument(s string) (clean string, restored bool) {
	t := strings.TrimFunc(s, isSpaceLike)
	if ip, fp, ok := strings.Cut(t, "."); ok && rules.AllDigits(ip) && strings.Trim(fp, "0") == "" && fp != "" && strings.Count(t, ".") == 1 {
		t = ip // numeric cell with a zero fraction
	}
	c := cleanDoc(t)
	if !rules.AllDigits(c) {
		return c, false
	}
	switch n := len(c); {
	case n > 0 && n < 11:
		return strings.Repeat("0", 11-n) + c, true
	case n == 12 || n == 13:
		return strings.Repeat("0", 14-n) + c, true
	}
	return c, false
}

// cleanDocFast handles the three common shapes of a CPF/CNPJ cell with
// no allocation beyond the result (none when s is already clean): 11 or
// 14 letters and digits, "ddd.ddd.ddd-dd" and "XX.XXX.XXX/XXXX-dd",
// letters uppercased. ok is false for anything else, which takes the
// general path of RestoreDocument.
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
	n, same := 0, mask == ""
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
			same = false
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
	if same {
		return s, true
	}
	return string(buf[:n]), true
}

// IsScientific reports whether s is a number the way Excel shows one in
// scientific notation ("1,12223E+13", "5.29982e+10"): what a CSV keeps of a
// long number typed in a General cell, with digits lost for good.
func IsScientific(s string) bool {
	s = strings.TrimFunc(s, isSpaceLike)
	mant, exp, ok := strings.Cut(strings.ToUpper(s), "E")
	if !ok || len(exp) < 2 || (exp[0] != '+' && exp[0] != '-') || !rules.AllDigits(exp[1:]) {
		return false
	}
	ip, fp, hasPoint := strings.Cut(strings.Replace(mant, ",", ".", 1), ".")
	return rules.AllDigits(ip) && (!hasPoint || rules.AllDigits(fp))
}

// RestoreCEP strips a CEP mask ("01310-100", "01.310-100") and left-pads a
// CEP that lost its leading zero as a number ("1310100" -> "01310100",
// restored true).
func RestoreCEP(s string) (string, bool) {
	t := strings.TrimFunc(s, isSpaceLike)
	if ip, fp, ok := strings.Cut(t, "."); ok && rules.AllDigits(ip) && fp != "" && strings.Trim(fp, "0") == "" {
		t = ip
	}
	c := cleanDoc(t)
	if rules.AllDigits(c) && len(c) < 8 {
		return strings.Repeat("0", 8-len(c)) + c, true
	}
	return c, false
}

// normalizeNumber turns the text of a numeric spreadsheet cell ("1.5E-2",
// "1234.5599999999999") into the plain decimal Excel shows: rounded to 15
// significant digits, no exponent, no trailing zeros. Text that is not a
// number is returned unchanged with ok false.
func normalizeNumber(raw string) (string, bool) {
	return shiftNumber(raw, 0)
}

// shiftNumber is normalizeNumber of raw * 10^shift.
func shiftNumber(raw string, shift int) (string, bool) {
	s := raw
	neg := false
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	mant, expS, hasExp := strings.Cut(s, "E")
	if !hasExp {
		mant, expS, hasExp = strings.Cut(s, "e")
	}
	exp := 0
	if hasExp {
		e, err := strconv.Atoi(expS)
		if err != nil || e > 400 || e < -400 {
			return raw, false
		}
		exp = e
	}
	ip, fp, _ := strings.Cut(mant, ".")
	if (ip == "" && fp == "") || (ip != "" && !rules.AllDigits(ip)) || (fp != "" && !rules.AllDigits(fp)) {
		return raw, false
	}
	if !hasExp && shift == 0 && len(ip)+len(fp) <= 15 && (len(ip) <= 1 || ip[0] != '0') && (fp == "" || fp[len(fp)-1] != '0') && (fp != "" || !strings.Contains(mant, ".")) {
		return raw, true // fast path: already plain
	}
	digits := []byte(ip + fp)
	point := len(ip) + exp + shift
	for len(digits) > 0 && digits[0] == '0' {
		digits = digits[1:]
		point--
	}
	if len(digits) > 15 {
		round := digits[15] >= '5'
		digits = digits[:15]
		if round {
			i := 14
			for ; i >= 0; i-- {
				if digits[i] == '9' {
					digits[i] = '0'
					continue
				}
				digits[i]++
				break
			}
			if i < 0 {
				digits = append([]byte{'1'}, digits...)
				digits = digits[:15]
				point++
			}
		}
	}
	if len(digits) == 0 {
		return "0", true
	}
	var out string
	switch {
	case point <= 0:
		out = "0." + strings.Repeat("0", -point) + string(digits)
	case point >= len(digits):
		out = string(digits) + strings.Repeat("0", point-len(digits))
	default:
		out = string(digits[:point]) + "." + string(digits[point:])
	}
	if strings.Contains(out, ".") {
		out = strings.TrimRight(strings.TrimRight(out, "0"), ".")
	}
	if out == "" || out == "0" {
		return "0", true
	}
	if neg {
		out = "-" + out
	}
	return out, true
}
