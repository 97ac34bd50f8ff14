package rules

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"time"
)

// ErrNotPayable is returned (wrapped) when a slip is paid after its
// write-off (days_to_write_off) or a cobv after its validadeAposVencimento.
// Test it with errors.Is.
var ErrNotPayable = errors.New("não pode mais ser paga")

// Discount types of the charges API.
const (
	DiscountCurrency   = "currency"   // Value in cents
	DiscountPercentage = "percentage" // Value in hundredths of a percent (500 = 5 %)
)

// SlipDiscount is the charges API `discount`, granted whatever the payment
// date.
type SlipDiscount struct {
	Type  string // DiscountCurrency or DiscountPercentage
	Value int64
}

// SlipConditionalDiscount is the charges API `conditional_discount`,
// granted when the slip is paid on or before Until.
type SlipConditionalDiscount struct {
	Type  string // DiscountCurrency or DiscountPercentage
	Value int64
	Until time.Time // civil date
}

// SlipTerms are the payment terms of a charges API slip or carnet parcel.
type SlipTerms struct {
	// Fine is configurations.fine: hundredths of a percent of the value
	// (200 = 2 %), 0..MaxFine, charged once when paid late.
	Fine int64
	// Interest is configurations.interest in its integer form: thousandths
	// of a percent of the value per calendar day late (33 = 0,033 %),
	// 0..MaxInterest.
	Interest int64
	// DaysToWriteOff is configurations.days_to_write_off (0..MaxDaysToWriteOff):
	// the slip can be paid through due + DaysToWriteOff days. nil: never
	// written off (carnets have no such setting).
	DaysToWriteOff *int
	Discount       *SlipDiscount
	// ConditionalDiscount is computed on the value after Discount.
	ConditionalDiscount *SlipConditionalDiscount
}

// SlipCharge is what a slip costs on one payment date. Always
// Total = Base − Discount + Fine + Interest, every part ≥ 0 and Total ≥ 0.
type SlipCharge struct {
	Base     int64 // the value given (before any discount)
	Discount int64 // discount + conditional discount (when it applies)
	Fine     int64
	Interest int64
	Total    int64
	// DaysLate is the calendar days from the adjusted due date to the
	// payment date (0 when paid on time): the days interest was charged for.
	DaysLate int
	// Due is the adjusted due date: the due date, or the next business day
	// when it falls on a weekend or national holiday.
	Due time.Time
	// LastPayable is the last day the slip can be paid (zero when it is
	// never written off).
	LastPayable time.Time
}

// SlipAmountDue computes what a charges API slip or carnet parcel of value
// cents (before discounts), due on due, costs when paid on paidOn (civil
// dates). Interest and fine start the day after the adjusted due date (the
// next business day when due is not one); each part is rounded half up to
// the cent on its own. Paying after the write-off returns an error wrapping
// ErrNotPayable (with the charge as it would have been). See docs/rules.md,
// "Payment arithmetic".
func SlipAmountDue(value int64, t SlipTerms, due, paidOn time.Time) (SlipCharge, error) {
	if value < 0 {
		return SlipCharge{}, fmt.Errorf("valor %d negativo", value)
	}
	if t.Fine < 0 || t.Fine > MaxFine {
		return SlipCharge{}, fmt.Errorf("fine deve estar entre 0 e %d (recebido %d)", MaxFine, t.Fine)
	}
	if t.Interest < 0 || t.Interest > MaxInterest {
		return SlipCharge{}, fmt.Errorf("interest deve estar entre 0 e %d (recebido %d)", MaxInterest, t.Interest)
	}
	if w := t.DaysToWriteOff; w != nil && (*w < 0 || *w > MaxDaysToWriteOff) {
		return SlipCharge{}, fmt.Errorf("days_to_write_off deve estar entre 0 e %d (recebido %d)", MaxDaysToWriteOff, *w)
	}
	if d := t.Discount; d != nil {
		if err := checkSlipDiscount("discount", d.Type, d.Value); err != nil {
			return SlipCharge{}, err
		}
	}
	if d := t.ConditionalDiscount; d != nil {
		if err := checkSlipDiscount("conditional_discount", d.Type, d.Value); err != nil {
			return SlipCharge{}, err
		}
	}
	due, paidOn = dateOf(due), dateOf(paidOn)
	c := SlipCharge{Base: value, Due: NextBusinessDay(due)}
	if d := t.Discount; d != nil {
		c.Discount = min(slipDiscount(d.Type, d.Value, value), value)
	}
	net := value - c.Discount
	late := paidOn.After(c.Due)
	if d := t.ConditionalDiscount; d != nil && !late && !paidOn.After(dateOf(d.Until)) {
		c.Discount += min(slipDiscount(d.Type, d.Value, net), net)
	}
	if late {
		c.DaysLate = DaysBetween(c.Due, paidOn)
		c.Fine, _ = mulDivRound(10000, net, t.Fine)
		var ok bool
		if c.Interest, ok = mulDivRound(100000, net, t.Interest, int64(c.DaysLate)); !ok {
			return SlipCharge{}, fmt.Errorf("juros fora do limite")
		}
	}
	var overflow bool
	if c.Total, overflow = addChecked(value-c.Discount, c.Fine, c.Interest); overflow {
		return SlipCharge{}, fmt.Errorf("total fora do limite")
	}
	if w := t.DaysToWriteOff; w != nil {
		c.LastPayable = latest(due.AddDate(0, 0, *w), c.Due)
		if paidOn.After(c.LastPayable) {
			return c, fmt.Errorf("boleto baixado em %s (days_to_write_off %d): %w", FormatISODate(c.LastPayable), *w, ErrNotPayable)
		}
	}
	return c, nil
}

