package pix

import (
	"errors"
	"fmt"
	"time"

	"remessa/rules"
)

// owed is what charge c costs when paid on day (a São Paulo civil date):
// valor.original for a cob; for a cobv, rules.CobvAmountDue of its valor
// (abatimento, desconto, multa and juros modalidades) on
// calendario.dataDeVencimento, refusing with ErrNotPayable a day after
// due + validadeAposVencimento (never before the adjusted due date). The
// reconciliation is to compute what was due with the same function, so
// the two cannot disagree.
func owed(c *charge, day time.Time) (rules.CobvCharge, error) {
	if c.Kind != kindCobV {
		return rules.CobvCharge{Original: c.Cents, Final: c.Cents}, nil
	}
	cal := c.Body.Calendario
	due, err := rules.ParseISODate(cal.DataDeVencimento)
	if err != nil {
		return rules.CobvCharge{}, fmt.Errorf("pix: cobv %s: dataDeVencimento %q: %v", c.Body.Txid, cal.DataDeVencimento, err)
	}
	validade := defaultValidadeApos
	if cal.ValidadeAposVencimento != nil {
		validade = *cal.ValidadeAposVencimento
	}
	t, err := cobvTerms(c.Body.Valor)
	if err != nil {
		return rules.CobvCharge{}, fmt.Errorf("pix: cobv %s: %v", c.Body.Txid, err)
	}
	cc, err := rules.CobvAmountDue(c.Cents, t, due, day, validade)
	if errors.Is(err, rules.ErrNotPayable) {
		return cc, fmt.Errorf("%w: cobrança %s vencida em %s e válida até %s (validadeAposVencimento %d); pagamento em %s recusado",
			ErrNotPayable, c.Body.Txid, cal.DataDeVencimento, rules.FormatISODate(cc.LastPayable), validade, rules.FormatISODate(day))
	}
	if err != nil {
		return cc, fmt.Errorf("pix: cobv %s: %v", c.Body.Txid, err)
	}
	return cc, nil
}

// cobvTerms converts a cobv's valor modalidades to the rules' terms
// (valorPerc as rules.ParsePixAmount reads it: cents or hundredths of a
// percent).
func cobvTerms(v Valor) (rules.CobvTerms, error) {
	var t rules.CobvTerms
	rule := func(name string, m *Modalidade) (*rules.CobvRule, error) {
		if m == nil {
			return nil, nil
		}
		n, err := rules.ParsePixAmount(m.ValorPerc)
		if err != nil {
			return nil, fmt.Errorf("valor.%s.valorPerc %q: %v", name, m.ValorPerc, err)
		}
		return &rules.CobvRule{Modalidade: m.Modalidade, ValorPerc: n}, nil
	}
	var err error
	if t.Multa, err = rule("multa", v.Multa); err != nil {
		return t, err
	}
	if t.Juros, err = rule("juros", v.Juros); err != nil {
		return t, err
	}
	if t.Abatimento, err = rule("abatimento", v.Abatimento); err != nil {
		return t, err
	}
	if d := v.Desconto; d != nil {
		rd := &rules.CobvDesconto{Modalidade: d.Modalidade}
		if d.ValorPerc != "" {
			if rd.ValorPerc, err = rules.ParsePixAmount(d.ValorPerc); err != nil {
				return t, fmt.Errorf("valor.desconto.valorPerc %q: %v", d.ValorPerc, err)
			}
		}
		for i, f := range d.DescontoDataFixa {
			day, err := rules.ParseISODate(f.Data)
			if err != nil {
				return t, fmt.Errorf("valor.desconto.descontoDataFixa[%d].data %q: %v", i, f.Data, err)
			}
			n, err := rules.ParsePixAmount(f.ValorPerc)
			if err != nil {
				return t, fmt.Errorf("valor.desconto.descontoDataFixa[%d].valorPerc %q: %v", i, f.ValorPerc, err)
			}
			rd.DataFixa = append(rd.DataFixa, rules.CobvDiscountDate{Data: day, ValorPerc: n})
		}
		t.Desconto = rd
	}
	return t, nil
}
