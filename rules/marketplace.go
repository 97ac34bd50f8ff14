package rules

import (
	"fmt"
	"math/bits"
	"strings"
)

// Repasse is one transfer of an item's value to another account in the
// charges API marketplace. Percentage is in hundredths of a percent (2500 =
// 25%); Fixed is in cents for the item's whole total (value × amount).
// Exactly one of them must be > 0.
type Repasse struct {
	PayeeCode  string
	Percentage int64
	Fixed      int64
}

// Marketplace is the split configuration of one item. Mode 1 takes the
// intermediation fee only from the issuing account, mode 2 in proportion to
// each account's share; 0 means the default, 2.
type Marketplace struct {
	Mode     int
	Repasses []Repasse
}

// SplitItem is an item of a charge as far as the split is concerned. Amount
// 0 means 1 (the API default).
type SplitItem struct {
	Name        string
	ValueCents  int64
	Amount      int64
	Marketplace *Marketplace
}

// SplitShipping is a shipping line. When PayeeCode is set, the whole value
// goes to that account (a shipping cannot be split partially).
type SplitShipping struct {
	Name       string
	ValueCents int64
	PayeeCode  string
}

// Violation is one broken rule: Rule names it (e.g. "marketplace.4" or
// "pixsplit.sum"), Pointer is the JSON pointer of the offending value in
// the request body, Message is in Portuguese and MessageEN in English.
type Violation struct {
	Rule      string
	Pointer   string
	Message   string
	MessageEN string
}

// Error renders the violation in Portuguese with its pointer.
func (v Violation) Error() string { return v.Pointer + ": " + v.Message }

func itemAmount(it SplitItem) int64 {
	if it.Amount == 0 {
		return 1
	}
	return it.Amount
}

// itemTotal returns value × amount and false when it overflows or is
// negative.
func itemTotal(it SplitItem) (int64, bool) {
	a := itemAmount(it)
	if it.ValueCents < 0 || a < 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(it.ValueCents), uint64(a))
	if hi != 0 || lo > 1<<63-1 {
		return 0, false
	}
	return int64(lo), true
}

// percentOf returns floor(total × pct / 10000) without overflow, for
// non-negative total and pct.
func percentOf(total, pct int64) int64 {
	if total <= 0 || pct <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(total), uint64(pct))
	if hi >= 10000 {
		return 1<<63 - 1
	}
	q, _ := bits.Div64(hi, lo, 10000)
	if q > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(q)
}

// pct formats hundredths of a percent as "25,00%".
func pct(v int64) string {
	return fmt.Sprintf("%d,%02d%%", v/100, v%100)
}