func checkSlipDiscount(name, typ string, v int64) error {
	switch {
	case typ != DiscountCurrency && typ != DiscountPercentage:
		return fmt.Errorf("%s: type deve ser %s ou %s (recebido %q)", name, DiscountCurrency, DiscountPercentage, typ)
	case v < 0:
		return fmt.Errorf("%s: valor negativo (%d)", name, v)
	case typ == DiscountPercentage && v > 10000:
		return fmt.Errorf("%s: percentual acima de 100%% (%d)", name, v)
	}
	return nil
}

// slipDiscount is a discount of value v and type typ on base cents.
func slipDiscount(typ string, v, base int64) int64 {
	if typ == DiscountCurrency {
		return v
	}
	d, _ := mulDivRound(10000, base, v) // v ≤ 10000: d ≤ base
	return d
}

// Modalities of a cobv's valor.multa, valor.juros, valor.abatimento and
// valor.desconto (BCB API Pix, CobVValor).
const (
	MultaValor      = 1 // fixed value
	MultaPercentual = 2 // percent of the original

	JurosValorDiasCorridos       = 1 // value per calendar day
	JurosPercentualDiaCorridos   = 2 // percent per calendar day
	JurosPercentualMesCorridos   = 3 // percent per month (30 calendar days)
	JurosPercentualAnoCorridos   = 4 // percent per year (365 calendar days)
	JurosValorDiasUteis          = 5 // value per business day
	JurosPercentualDiaDiasUteis  = 6 // percent per business day
	JurosPercentualMesDiasUteis  = 7 // percent per month (21 business days)
	JurosPercentualAnoDiasUteis  = 8 // percent per year (252 business days)
	AbatimentoValor              = 1
	AbatimentoPercentual         = 2
	DescontoValorAteData         = 1 // fixed value until the date(s) of descontoDataFixa
	DescontoPercentualAteData    = 2 // percent until the date(s) of descontoDataFixa
	DescontoValorDiaCorrido      = 3 // value per calendar day of anticipation
	DescontoValorDiaUtil         = 4 // value per business day of anticipation
	DescontoPercentualDiaCorrido = 5 // percent per calendar day of anticipation
	DescontoPercentualDiaUtil    = 6 // percent per business day of anticipation
)

// MaxDescontoDataFixa is the most entries a cobv's descontoDataFixa holds.
const MaxDescontoDataFixa = 3

// CobvRule is a cobv's multa, juros or abatimento. ValorPerc is the API's
// valorPerc as ParsePixAmount reads it: cents for value modalities,
// hundredths of a percent for percent ones ("2.00" → 200 = 2 %).
type CobvRule struct {
	Modalidade int
	ValorPerc  int64
}

