package rules

// The checks below are written by hand, not with regular expressions:
// validation runs them on every row of files with a million rows. Each
// doc comment gives the pattern it implements (fields_test.go checks them
// against those patterns on generated and fuzzed input).

// ValidUF reports whether s is one of the 27 Brazilian federative units
// (26 states and DF), as an uppercase two-letter code.
func ValidUF(s string) bool {
	if len(s) != 2 {
		return false
	}
	switch s {
	case "AC", "AL", "AP", "AM", "BA", "CE", "DF", "ES", "GO", "MA", "MT", "MS", "MG", "PA",
		"PB", "PR", "PE", "PI", "RJ", "RN", "RS", "RO", "RR", "SC", "SP", "SE", "TO":
		return true
	}
	return false
}

// ValidCEP reports whether s is a CEP: 8 digits, optionally as NNNNN-NNN
// (^\d{5}-?\d{3}$). The format does not prove the CEP exists.
func ValidCEP(s string) bool {
	switch len(s) {
	case 8:
		return allDigits(s)
	case 9:
		return s[5] == '-' && allDigits(s[:5]) && allDigits(s[6:])
	}
	return false
}

// ValidEmail reports whether s looks like an e-mail address: a local part
// of [A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+, @, and a domain of at least two
// dot-separated labels of 1 to 63 letters, digits and inner hyphens; at
// most 254 characters.
func ValidEmail(s string) bool {
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
		if !isAlnumByte(c) && !isEmailLocalSym(c) {
			return false
		}
	}
	if at < 1 {
		return false
	}
	labels, start := 0, at+1
	for i := at + 1; i <= len(s); i++ {
		if i < len(s) && s[i] != '.' {
			if c := s[i]; !isAlnumByte(c) && c != '-' {
				return false
			}
			continue
		}
		l := s[start:i]
		if len(l) < 1 || len(l) > 63 || !isAlnumByte(l[0]) || !isAlnumByte(l[len(l)-1]) {
			return false
		}
		labels++
		start = i + 1
	}
	return labels >= 2
}

func isAlnumByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isEmailLocalSym(c byte) bool {
	switch c {
	case '.', '!', '#', '$', '%', '&', '\'', '*', '+', '/', '=', '?', '^', '_', '`', '{', '|', '}', '~', '-':
		return true
	}
	return false
}

// ValidPhone reports whether s is a Brazilian phone number the way the
// charges API wants it: digits only, DDD (two digits 1-9) plus 8 digits, or
// plus 9 and 8 digits for mobiles (^[1-9]{2}9?[0-9]{8}$). Use CleanPhone
// first on values typed with masks.
func ValidPhone(s string) bool {
	switch len(s) {
	case 10:
	case 11:
		if s[2] != '9' {
			return false
		}
	default:
		return false
	}
	return s[0] >= '1' && s[0] <= '9' && s[1] >= '1' && s[1] <= '9' && allDigits(s[2:])
}

// CleanPhone removes the usual phone mask characters (spaces, parentheses,
// dashes, dots) and a leading +55 country code, so "(11) 98765-4321" and
// "+55 11 98765-4321" both give "11987654321". It does not validate. A
// value with nothing to remove is returned as it is (no allocation).
func CleanPhone(s string) string {
	clean := true
	for i := 0; i < len(s) && clean; i++ {
		switch c := s[i]; c {
		case ' ', '(', ')', '-', '.', '\t', '+':
			clean = false
		default:
			clean = c < 0x80
		}
	}
	if clean {
		return s
	}
	b := make([]byte, 0, len(s))
	for _, r := range s {
		switch r {
		case ' ', '(', ')', '-', '.', '\u00a0', '\t':
			continue
		}
		b = append(b, string(r)...)
	}
	if len(b) >= 3 && string(b[:3]) == "+55" {
		b = b[3:]
	}
	return string(b)
}

// ValidPayeeCode reports whether s is an account identifier (payee_code):
// ^[a-fA-F0-9]{32}$.
func ValidPayeeCode(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
