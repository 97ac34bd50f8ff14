package pix

import (
	"errors"
	"testing"
	"time"

	"remessa/rules"
)

// TestOwed checks the sandbox's use of rules.CobvAmountDue (valor
// modalidades read from the cobv as answered) against hand-computed values.
func TestOwed(t *testing.T) {
	mk := func(orig int64, v Valor) *charge {
		v.Original = rules.FormatPixAmount(orig)
		return &charge{Kind: kindCobV, Cents: orig, Body: Cob{Calendario: Calendario{DataDeVencimento: "2030-01-10"}, Valor: v}}
	}
	day := func(s string) string { return s }
	cases := []struct {
		name string
		c    *charge
		day  string
		want int64
	}{
		{"plain cobv", mk(10000, Valor{}), "2030-02-01", 10000},
		// 2% fine + 1%/month for 10 days: 2.00 + 100*0.01*10/30 = 2.3333 -> 102.33
		{"multa 2 juros 3", mk(10000, Valor{Multa: &Modalidade{Modalidade: 2, ValorPerc: "2.00"}, Juros: &Modalidade{Modalidade: 3, ValorPerc: "1.00"}}), "2030-01-20", 10233},
		{"on the due date no fine", mk(10000, Valor{Multa: &Modalidade{Modalidade: 2, ValorPerc: "2.00"}, Juros: &Modalidade{Modalidade: 3, ValorPerc: "1.00"}}), "2030-01-10", 10000},
		// abatimento 5.00 and fixed-date discounts 10.00 until 01-05, 5.00 until 01-08
		{"desconto first date", mk(10000, Valor{Abatimento: &Modalidade{Modalidade: 1, ValorPerc: "5.00"}, Desconto: &Desconto{Modalidade: 1, DescontoDataFixa: []DataFixa{{Data: "2030-01-05", ValorPerc: "10.00"}, {Data: "2030-01-08", ValorPerc: "5.00"}}}}), "2030-01-05", 8500},
		{"desconto second date", mk(10000, Valor{Abatimento: &Modalidade{Modalidade: 1, ValorPerc: "5.00"}, Desconto: &Desconto{Modalidade: 1, DescontoDataFixa: []DataFixa{{Data: "2030-01-05", ValorPerc: "10.00"}, {Data: "2030-01-08", ValorPerc: "5.00"}}}}), "2030-01-06", 9000},
		{"desconto expired", mk(10000, Valor{Abatimento: &Modalidade{Modalidade: 1, ValorPerc: "5.00"}, Desconto: &Desconto{Modalidade: 1, DescontoDataFixa: []DataFixa{{Data: "2030-01-05", ValorPerc: "10.00"}, {Data: "2030-01-08", ValorPerc: "5.00"}}}}), "2030-01-09", 9500},
		{"desconto 2 percent", mk(20000, Valor{Desconto: &Desconto{Modalidade: 2, DescontoDataFixa: []DataFixa{{Data: "2030-01-10", ValorPerc: "2.50"}}}}), "2030-01-10", 19500},
		{"abatimento percent", mk(10000, Valor{Abatimento: &Modalidade{Modalidade: 2, ValorPerc: "10.00"}}), "2030-02-01", 9000},
		// due on Saturday 2030-01-12: Monday 01-14 is still on time
		{"weekend due date", func() *charge {
			c := mk(10000, Valor{Multa: &Modalidade{Modalidade: 1, ValorPerc: "7.00"}})
			c.Body.Calendario.DataDeVencimento = "2030-01-12"
			return c
		}(), "2030-01-14", 10000},
		{"weekend due date, Tuesday", func() *charge {
			c := mk(10000, Valor{Multa: &Modalidade{Modalidade: 1, ValorPerc: "7.00"}})
			c.Body.Calendario.DataDeVencimento = "2030-01-12"
			return c
		}(), "2030-01-15", 10700},
		// 0.10% per business day, Fri 11, Mon 14, Tue 15 = 3 days -> 0.30
		{"juros 6 business days", mk(10000, Valor{Juros: &Modalidade{Modalidade: 6, ValorPerc: "0.10"}}), "2030-01-15", 10030},
		// 0.50% of the original per calendar day of anticipation, 3 days -> 1.50
		{"desconto 5", mk(10000, Valor{Desconto: &Desconto{Modalidade: 5, ValorPerc: "0.50"}}), "2030-01-07", 9850},
		// 0.20 per business day of anticipation: Mon 7 -> Thu 10 = Tue, Wed, Thu = 3 -> 0.60
		{"desconto 4", mk(10000, Valor{Desconto: &Desconto{Modalidade: 4, ValorPerc: "0.20"}}), "2030-01-07", 9940},
		{"juros 1 per day", mk(10000, Valor{Juros: &Modalidade{Modalidade: 1, ValorPerc: "0.33"}}), "2030-01-20", 10330},
		{"juros 4 per year", mk(10000, Valor{Juros: &Modalidade{Modalidade: 4, ValorPerc: "36.50"}}), "2030-01-11", 10010},
		// 1.00 * 0.5% * 1 day = 0.005 -> half up -> 1.01
		{"half up", mk(100, Valor{Juros: &Modalidade{Modalidade: 2, ValorPerc: "0.50"}}), "2030-01-11", 101},
		// an abatimento of 100 %: nothing left to pay (Pay refuses it)
		{"abatimento of everything", mk(100, Valor{Abatimento: &Modalidade{Modalidade: 2, ValorPerc: "100.00"}}), "2030-01-01", 0},
		// validadeAposVencimento 30 (the default): 2030-02-09 is the last day
		{"last payable day", mk(10000, Valor{}), "2030-02-09", 10000},
	}
	for _, tc := range cases {
		d, err := rules.ParseISODate(day(tc.day))
		if err != nil {
			t.Fatal(err)
		}
		got, err := owed(tc.c, d)
		if err != nil || got.Final != tc.want {
			t.Errorf("%s: %d (%v), want %d", tc.name, got.Final, err, tc.want)
		}
	}
	cob := &charge{Kind: kindCob, Cents: 1234}
	if got, err := owed(cob, rules.Today(mustDate("2030-01-01"))); err != nil || got.Final != 1234 {
		t.Fatal("cob", got, err)
	}
	// 2030-01-10 + 30 days = 2030-02-09; the day after is refused.
	if _, err := owed(mk(10000, Valor{}), mustDate("2030-02-10")); !errors.Is(err, ErrNotPayable) {
		t.Fatalf("after validadeAposVencimento: %v, want ErrNotPayable", err)
	}
}

func mustDate(s string) (d time.Time) {
	d, _ = rules.ParseISODate(s)
	return d
}