// CobvDiscountDate is one entry of valor.desconto.descontoDataFixa.
type CobvDiscountDate struct {
	Data      time.Time // civil date: the discount holds when paid on or before it
	ValorPerc int64     // cents (modalidade 1) or hundredths of a percent (2)
}

// CobvDesconto is a cobv's valor.desconto: DataFixa for modalidades 1 and
// 2, ValorPerc (per day of anticipation) for 3 to 6.
type CobvDesconto struct {
	Modalidade int
	ValorPerc  int64
	DataFixa   []CobvDiscountDate
}

// CobvTerms are the optional parts of a cobv's valor besides original.
type CobvTerms struct {
	Multa      *CobvRule
	Juros      *CobvRule
	Abatimento *CobvRule
	Desconto   *CobvDesconto
}

// CobvCharge is what a cobv costs on one payment date (the BCB's "valor
// final"). Always Final = Original − Abatimento − Desconto + Juros + Multa,
// every part ≥ 0 and Final ≥ 0.
type CobvCharge struct {
	Original   int64
	Abatimento int64
	Desconto   int64
	Juros      int64
	Multa      int64
	Final      int64
	// DaysLate is the days juros was charged for: calendar days, or
	// business days for juros modalidades 5–8, after the adjusted due date
	// (calendar days when there is no juros; 0 when paid on time).
	DaysLate int
	// DaysEarly is the days of anticipation a per-day desconto (modalidades
	// 3–6) was granted for: calendar or business days, 0 otherwise.
	DaysEarly int
	// Due is the adjusted due date: dataDeVencimento, or the next business
	// day when it falls on a weekend or national holiday.
	Due time.Time
	// LastPayable is the last day the cobv can be paid.
	LastPayable time.Time
}

// CobvAmountDue computes the valor final of a cobv of original cents due on
// due (calendario.dataDeVencimento) when paid on paidOn, following the
// BCB's "Manual de Padrões para Iniciação do Pix": the abatimento comes off
// the original; desconto, juros and multa are computed on original −
// abatimento; desconto only when paid on or before the due date, multa and
// juros only after the adjusted due date. Each part is rounded half up to
// the cent on its own. Paying after due + validadeAposVencimento returns an
// error wrapping ErrNotPayable (with the charge as it would have been). See
// docs/rules.md, "Payment arithmetic".
func CobvAmountDue(original int64, t CobvTerms, due, paidOn time.Time, validadeAposVencimento int) (CobvCharge, error) {
	if original < 0 {
		return CobvCharge{}, fmt.Errorf("valor.original %d negativo", original)
	}
	if validadeAposVencimento < 0 {
		return CobvCharge{}, fmt.Errorf("validadeAposVencimento %d negativa", validadeAposVencimento)
	}
	if err := checkCobvRule("multa", t.Multa, 2, MultaPercentual); err != nil {
		return CobvCharge{}, err
	}
	if err := checkCobvRule("juros", t.Juros, 8, JurosPercentualDiaCorridos, JurosPercentualMesCorridos, JurosPercentualAnoCorridos,
		JurosPercentualDiaDiasUteis, JurosPercentualMesDiasUteis, JurosPercentualAnoDiasUteis); err != nil {
		return CobvCharge{}, err
	}
	if err := checkCobvRule("abatimento", t.Abatimento, 2, AbatimentoPercentual); err != nil {
		return CobvCharge{}, err
	}
	if err := checkCobvDesconto(t.Desconto); err != nil {
		return CobvCharge{}, err
	}
	due, paidOn = dateOf(due), dateOf(paidOn)
	c := CobvCharge{Original: original, Due: NextBusinessDay(due)}
	c.LastPayable = latest(due.AddDate(0, 0, validadeAposVencimento), c.Due)

	if a := t.Abatimento; a != nil {
		if a.Modalidade == AbatimentoValor {
			c.Abatimento = min(a.ValorPerc, original)
		} else {
			c.Abatimento, _ = mulDivRound(10000, original, a.ValorPerc)
		}
	}
	base := original - c.Abatimento
	var ok = true
	switch {
	case !paidOn.After(due): // on time: desconto only
		if d := t.Desconto; d != nil {
			c.Desconto, c.DaysEarly, ok = cobvDesconto(d, base, due, paidOn)
			c.Desconto = min(c.Desconto, base)
		}
	case paidOn.After(c.Due): // late: multa and juros
		c.DaysLate = DaysBetween(c.Due, paidOn)
		if m := t.Multa; m != nil {
			if m.Modalidade == MultaValor {
				c.Multa = m.ValorPerc
			} else {
				c.Multa, _ = mulDivRound(10000, base, m.ValorPerc)
			}
		}
		if j := t.Juros; j != nil {
			days := int64(c.DaysLate)
			if j.Modalidade >= JurosValorDiasUteis {
				c.DaysLate = BusinessDaysBetween(c.Due, paidOn)
				days = int64(c.DaysLate)
			}
			switch j.Modalidade {
			case JurosValorDiasCorridos, JurosValorDiasUteis:
				c.Juros, ok = mulDivRound(1, j.ValorPerc, days)
			case JurosPercentualDiaCorridos, JurosPercentualDiaDiasUteis:
				c.Juros, ok = mulDivRound(10000, base, j.ValorPerc, days)
			case JurosPercentualMesCorridos:
				c.Juros, ok = mulDivRound(10000*30, base, j.ValorPerc, days)
			case JurosPercentualAnoCorridos:
				c.Juros, ok = mulDivRound(10000*365, base, j.ValorPerc, days)
			case JurosPercentualMesDiasUteis:
				c.Juros, ok = mulDivRound(10000*21, base, j.ValorPerc, days)
			case JurosPercentualAnoDiasUteis:
				c.Juros, ok = mulDivRound(10000*252, base, j.ValorPerc, days)
			}
		}
	}
	// between due and the adjusted due date (a due date on a weekend or
	// holiday paid on the next business day): neither.
	if !ok {
		return CobvCharge{}, fmt.Errorf("valor fora do limite")
	}
	var overflow bool
	if c.Final, overflow = addChecked(base-c.Desconto, c.Juros, c.Multa); overflow {
		return CobvCharge{}, fmt.Errorf("valor final fora do limite")
	}
	if paidOn.After(c.LastPayable) {
		return c, fmt.Errorf("cobrança vencida em %s e válida até %s (validadeAposVencimento %d): %w",
			FormatISODate(due), FormatISODate(c.LastPayable), validadeAposVencimento, ErrNotPayable)
	}
	return c, nil
}

