package pipeline

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"remessa/formats"
	"remessa/rules"
)

// A CNAB title's discounts (1–3, by date or per day paid early) and its
// abatimento, mapped onto what the issuance offers (docs/cnab.md,
// "Descontos e abatimento"): a slip or carnet takes one conditional
// discount (until a date) and one unconditional discount, which carries
// the abatimento; a cobv takes a desconto (modalidade 1–2 with up to three
// dates, or 3–6 per day) and an abatimento. What does not fit refuses the
// title at the discount's positions: a title is never issued without the
// discount its ERP promised. A job that sets discount, conditional_discount,
// desconto or abatimento itself overrides the titles'.

// CodeCNABDiscount is the problem of a title whose discount the issuance
// cannot carry.
const CodeCNABDiscount = "cnab_desconto_nao_aplicado"

// cnabDisc is one discount of a title: formats' "code|date|value" cell.
type cnabDisc struct {
	code  int
	date  time.Time
	v     int64 // cents, or hundredths of a percent (codes 2, 5, 6)
	cell  formats.Cell
	which string // "desconto 1"…
}

func (d *cnabDisc) percent() bool { return d.code == 2 || d.code == 5 || d.code == 6 }

// text says the discount as a person would: "5,00% até 05/02/2027".
func (d *cnabDisc) text() string {
	s := rules.FormatBRL(d.v)
	if d.percent() {
		s = percentText(d.v)
	}
	switch {
	case d.code <= 2 && !d.date.IsZero():
		return s + " até " + d.date.Format("02/01/2006")
	case d.code >= 3:
		return s + " por dia de antecipação"
	}
	return s
}

func percentText(v int64) string { return fmt.Sprintf("%d,%02d%%", v/100, v%100) }

// cnabDiscounts reads the title's discount cells (none for a sheet's row).
func (rc *rowCtx) cnabDiscounts() ([]cnabDisc, bool) {
	if rc.vr.job.InputFormat == "" {
		return nil, true
	}
	var out []cnabDisc
	for i, h := range []string{formats.CNABDiscount1, formats.CNABDiscount2, formats.CNABDiscount3, formats.CNABDiscountDay} {
		c := formats.CNABCell(rc.row, h)
		if c.Value == "" {
			continue
		}
		parts := strings.Split(c.Value, "|")
		if len(parts) != 3 {
			continue
		}
		d := cnabDisc{cell: c, which: []string{"desconto 1", "desconto 2", "desconto 3", "desconto por dia"}[i]}
		d.code, _ = strconv.Atoi(parts[0])
		if parts[1] != "" {
			d.date, _ = rules.ParseISODate(parts[1])
		}
		whole, frac, _ := strings.Cut(parts[2], ".")
		d.v, _ = strconv.ParseInt(whole+frac, 10, 64)
		switch {
		case d.code == 0:
			rc.refuseDisc(&d, fmt.Sprintf("%s de %s com código 0 (sem desconto): o código e o valor não combinam", d.which, rules.FormatBRL(d.v)),
				fmt.Sprintf("%s of %s with code 0 (no discount): the code and the value disagree", d.which, rules.FormatBRL(d.v)))
			return nil, false
		case d.code < 1 || d.code > 6:
			rc.refuseDisc(&d, fmt.Sprintf("código de desconto %d desconhecido (1 e 2 até uma data, 3 a 6 por dia de antecipação)", d.code),
				fmt.Sprintf("unknown discount code %d (1 and 2 until a date, 3 to 6 per day paid early)", d.code))
			return nil, false
		case d.code <= 2 && d.date.IsZero():
			rc.refuseDisc(&d, fmt.Sprintf("%s de %s sem data limite", d.which, d.text()), fmt.Sprintf("%s of %s without a date", d.which, d.text()))
			return nil, false
		}
		out = append(out, d)
	}
	return out, true
}

func (rc *rowCtx) refuseDisc(d *cnabDisc, pt, en string) {
	c := d.cell
	rc.fail(CodeCNABDiscount, "discount", &c, pt+": o título foi recusado para não ser emitido sem o desconto que o ERP prometeu",
		en+": the title was refused rather than issued without the discount its ERP promised")
}

// cnabRebate is the title's abatimento in cents, with its cell.
func (rc *rowCtx) cnabRebate() (int64, formats.Cell) {
	if rc.vr.job.InputFormat == "" {
		return 0, formats.Cell{}
	}
	c := formats.CNABCell(rc.row, formats.CNABRebate)
	whole, frac, _ := strings.Cut(c.Value, ".")
	v, _ := strconv.ParseInt(whole+frac, 10, 64)
	return v, c
}