// CheckMarketplace checks the marketplace rules 1-10 of the charges API on
// a charge's items and shippings and returns every violation found (nil
// when the split is acceptable). ownPayeeCode is the issuing account; a
// repasse to it is refused (it already receives the remainder). How each
// rule maps to a check is documented in docs/rules.md.
func CheckMarketplace(items []SplitItem, shippings []SplitShipping, ownPayeeCode string) []Violation {
	var vs []Violation
	add := func(rule, ptr, pt, en string) {
		vs = append(vs, Violation{Rule: "marketplace." + rule, Pointer: ptr, Message: pt, MessageEN: en})
	}
	split := false
	for _, it := range items {
		if it.Marketplace != nil {
			split = true
		}
	}
	for _, sh := range shippings {
		if sh.PayeeCode != "" && !strings.EqualFold(sh.PayeeCode, ownPayeeCode) {
			split = true
		}
	}
	for i, sh := range shippings {
		if sh.PayeeCode == "" {
			continue
		}
		p := fmt.Sprintf("/shippings/%d", i)
		if !ValidPayeeCode(sh.PayeeCode) {
			add("8", p+"/payee_code",
				fmt.Sprintf("payee_code %q do frete inválido: esperado identificador de conta com 32 caracteres hexadecimais", sh.PayeeCode),
				fmt.Sprintf("shipping payee_code %q is invalid: expected a 32-character hexadecimal account identifier", sh.PayeeCode))
		}
		if sh.ValueCents <= 0 {
			add("7", p+"/value",
				fmt.Sprintf("o frete com payee_code é repassado inteiro e precisa de valor positivo; recebido %d", sh.ValueCents),
				fmt.Sprintf("a shipping with payee_code is passed on whole and needs a positive value; got %d", sh.ValueCents))
		}
	}
	if !split {
		return vs
	}
	for i, it := range items {
		base := fmt.Sprintf("/items/%d", i)
		total, ok := itemTotal(it)
		if !ok || it.ValueCents <= 0 {
			if it.ValueCents <= 0 {
				add("1", base+"/value",
					fmt.Sprintf("em uma cobrança com repasses todos os itens são tratados como itens de repasse e precisam de valor positivo; recebido %d", it.ValueCents),
					fmt.Sprintf("in a split charge every item is treated as a split item and needs a positive value; got %d", it.ValueCents))
			} else {
				add("1", base+"/amount",
					fmt.Sprintf("quantidade %d inválida para item de repasse", it.Amount),
					fmt.Sprintf("amount %d is invalid for a split item", it.Amount))
			}
			continue
		}
		m := it.Marketplace
		if m == nil {
			continue
		}
		mp := base + "/marketplace"
		if m.Mode != 0 && m.Mode != 1 && m.Mode != 2 {
			add("2", mp+"/mode",
				fmt.Sprintf("mode %d inválido: use 1 (tarifa só da conta emissora) ou 2 (tarifa proporcional)", m.Mode),
				fmt.Sprintf("mode %d is invalid: use 1 (fee from the issuing account only) or 2 (proportional fee)", m.Mode))
		}
		if len(m.Repasses) == 0 {
			add("6", mp+"/repasses",
				"marketplace sem repasses: informe ao menos um repasse para o item",
				"marketplace without repasses: give at least one repasse for the item")
			continue
		}
		var sumPct, sumFixed int64
		anyFixed := false
		seen := map[string]int{}
		for j, r := range m.Repasses {
			rp := fmt.Sprintf("%s/repasses/%d", mp, j)
			switch {
			case r.PayeeCode == "":
				add("8", rp+"/payee_code",
					"payee_code ausente: o repasse precisa do identificador da conta que recebe",
					"payee_code missing: a repasse needs the identifier of the receiving account")
			case !ValidPayeeCode(r.PayeeCode):
				add("8", rp+"/payee_code",
					fmt.Sprintf("payee_code %q inválido: esperado identificador de conta com 32 caracteres hexadecimais", r.PayeeCode),
					fmt.Sprintf("payee_code %q is invalid: expected a 32-character hexadecimal account identifier", r.PayeeCode))
			case ownPayeeCode != "" && strings.EqualFold(r.PayeeCode, ownPayeeCode):
				add("8", rp+"/payee_code",
					fmt.Sprintf("payee_code %q é a própria conta emissora; ela já recebe o restante", r.PayeeCode),
					fmt.Sprintf("payee_code %q is the issuing account itself; it already receives the remainder", r.PayeeCode))
			default:
				key := strings.ToLower(r.PayeeCode)
				if prev, dup := seen[key]; dup {
					add("10", rp+"/payee_code",
						fmt.Sprintf("a conta %s já aparece no repasse %d deste item; a mesma conta não pode aparecer duas vezes no mesmo item", r.PayeeCode, prev),
						fmt.Sprintf("account %s already appears in repasse %d of this item; the same account cannot appear twice in one item", r.PayeeCode, prev))
				} else {
					seen[key] = j
				}
			}
			switch {
			case r.Percentage < 0:
				add("9", rp+"/percentage",
					fmt.Sprintf("percentage %d negativo", r.Percentage),
					fmt.Sprintf("percentage %d is negative", r.Percentage))
			case r.Fixed < 0:
				add("9", rp+"/fixed",
					fmt.Sprintf("fixed %d negativo", r.Fixed),
					fmt.Sprintf("fixed %d is negative", r.Fixed))
			case r.Percentage > 0 && r.Fixed > 0:
				add("8", rp,
					"informe percentage ou fixed, não os dois",
					"give either percentage or fixed, not both")
			case r.Percentage == 0 && r.Fixed == 0:
				add("9", rp+"/percentage",
					"um repasse não pode ser de zero por cento nem de valor zero",
					"a repasse cannot be zero percent or a zero value")
			case r.Fixed > 0:
				anyFixed = true
				if sumFixed <= 1<<62 && r.Fixed <= 1<<62 {
					sumFixed += r.Fixed
				} else {
					sumFixed = 1 << 62
				}
			default:
				if sumPct <= 1<<62 && r.Percentage <= 1<<62 {
					sumPct += r.Percentage
				} else {
					sumPct = 1 << 62
				}
			}
		}
		if anyFixed && m.Mode != 1 {
			mode := m.Mode
			if mode == 0 {
				mode = 2
			}
			add("3", mp+"/mode",
				fmt.Sprintf("repasses de valor fixo exigem mode 1; mode efetivo é %d", mode),
				fmt.Sprintf("fixed-value repasses require mode 1; the effective mode is %d", mode))
		}
		if sumPct > 10000 {
			add("4", mp+"/repasses",
				fmt.Sprintf("os repasses do item somam %s, acima de 100%%: a cobrança não pode ser criada", pct(sumPct)),
				fmt.Sprintf("the item's repasses total %d.%02d%%, above 100%%: the charge cannot be created", sumPct/100, sumPct%100))
		} else if sumFixed > total {
			add("5", mp+"/repasses",
				fmt.Sprintf("os repasses fixos do item somam %s, acima do total do item %s: a cobrança não pode ser criada", FormatBRL(sumFixed), FormatBRL(total)),
				fmt.Sprintf("the item's fixed repasses total %s, above the item total %s: the charge cannot be created", FormatPixAmount(sumFixed), FormatPixAmount(total)))
		} else if sumFixed > 0 && sumPct > 0 && percentOf(total, sumPct)+sumFixed > total {
			add("5", mp+"/repasses",
				fmt.Sprintf("os repasses do item (%s mais %s fixos) passam do total do item %s", pct(sumPct), FormatBRL(sumFixed), FormatBRL(total)),
				fmt.Sprintf("the item's repasses (%d.%02d%% plus %s fixed) exceed the item total %s", sumPct/100, sumPct%100, FormatPixAmount(sumFixed), FormatPixAmount(total)))
		}
	}
	return vs
}

