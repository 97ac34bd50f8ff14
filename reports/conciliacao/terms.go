package conciliacao

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"time"

	"remessa/pipeline/journal"
	"remessa/rules"
)

// Terms are a row's payment terms as the run sent them (its request in the
// run's journal): what the service computes a payment's amount from, and
// the payer's contact.
type Terms struct {
	Cobv bool
	// Slip terms (carnets and slips): fine, interest, days_to_write_off and
	// the conditional discount as the request gave it; a carnet's parcels
	// get theirs through parcelDiscount. The unconditional discount is
	// already off the value the service gave each charge.
	Slip   rules.SlipTerms
	Carnet bool
	// Pix terms (cobv): multa, juros, abatimento, desconto.
	Pix      rules.CobvTerms
	Validade int // validadeAposVencimento
	Email    string
	Phone    string
}

// owedOn is what a charge of face value due on due owed by t when paid on
// day: the discount (and abatimento) granted and the fine and interest
// charged, by the rules the service uses (rules.SlipAmountDue,
// rules.CobvAmountDue). A day past the last payable one still gives the
// amounts (the service would have refused the payment; a payment it
// recorded anyway is classified by them).
func (t *Terms) owedOn(face int64, parcel int, due, day time.Time) (discount, fineInterest int64, err error) {
	if t.Cobv {
		c, err := rules.CobvAmountDue(face, t.Pix, due, day, t.Validade)
		if err != nil && !errors.Is(err, rules.ErrNotPayable) {
			return 0, 0, err
		}
		return c.Abatimento + c.Desconto, c.Multa + c.Juros, nil
	}
	st := t.Slip
	if t.Carnet {
		st.ConditionalDiscount = parcelDiscount(t.Slip.ConditionalDiscount, parcel)
	}
	c, err := rules.SlipAmountDue(face, st, due, day)
	if err != nil && !errors.Is(err, rules.ErrNotPayable) {
		return 0, 0, err
	}
	return c.Discount, c.Fine + c.Interest, nil
}

// abatimentoOf is the part of a cobv's discount on day that is its
// abatimento (rules.CobvAmountDue's Abatimento; 0 for slips).
func (t *Terms) abatimentoOf(face int64, due, day time.Time) int64 {
	if !t.Cobv || t.Pix.Abatimento == nil {
		return 0
	}
	c, err := rules.CobvAmountDue(face, t.Pix, due, day, t.Validade)
	if err != nil && !errors.Is(err, rules.ErrNotPayable) {
		return 0
	}
	return c.Abatimento
}

// AmountDue is what the payer of a charge of face value due on due owes
// when paying on day: face less the discount (and abatimento) granted,
// plus the fine and interest charged, by the rules the service uses
// (rules.SlipAmountDue for carnet parcels and slips, rules.CobvAmountDue
// for cobv). parcel is the carnet parcel (1-based; 0 otherwise).
func (t *Terms) AmountDue(face int64, parcel int, due, day time.Time) (int64, error) {
	disc, fi, err := t.owedOn(face, parcel, due, day)
	if err != nil {
		return 0, err
	}
	return face - disc + fi, nil
}

// parcelDiscount is the conditional discount parcel n of a carnet gets
// from the carnet's conditional_discount: rules.CarnetParcelDiscount, the
// rule the sandbox applies when it creates the parcels (the carnet's one
// until_date for every parcel; docs/discounts.md).
func parcelDiscount(d *rules.SlipConditionalDiscount, n int) *rules.SlipConditionalDiscount {
	return rules.CarnetParcelDiscount(d, n)
}

// The parts of a request the terms are read from (the journal keeps each
// row's request as pipeline/run's rowReq: {"carnet"|"slip"|"cobv": …}).
type reqTerms struct {
	Carnet *struct {
		Customer            reqCustomer    `json:"customer"`
		Configurations      *reqConf       `json:"configurations"`
		ConditionalDiscount *reqCondDiscnt `json:"conditional_discount"`
	} `json:"carnet"`
	Slip *struct {
		Payment struct {
			BankingBillet struct {
				Customer            reqCustomer    `json:"customer"`
				Configurations      *reqConf       `json:"configurations"`
				ConditionalDiscount *reqCondDiscnt `json:"conditional_discount"`
			} `json:"banking_billet"`
		} `json:"payment"`
	} `json:"slip"`
	Cobv *struct {
		Calendario struct {
			Validade int `json:"validadeAposVencimento"`
		} `json:"calendario"`
		Devedor struct {
			Email string `json:"email"`
		} `json:"devedor"`
		Valor struct {
			Multa      *reqMod `json:"multa"`
			Juros      *reqMod `json:"juros"`
			Abatimento *reqMod `json:"abatimento"`
			Desconto   *struct {
				Modalidade int    `json:"modalidade"`
				ValorPerc  string `json:"valorPerc"`
				DataFixa   []struct {
					Data      string `json:"data"`
					ValorPerc string `json:"valorPerc"`
				} `json:"descontoDataFixa"`
			} `json:"desconto"`
		} `json:"valor"`
	} `json:"cobv"`
}

type reqCustomer struct {
	Email string `json:"email"`
	Phone string `json:"phone_number"`
}

