package conciliacao_test

import (
	"testing"
	"time"

	"remessa/pipeline/status"
	"remessa/reports/conciliacao"
	"remessa/rules"
)

// TestWithRebate: a R$ 150,00 cobv issued with an abatimento of R$ 5,00
// owes 145,00 on its due date; with its abatimento changed to R$ 12,34
// (status.Charge.RebateSet) 137,66; with it removed 150,00; and a slip's
// terms are left as they are.
func TestWithRebate(t *testing.T) {
	issued := &conciliacao.Terms{Cobv: true, Validade: 30, Pix: rules.CobvTerms{Abatimento: &rules.CobvRule{Modalidade: 1, ValorPerc: 500}}}
	due := time.Date(2027, 2, 10, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		ch   status.Charge
		want int64
	}{
		{"as issued", status.Charge{}, 14500},
		{"changed to 12,34", status.Charge{RebateSet: true, RebateCents: 1234}, 13766},
		{"removed", status.Charge{RebateSet: true}, 15000},
	} {
		got, err := conciliacao.WithRebate(&c.ch, issued).AmountDue(15000, 0, due, due)
		if err != nil || got != c.want {
			t.Errorf("%s: owes %d (%v), want %d", c.name, got, err, c.want)
		}
	}
	if issued.Pix.Abatimento.ValorPerc != 500 {
		t.Error("WithRebate changed the terms it was given")
	}
	slip := &conciliacao.Terms{}
	if conciliacao.WithRebate(&status.Charge{RebateSet: true, RebateCents: 100}, slip) != slip {
		t.Error("a slip's terms were replaced")
	}
}