// Share is what one account receives from a charge, in cents. Own marks
// the issuing (integrator's) account, whose PayeeCode is empty.
type Share struct {
	PayeeCode string
	Own       bool
	Cents     int64
}

// SplitShares divides a charge's items and shippings among accounts with
// exact integer cents. For each item the total is value × amount; a
// percentage repasse gets floor(total × percentage / 10000), a fixed repasse
// gets its Fixed cents, and the remainder of the item goes to the own
// account. A shipping with a payee code goes whole to that payee, any other
// shipping to the own account. Shares are summed per recipient (payee codes
// compared case-insensitively); the own account comes first (even with 0),
// then payees in order of first appearance. Intermediation fees are not
// deducted here.
//
// SplitShares expects input that passed CheckMarketplace; on other input it
// never panics and never gives more than an item's total: repasses are paid
// in order until the item total runs out, and items with an invalid total
// go to the own account as they are.
func SplitShares(items []SplitItem, shippings []SplitShipping) []Share {
	out := []Share{{Own: true}}
	idx := map[string]int{}
	give := func(payee string, c int64) {
		if c == 0 {
			return
		}
		k := strings.ToLower(payee)
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, Share{PayeeCode: payee})
		}
		out[i].Cents += c
	}
	for _, it := range items {
		total, ok := itemTotal(it)
		if !ok || total <= 0 {
			if ok {
				out[0].Cents += total
			}
			continue
		}
		left := total
		if it.Marketplace != nil {
			for _, r := range it.Marketplace.Repasses {
				var c int64
				switch {
				case r.Fixed > 0:
					c = r.Fixed
				case r.Percentage > 0:
					c = percentOf(total, r.Percentage)
				}
				if c > left {
					c = left
				}
				left -= c
				give(r.PayeeCode, c)
			}
		}
		out[0].Cents += left
	}
	for _, sh := range shippings {
		if sh.PayeeCode != "" {
			give(sh.PayeeCode, sh.ValueCents)
		} else {
			out[0].Cents += sh.ValueCents
		}
	}
	return out
}