// cobvDesconto is the desconto of d on base for a payment on paidOn, on or
// before due, and the days of anticipation it counted.
func cobvDesconto(d *CobvDesconto, base int64, due, paidOn time.Time) (int64, int, bool) {
	switch d.Modalidade {
	case DescontoValorAteData, DescontoPercentualAteData:
		for _, f := range d.DataFixa {
			if paidOn.After(dateOf(f.Data)) {
				continue
			}
			if d.Modalidade == DescontoValorAteData {
				return f.ValorPerc, 0, true
			}
			v, ok := mulDivRound(10000, base, f.ValorPerc)
			return v, 0, ok
		}
		return 0, 0, true
	}
	days := DaysBetween(paidOn, due)
	if d.Modalidade == DescontoValorDiaUtil || d.Modalidade == DescontoPercentualDiaUtil {
		days = BusinessDaysBetween(paidOn, due)
	}
	var v int64
	var ok bool
	if d.Modalidade == DescontoValorDiaCorrido || d.Modalidade == DescontoValorDiaUtil {
		v, ok = mulDivRound(1, d.ValorPerc, int64(days))
	} else {
		v, ok = mulDivRound(10000, base, d.ValorPerc, int64(days))
	}
	if !ok { // more than any base: capped by the caller
		v, ok = base, true
	}
	return v, days, ok
}

func checkCobvRule(name string, r *CobvRule, maxMod int, percent ...int) error {
	if r == nil {
		return nil
	}
	if r.Modalidade < 1 || r.Modalidade > maxMod {
		return fmt.Errorf("%s.modalidade deve estar entre 1 e %d (recebido %d)", name, maxMod, r.Modalidade)
	}
	if r.ValorPerc < 0 {
		return fmt.Errorf("%s.valorPerc negativo (%d)", name, r.ValorPerc)
	}
	for _, p := range percent {
		if r.Modalidade == p && r.ValorPerc > 10000 {
			return fmt.Errorf("%s.valorPerc: percentual acima de 100.00 (%d)", name, r.ValorPerc)
		}
	}
	return nil
}

