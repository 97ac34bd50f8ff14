package pipeline

import (
	"strings"
	"unicode"
)

// ruleCode is the problem code of a rules.Violation: its rule in Portuguese
// snake_case, like every problem code (docs/codes.md): "marketplace.8" →
// "marketplace_8", "pixsplit.divisaoTarifa" → "pixsplit_divisao_tarifa".
func ruleCode(rule string) string {
	var b strings.Builder
	for i, r := range rule {
		switch {
		case r == '.':
			b.WriteByte('_')
		case unicode.IsUpper(r):
			if i > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
