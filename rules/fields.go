package rules

import (
	"regexp"
	"strings"
)

var (
	reCEP    = regexp.MustCompile(`^\d{5}-?\d{3}$`)
	rePhone  = regexp.MustCompile(`^[1-9]{2}9?[0-9]{8}$`)
	rePayee  = regexp.MustCompile(`^[a-fA-F0-9]{32}$`)
	reEmail  = regexp.MustCompile(`^[A-Za-z0-9.!#$%&'*+/=?^_` + "`" + `{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$`)
	validUFs = map[string]bool{}
	ufIBGE   = "AC AL AP AM BA CE DF ES GO MA MT MS MG PA PB PR PE PI RJ RN RS RO RR SC SP SE TO"
)

func init() {
	for _, uf := range strings.Fields(ufIBGE) {
		validUFs[uf] = true
	}
}

// ValidUF reports whether s is one of the 27 Brazilian federative units
// (26 states and DF), as an uppercase two-letter code.
func ValidUF(s string) bool { return validUFs[s] }

// ValidCEP reports whether s is a CEP: 8 digits, optionally as NNNNN-NNN.
// The format does not prove the CEP exists.
func ValidCEP(s string) bool { return reCEP.MatchString(s) }

// ValidEmail reports whether s looks like an e-mail address: a local part,
// @, and a domain with at least one dot; at most 254 characters.
func ValidEmail(s string) bool {
	return len(s) <= 254 && reEmail.MatchString(s)
}

// ValidPhone reports whether s is a Brazilian phone number the way the
// charges API wants it: digits only, DDD (two digits 1-9) plus 8 digits, or
// plus 9 and 8 digits for mobiles (^[1-9]{2}9?[0-9]{8}$). Use CleanPhone
// first on values typed with masks.
func ValidPhone(s string) bool { return rePhone.MatchString(s) }

// CleanPhone removes the usual phone mask characters (spaces, parentheses,
// dashes, dots) and a leading +55 country code, so "(11) 98765-4321" and
// "+55 11 98765-4321" both give "11987654321". It does not validate.
func CleanPhone(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case ' ', '(', ')', '-', '.', '\u00a0', '\t':
			continue
		}
		b.WriteRune(r)
	}
	p := b.String()
	if strings.HasPrefix(p, "+55") {
		p = p[3:]
	}
	return p
}

// ValidPayeeCode reports whether s is an account identifier (payee_code):
// ^[a-fA-F0-9]{32}$.
func ValidPayeeCode(s string) bool { return rePayee.MatchString(s) }
