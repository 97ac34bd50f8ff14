package pipeline

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"remessa/formats"
	"remessa/pipeline/results"
	"remessa/rules"
)

// Limits not in rules (documented in docs/job-file.md).
const (
	// MinSlipCents is the smallest charge total the charges API accepts
	// (real-service 4600036: total below R$ 5,00).
	MinSlipCents = 500
	// MaxChargeCents is the largest item value the charges API integer
	// fields can carry (int32 cents; inferred).
	MaxChargeCents = 1<<31 - 1
	// MaxPixCents is the largest Pix value: \d{1,10}\.\d{2}.
	MaxPixCents = 999999999999
	// MaxNameLen is the longest customer or item name in the charges API
	// (1 to 255 characters).
	MaxNameLen = 255
	// MaxPixNameLen is the longest devedor nome in the Pix API.
	MaxPixNameLen = 200
	// MaxCustomIDLen is the longest custom_id.
	MaxCustomIDLen = 255
	// MaxBatchBytes is the largest batch body remessa sends by default.
	MaxBatchBytes = DefaultBatchMaxBytes
)

// limitErr is a value outside its limit: a stable code and messages.
// SoftMemoryLimit is the garbage collector's soft limit that remessa
// validate and plan set (unless GOMEMLIMIT says otherwise): they stream any
// input in about 25 MB of live data (the duplicate tables of a million
// rows), and without a limit the heap grows to twice that before
// collecting. At 40 MiB a million-row validate peaks near 52 MB resident
// for about 10% more CPU than at 48 MiB (59 MB resident). It is a soft
// limit: more live data is still allowed.
const SoftMemoryLimit = 40 << 20

type limitErr struct{ code, pt, en string }

func lim(code, pt, en string) *limitErr { return &limitErr{code, pt, en} }

func checkRange(v, min, max int64, code, what, whatEN string, format func(int64) string) *limitErr {
	if v < min || v > max {
		return lim(code,
			fmt.Sprintf("%s %s fora do limite: de %s a %s", what, format(v), format(min), format(max)),
			fmt.Sprintf("%s %s out of range: %s to %s", whatEN, format(v), format(min), format(max)))
	}
	return nil
}

func fmtInt(v int64) string { return fmt.Sprint(v) }

func fmtPct(scale int) func(int64) string {
	return func(v int64) string { return formats.FormatPercent(v, scale) }
}

func checkPositive(cents int64, what, whatEN string) *limitErr {
	if cents <= 0 {
		code := "valor_zero"
		if cents < 0 {
			code = "valor_negativo"
		}
		return lim(code,
			fmt.Sprintf("%s deve ser maior que zero; recebido %s", what, rules.FormatBRL(cents)),
			fmt.Sprintf("%s must be greater than zero; got %s", whatEN, rules.FormatBRL(cents)))
	}
	return nil
}

func checkTextLen(s string, max int, what, whatEN string) *limitErr {
	if len(s) <= max {
		return nil // never more characters than bytes
	}
	if n := utf8.RuneCountInString(s); n > max {
		return lim("texto_longo",
			fmt.Sprintf("%s tem %d caracteres; o limite é %d", what, n, max),
			fmt.Sprintf("%s has %d characters; the limit is %d", whatEN, n, max))
	}
	return nil
}

// slipMessageLines splits a slip message on newlines (real ones or a
// typed "\n").
func slipMessageLines(s string) []string {
	s = strings.ReplaceAll(s, `\n`, "\n")
	return strings.Split(s, "\n")
}

func checkSlipMessage(s string) *limitErr {
	lines := slipMessageLines(s)
	if len(lines) > rules.MaxSlipMessageLines {
		return lim("mensagem_longa",
			fmt.Sprintf("a mensagem do boleto tem %d linhas; o limite é %d", len(lines), rules.MaxSlipMessageLines),
			fmt.Sprintf("the slip message has %d lines; the limit is %d", len(lines), rules.MaxSlipMessageLines))
	}
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > rules.MaxSlipMessageLine {
			return lim("mensagem_longa",
				fmt.Sprintf("a linha %d da mensagem do boleto tem %d caracteres; o limite é %d", i+1, n, rules.MaxSlipMessageLine),
				fmt.Sprintf("line %d of the slip message has %d characters; the limit is %d", i+1, n, rules.MaxSlipMessageLine))
		}
	}
	return nil
}

// checkDue checks a due date against today: carnets and slips need a date
// after today; a cobv may be due today.
func checkDue(d, today time.Time, kind results.Kind) *limitErr {
	if d.Before(today) || (kind != results.Cobv && d.Equal(today)) {
		rule, ruleEN := "depois de hoje", "after today"
		if kind == results.Cobv {
			rule, ruleEN = "hoje ou depois", "today or later"
		}
		return lim("vencimento_passado",
			fmt.Sprintf("vencimento %s no passado: precisa ser %s (hoje é %s no horário de Brasília)", formats.FormatDate(d), rule, formats.FormatDate(today)),
			fmt.Sprintf("due date %s is in the past: it must be %s (today is %s in Brasília time)", rules.FormatISODate(d), ruleEN, rules.FormatISODate(today)))
	}
	if d.After(today.AddDate(10, 0, 0)) {
		return lim("vencimento_distante",
			fmt.Sprintf("vencimento %s está a mais de 10 anos", formats.FormatDate(d)),
			fmt.Sprintf("due date %s is more than 10 years away", rules.FormatISODate(d)))
	}
	return nil
}