func checkCobvDesconto(d *CobvDesconto) error {
	if d == nil {
		return nil
	}
	switch d.Modalidade {
	case DescontoValorAteData, DescontoPercentualAteData:
		if len(d.DataFixa) < 1 || len(d.DataFixa) > MaxDescontoDataFixa {
			return fmt.Errorf("desconto.descontoDataFixa: de 1 a %d datas (recebido %d)", MaxDescontoDataFixa, len(d.DataFixa))
		}
		for i, f := range d.DataFixa {
			if f.ValorPerc < 0 || (d.Modalidade == DescontoPercentualAteData && f.ValorPerc > 10000) {
				return fmt.Errorf("desconto.descontoDataFixa[%d].valorPerc inválido (%d)", i, f.ValorPerc)
			}
		}
	case DescontoValorDiaCorrido, DescontoValorDiaUtil, DescontoPercentualDiaCorrido, DescontoPercentualDiaUtil:
		if d.ValorPerc < 0 || (d.Modalidade >= DescontoPercentualDiaCorrido && d.ValorPerc > 10000) {
			return fmt.Errorf("desconto.valorPerc inválido (%d)", d.ValorPerc)
		}
	default:
		return fmt.Errorf("desconto.modalidade deve estar entre 1 e 6 (recebido %d)", d.Modalidade)
	}
	return nil
}

// PaymentAllocation splits an amount paid over what was due.
type PaymentAllocation struct {
	Interest  int64 // interest (juros) covered
	Fine      int64 // fine (multa) covered
	Principal int64 // value after discounts covered
	Shortfall int64 // due − covered: still owed
	Excess    int64 // paid beyond the total due
}

// AllocatePayment imputes paid cents to a debt of principal (the value after
// discounts and abatimento), fine and interest: interest first, then the
// fine, then the principal (Código Civil art. 354: interest before capital);
// anything beyond is Excess, anything missing Shortfall. Negative inputs
// count as 0. Always Interest + Fine + Principal + Excess = paid and
// Interest + Fine + Principal + Shortfall = principal + fine + interest.
func AllocatePayment(principal, fine, interest, paid int64) PaymentAllocation {
	principal, fine, interest, paid = max(principal, 0), max(fine, 0), max(interest, 0), max(paid, 0)
	var a PaymentAllocation
	left := paid
	take := func(due int64) int64 {
		n := min(due, left)
		left -= n
		return n
	}
	a.Interest = take(interest)
	a.Fine = take(fine)
	a.Principal = take(principal)
	a.Excess = left
	a.Shortfall = (interest - a.Interest) + (fine - a.Fine) + (principal - a.Principal)
	return a
}

// mulDivRound returns the product of factors divided by den, rounded half
// up, for non-negative factors and den > 0; ok is false when the result does
// not fit in an int64.
func mulDivRound(den int64, factors ...int64) (int64, bool) {
	// Fast path: the product fits in an int64.
	p, fits := int64(1), true
	for _, f := range factors {
		hi, lo := bits.Mul64(uint64(p), uint64(f))
		if hi != 0 || lo > math.MaxInt64 {
			fits = false
			break
		}
		p = int64(lo)
	}
	if fits {
		q, r := p/den, p%den
		if r >= den-r {
			q++
		}
		return q, true
	}
	n := big.NewInt(1)
	for _, f := range factors {
		n.Mul(n, big.NewInt(f))
	}
	d := big.NewInt(den)
	n.Mul(n, big.NewInt(2)).Add(n, d)
	n.Quo(n, d.Mul(d, big.NewInt(2)))
	if !n.IsInt64() {
		return 0, false
	}
	return n.Int64(), true
}

// addChecked sums non-negative terms, reporting int64 overflow.
func addChecked(terms ...int64) (int64, bool) {
	var s int64
	for _, t := range terms {
		if s > 1<<63-1-t {
			return 0, true
		}
		s += t
	}
	return s, false
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