// cnabSlipDiscounts maps a CNAB title's discounts and abatimento onto a
// slip's or carnet's discount (the abatimento, unconditional) and
// conditional discount (one discount until a date), unless the job sets
// them (jobDisc, jobCond).
func (rc *rowCtx) cnabSlipDiscounts(disc *Discount, cdisc *ConditionalDiscount, jobDisc, jobCond bool, due time.Time, what, whatEN string) (*Discount, *ConditionalDiscount) {
	ds, ok := rc.cnabDiscounts()
	if !ok {
		return disc, cdisc
	}
	if !jobCond && len(ds) > 0 {
		for _, d := range ds {
			if d.code >= 3 {
				rc.refuseDisc(&d, fmt.Sprintf("%s de %s: %s não tem desconto por dia de antecipação (só um desconto até uma data)", d.which, d.text(), what),
					fmt.Sprintf("%s of %s: a %s has no discount per day paid early (only one discount until a date)", d.which, d.text(), whatEN))
				return disc, cdisc
			}
		}
		if len(ds) > 1 {
			d := ds[1]
			rc.refuseDisc(&d, fmt.Sprintf("o título tem %d descontos por data (%s); %s leva um só desconto condicional", len(ds), discList(ds), what),
				fmt.Sprintf("the title has %d discounts by date (%s); a %s takes a single conditional discount", len(ds), discList(ds), whatEN))
			return disc, cdisc
		}
		d := ds[0]
		if !due.IsZero() && d.date.After(due) {
			rc.refuseDisc(&d, fmt.Sprintf("%s até %s, depois do vencimento %s", d.which, formats.FormatDate(d.date), formats.FormatDate(due)),
				fmt.Sprintf("%s until %s, after the due date %s", d.which, rules.FormatISODate(d.date), rules.FormatISODate(due)))
			return disc, cdisc
		}
		typ := "currency"
		if d.percent() {
			typ = "percentage"
		}
		cdisc = &ConditionalDiscount{Type: typ, Value: d.v, UntilDate: rules.FormatISODate(d.date)}
	}
	if v, _ := rc.cnabRebate(); v > 0 && !jobDisc {
		disc = &Discount{Type: "currency", Value: v}
	}
	return disc, cdisc
}

func discList(ds []cnabDisc) string {
	var s []string
	for _, d := range ds {
		s = append(s, d.text())
	}
	return strings.Join(s, "; ")
}

// cnabCobvDiscounts maps a CNAB title's discounts and abatimento onto a
// cobv's desconto and abatimento, unless the job sets them.
func (rc *rowCtx) cnabCobvDiscounts(val *CobvValor, jobDesc, jobAbat bool, due time.Time) {
	ds, ok := rc.cnabDiscounts()
	if !ok {
		return
	}
	if !jobDesc && len(ds) > 0 {
		first := ds[0]
		for _, d := range ds[1:] {
			if d.code != first.code {
				rc.refuseDisc(&d, fmt.Sprintf("descontos de tipos diferentes (%s): a cobv leva uma só modalidade de desconto", discList(ds)),
					fmt.Sprintf("discounts of different kinds (%s): a cobv takes a single discount modalidade", discList(ds)))
				return
			}
		}
		cd := &CobvDesconto{Modalidade: first.code}
		if first.code >= 3 {
			if len(ds) > 1 {
				d := ds[1]
				rc.refuseDisc(&d, fmt.Sprintf("%d descontos por dia de antecipação: a cobv leva um", len(ds)), fmt.Sprintf("%d discounts per day paid early: a cobv takes one", len(ds)))
				return
			}
			cd.ValorPerc = rules.FormatPixAmount(first.v)
		} else {
			for _, d := range ds {
				if !due.IsZero() && d.date.After(due) {
					rc.refuseDisc(&d, fmt.Sprintf("%s até %s, depois do vencimento %s", d.which, formats.FormatDate(d.date), formats.FormatDate(due)),
						fmt.Sprintf("%s until %s, after the due date %s", d.which, rules.FormatISODate(d.date), rules.FormatISODate(due)))
					return
				}
				cd.DescontoDataFixa = append(cd.DescontoDataFixa, DataValor{Data: rules.FormatISODate(d.date), ValorPerc: rules.FormatPixAmount(d.v)})
			}
		}
		val.Desconto = cd
	}
	if v, _ := rc.cnabRebate(); v > 0 && !jobAbat {
		val.Abatimento = &Modalidade{Modalidade: 1, ValorPerc: rules.FormatPixAmount(v)}
	}
}
