package rules

import "strings"

// CleanDocument strips the usual mask characters (. - / and spaces) from a
// CPF or CNPJ and uppercases the rest. A value that is already clean is
// returned as it is (no allocation).
func CleanDocument(s string) string {
	clean := true
	for i := 0; i < len(s) && clean; i++ {
		switch c := s[i]; {
		case c == '.' || c == '-' || c == '/' || c == ' ' || c == '\t':
			clean = false
		case c >= 'a' && c <= 'z' || c >= 0x80:
			clean = false
		}
	}
	if clean {
		return s
	}
	b := make([]byte, 0, len(s))
	for _, r := range s {
		switch r {
		case '.', '-', '/', ' ', '\t', '\u00a0':
			continue
		}
		if r >= 'a' && r <= 'z' {
			r -= 'a' - 'A'
		}
		b = append(b, string(r)...)
	}
	return string(b)
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// AllDigits reports whether s is non-empty and made only of ASCII digits.
func AllDigits(s string) bool { return allDigits(s) }

// taxDV computes a CPF/CNPJ check digit over the first n characters of c
// (character value = ASCII code - 48) with weights counting down from
// first and wrapping from 2 back to 9 (CNPJ) or not at all (CPF, where
// first is n+1 and never reaches 2 before the end): r = sum mod 11; the
// digit is 0 if r < 2, else 11 - r.
func taxDV(c string, n, first int, wrap bool) int {
	sum, w := 0, first
	for i := 0; i < n; i++ {
		sum += int(c[i]-'0') * w
		if w--; w < 2 && wrap {
			w = 9
		}
	}
	if r := sum % 11; r >= 2 {
		return 11 - r
	}
	return 0
}

func allSame(c string) bool {
	for i := 1; i < len(c); i++ {
		if c[i] != c[0] {
			return false
		}
	}
	return true
}

// ValidCPF reports whether s (mask allowed) is a CPF: 11 digits after
// cleaning, both check digits right, and not all digits equal.
func ValidCPF(s string) bool {
	c := CleanDocument(s)
	if len(c) != 11 || !allDigits(c) || allSame(c) {
		return false
	}
	return taxDV(c, 9, 10, false) == int(c[9]-'0') && taxDV(c, 10, 11, false) == int(c[10]-'0')
}

// ValidCNPJ reports whether s (mask allowed, any case) is a CNPJ, numeric or
// alphanumeric (IN RFB 2.229/2024): [0-9A-Z]{12}[0-9]{2} with both check
// digits right. Character values are ASCII code - 48. A CNPJ made of one
// repeated digit is rejected.
func ValidCNPJ(s string) bool {
	c := CleanDocument(s)
	if len(c) != 14 {
		return false
	}
	for i := 0; i < 14; i++ {
		ch := c[i]
		switch {
		case ch >= '0' && ch <= '9':
		case ch >= 'A' && ch <= 'Z' && i < 12:
		default:
			return false
		}
	}
	if allSame(c) {
		return false
	}
	return taxDV(c, 12, 5, true) == int(c[12]-'0') && taxDV(c, 13, 6, true) == int(c[13]-'0')
}

// FormatCPF formats a CPF as "529.982.247-25". Input that does not clean to
// 11 characters is returned cleaned but otherwise unchanged.
func FormatCPF(s string) string {
	c := CleanDocument(s)
	if len(c) != 11 {
		return c
	}
	return c[0:3] + "." + c[3:6] + "." + c[6:9] + "-" + c[9:11]
}

// FormatCNPJ formats a CNPJ as "12.ABC.345/01DE-35". Input that does not
// clean to 14 characters is returned cleaned but otherwise unchanged.
func FormatCNPJ(s string) string {
	c := CleanDocument(s)
	if len(c) != 14 {
		return c
	}
	return c[0:2] + "." + c[2:5] + "." + c[5:8] + "/" + c[8:12] + "-" + c[12:14]
}

// MaskDocument hides most of a CPF or CNPJ for logs: a CPF becomes
// "***.982.247-**" and a CNPJ "12.ABC.***/****-**". Anything else is fully
// replaced by asterisks of the same length (so nothing leaks).
func MaskDocument(s string) string {
	c := CleanDocument(s)
	switch len(c) {
	case 11:
		return "***." + c[3:6] + "." + c[6:9] + "-**"
	case 14:
		return c[0:2] + "." + c[2:5] + ".***/****-**"
	}
	return strings.Repeat("*", len([]rune(c)))
}