type reqConf struct {
	Fine           int64 `json:"fine"`
	Interest       int64 `json:"interest"`
	DaysToWriteOff *int  `json:"days_to_write_off"`
}

type reqCondDiscnt struct {
	Type      string `json:"type"`
	Value     int64  `json:"value"`
	UntilDate string `json:"until_date"`
}

type reqMod struct {
	Modalidade int    `json:"modalidade"`
	ValorPerc  string `json:"valorPerc"`
}

func (m *reqMod) rule() *rules.CobvRule {
	if m == nil {
		return nil
	}
	v, _ := rules.ParsePixAmount(m.ValorPerc)
	return &rules.CobvRule{Modalidade: m.Modalidade, ValorPerc: v}
}

// ParseTerms reads the terms of one row's request as the run's journal
// keeps it (pipeline/run's rowReq); nil when it has none the
// reconciliation knows. The régua's reminders (pipeline/remind) read the
// payer's e-mail and the amount due today from them too.
func ParseTerms(req []byte) *Terms {
	var r reqTerms
	if len(req) == 0 || json.Unmarshal(req, &r) != nil {
		return nil
	}
	slip := func(cu reqCustomer, conf *reqConf, cd *reqCondDiscnt) *Terms {
		t := &Terms{Email: cu.Email, Phone: cu.Phone}
		if conf != nil {
			t.Slip.Fine, t.Slip.Interest, t.Slip.DaysToWriteOff = conf.Fine, conf.Interest, conf.DaysToWriteOff
		}
		if cd != nil {
			until, err := rules.ParseISODate(cd.UntilDate)
			if err == nil {
				t.Slip.ConditionalDiscount = &rules.SlipConditionalDiscount{Type: cd.Type, Value: cd.Value, Until: until}
			}
		}
		return t
	}
	switch {
	case r.Carnet != nil:
		t := slip(r.Carnet.Customer, r.Carnet.Configurations, r.Carnet.ConditionalDiscount)
		t.Carnet = true
		return t
	case r.Slip != nil:
		b := &r.Slip.Payment.BankingBillet
		return slip(b.Customer, b.Configurations, b.ConditionalDiscount)
	case r.Cobv != nil:
		c := r.Cobv
		t := &Terms{Cobv: true, Validade: c.Calendario.Validade, Email: c.Devedor.Email}
		t.Pix.Multa, t.Pix.Juros, t.Pix.Abatimento = c.Valor.Multa.rule(), c.Valor.Juros.rule(), c.Valor.Abatimento.rule()
		if d := c.Valor.Desconto; d != nil {
			v, _ := rules.ParsePixAmount(d.ValorPerc)
			t.Pix.Desconto = &rules.CobvDesconto{Modalidade: d.Modalidade, ValorPerc: v}
			for _, f := range d.DataFixa {
				day, err := rules.ParseISODate(f.Data)
				fv, _ := rules.ParsePixAmount(f.ValorPerc)
				if err == nil {
					t.Pix.Desconto.DataFixa = append(t.Pix.Desconto.DataFixa, rules.CobvDiscountDate{Data: day, ValorPerc: fv})
				}
			}
		}
		return t
	}
	return nil
}

// termsReader hands out the terms of a run's rows in row order, reading
// the journal a page at a time (a run of any size in constant memory).
type termsReader struct {
	ctx  context.Context
	j    *journal.Journal
	page []journal.Row
	pos  int
	last int
	done bool
	cur  struct {
		idx int
		t   *Terms
	}
}

// openTerms opens the journal of the run in dir; a run folder without one
// (a run on PostgreSQL) gives a reader that knows no terms.
func openTerms(ctx context.Context, dir string) (*termsReader, error) {
	tr := &termsReader{ctx: ctx, last: -1}
	tr.cur.idx = -1
	p := filepath.Join(dir, journal.FileName)
	if _, err := os.Stat(p); err != nil {
		tr.done = true
		return tr, nil
	}
	j, err := journal.Open(p)
	if err != nil {
		return nil, err
	}
	tr.j = j
	return tr, nil
}

// of returns the terms of row idx (rows asked in increasing order), nil
// when the journal has none.
func (tr *termsReader) of(idx int) (*Terms, error) {
	if idx == tr.cur.idx {
		return tr.cur.t, nil
	}
	for !tr.done {
		if tr.pos >= len(tr.page) {
			page, err := tr.j.RowsPage(tr.ctx, journal.Page{After: tr.last, Limit: 1000, Once: true})
			if err != nil {
				return nil, err
			}
			if len(page) == 0 {
				tr.done = true
				break
			}
			tr.page, tr.pos, tr.last = page, 0, page[len(page)-1].Index
		}
		r := &tr.page[tr.pos]
		if r.Index > idx {
			break
		}
		tr.pos++
		if r.Index == idx {
			tr.cur.idx, tr.cur.t = idx, ParseTerms(r.Req)
			return tr.cur.t, nil
		}
	}
	tr.cur.idx, tr.cur.t = idx, nil
	return nil, nil
}

func (tr *termsReader) close() {
	if tr.j != nil {
		tr.j.Close()
	}
}
