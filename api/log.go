package api

import (
	"regexp"
	"strings"

	"remessa/rules"
)

var (
	reBearer = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+`)
	reJWT    = regexp.MustCompile(`\beyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`)
	reSecret = regexp.MustCompile(`Client_Secret_[A-Za-z0-9]+`)
	reField  = regexp.MustCompile(`(?i)("?(?:client_secret|access_token|refresh_token|password|senha|payment_token|card_number|number|cvv|security_code)"?\s*[:=]\s*)("[^"]*"|[^\s,&}]+)`)
	reDigits = regexp.MustCompile(`\b\d{13,19}\b`)
	reDoc    = regexp.MustCompile(`\b(?:\d{3}\.?\d{3}\.?\d{3}-?\d{2}|\d{2}\.?\d{3}\.?\d{3}/?\d{4}-?\d{2})\b`)
)

// RedactString removes secrets from s before it reaches a log or an error
// message: Bearer/Basic credentials, JWTs, Client_Secret_ values, the
// values of secret-looking fields (client_secret, access_token, password,
// card number, cvv, payment_token...), card numbers (13 to 19 digits
// passing the Luhn check, kept as first 6 + last 4), and payers' documents:
// whatever reads as a valid CPF or CNPJ ("***.982.247-**"), so a custom_id
// or a query that carries one does not leak it.
func RedactString(s string) string {
	if s == "" {
		return s
	}
	s = reBearer.ReplaceAllString(s, "$1 [redacted]")
	s = reJWT.ReplaceAllString(s, "[redacted-token]")
	s = reSecret.ReplaceAllString(s, "Client_Secret_[redacted]")
	s = reField.ReplaceAllString(s, `$1"[redacted]"`)
	s = reDigits.ReplaceAllStringFunc(s, func(d string) string {
		if !luhn(d) {
			return d
		}
		return d[:6] + strings.Repeat("*", len(d)-10) + d[len(d)-4:]
	})
	s = reDoc.ReplaceAllStringFunc(s, func(d string) string {
		if rules.ValidCPF(d) || rules.ValidCNPJ(d) {
			return rules.MaskDocument(d)
		}
		return d
	})
	return s
}

// luhn reports whether a digit string passes the Luhn check.
func luhn(d string) bool {
	sum := 0
	double := false
	for i := len(d) - 1; i >= 0; i-- {
		n := int(d[i] - '0')
		if double {
			n *= 2
			if n > 9 {
				n -= 9
			}
		}
		sum += n
		double = !double
	}
	return sum%10 == 0
}
