package rules

import "strings"

// CleanDocument strips the usual mask characters (. - / and spaces) from a
// CPF or CNPJ and uppercases the rest.
func CleanDocument(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch r {
		case '.', '-', '/', ' ', '\t', '\u00a0':
			continue
		}
		if r >= 'a' && r <= 'z' {
			r -= 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
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

// taxDV computes a CPF/CNPJ check digit from values and weights:
// r = sum mod 11; 0 if r < 2, else 11 - r.
func taxDV(vals []int, weights []int) int {
	sum := 0
	for i, v := range vals {
		sum += v * weights[i]
	}
	r := sum % 11
	if r < 2 {
		return 0
	}
	return 11 - r
}

// ValidCPF reports whether s (mask allowed) is a CPF: 11 digits after
// cleaning, both check digits right, and not all digits equal.
func ValidCPF(s string) bool {
	c := CleanDocument(s)
	if len(c) != 11 || !allDigits(c) {
		return false
	}
	if strings.Count(c, c[:1]) == 11 {
		return false
	}
	vals := make([]int, 11)
	for i := range 11 {
		vals[i] = int(c[i] - '0')
	}
	w1 := []int{10, 9, 8, 7, 6, 5, 4, 3, 2}
	w2 := []int{11, 10, 9, 8, 7, 6, 5, 4, 3, 2}
	return taxDV(vals[:9], w1) == vals[9] && taxDV(vals[:10], w2) == vals[10]
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
	vals := make([]int, 14)
	for i := range 14 {
		ch := c[i]
		switch {
		case ch >= '0' && ch <= '9':
		case ch >= 'A' && ch <= 'Z' && i < 12:
		default:
			return false
		}
		vals[i] = int(ch) - 48
	}
	if strings.Count(c, c[:1]) == 14 {
		return false
	}
	w1 := []int{5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2}
	w2 := []int{6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2}
	return taxDV(vals[:12], w1) == vals[12] && taxDV(vals[:13], w2) == vals[13]
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
