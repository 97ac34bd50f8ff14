package rules

import (
	"fmt"
	"math"
	"strconv"
)

// ParseDecimal parses a plain decimal string ("12.5", "-0.033", "+7") into
// an integer scaled by 10^scale, exactly and without floats: "12.5" with
// scale 2 gives 1250 and "0.033" with scale 3 gives 33. It accepts an
// optional leading sign, digits, and an optional "." followed by at most
// scale digits. It rejects empty input, any other character, more decimals
// than scale, and values that do not fit in an int64.
func ParseDecimal(s string, scale int) (int64, error) {
	if scale < 0 || scale > 18 {
		return 0, fmt.Errorf("decimal %q: scale %d out of range 0..18", s, scale)
	}
	if s == "" {
		return 0, fmt.Errorf("decimal: empty value")
	}
	i := 0
	neg := false
	if s[0] == '+' || s[0] == '-' {
		neg = s[0] == '-'
		i++
	}
	var v uint64
	// limit is the largest magnitude allowed: MaxInt64, or MaxInt64+1 for negatives.
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	intDigits, fracDigits := 0, 0
	seenDot := false
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.' && !seenDot:
			seenDot = true
			continue
		case c >= '0' && c <= '9':
		default:
			return 0, fmt.Errorf("decimal %q: invalid character %q at position %d", s, c, i+1)
		}
		if seenDot {
			fracDigits++
			if fracDigits > scale {
				return 0, fmt.Errorf("decimal %q: more than %d decimal places", s, scale)
			}
		} else {
			intDigits++
		}
		d := uint64(c - '0')
		if v > (limit-d)/10 {
			return 0, fmt.Errorf("decimal %q: out of range", s)
		}
		v = v*10 + d
	}
	if intDigits == 0 && fracDigits == 0 {
		return 0, fmt.Errorf("decimal %q: no digits", s)
	}
	for ; fracDigits < scale; fracDigits++ {
		if v > limit/10 {
			return 0, fmt.Errorf("decimal %q: out of range", s)
		}
		v *= 10
	}
	if neg {
		return int64(-v), nil // -v wraps correctly for MaxInt64+1
	}
	return int64(v), nil
}

// FormatPixAmount formats cents as a Pix decimal string with two decimals
// and no thousands separator: 123456 gives "1234.56", 5 gives "0.05".
func FormatPixAmount(cents int64) string {
	var buf [24]byte
	return string(AppendPixAmount(buf[:0], cents))
}

// AppendPixAmount appends FormatPixAmount(cents) to b.
func AppendPixAmount(b []byte, cents int64) []byte {
	neg, u := sign(cents)
	if neg {
		b = append(b, '-')
	}
	b = strconv.AppendUint(b, u/100, 10)
	return append(b, '.', byte('0'+u%100/10), byte('0'+u%10))
}

// sign splits cents into its sign and magnitude (MinInt64 included).
func sign(cents int64) (neg bool, u uint64) {
	if cents < 0 {
		return true, uint64(-cents)
	}
	return false, uint64(cents)
}

// ParsePixAmount parses a Pix amount string, strictly ^\d{1,10}\.\d{2}$ as
// the Pix API requires, into cents.
func ParsePixAmount(s string) (int64, error) {
	n := len(s)
	if n < 4 || n > 13 || s[n-3] != '.' {
		return 0, fmt.Errorf("valor Pix %q: formato esperado 0.00 (até 10 dígitos, ponto e 2 decimais)", s)
	}
	for i := 0; i < n; i++ {
		if i == n-3 {
			continue
		}
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("valor Pix %q: formato esperado 0.00 (até 10 dígitos, ponto e 2 decimais)", s)
		}
	}
	return ParseDecimal(s, 2)
}

// FormatBRL formats cents the Brazilian way: 123456 gives "R$ 1.234,56" and
// -100 gives "-R$ 1,00".
func FormatBRL(cents int64) string {
	neg, u := sign(cents)
	b := make([]byte, 0, 32)
	if neg {
		b = append(b, '-')
	}
	b = append(b, "R$ "...)
	ip := strconv.FormatUint(u/100, 10)
	for i := range len(ip) {
		if i > 0 && (len(ip)-i)%3 == 0 {
			b = append(b, '.')
		}
		b = append(b, ip[i])
	}
	return string(append(b, ',', byte('0'+u%100/10), byte('0'+u%10)))
}
