package retorno

import (
	"context"
	"strconv"
	"strings"
	"time"

	"remessa/pipeline/results"
	"remessa/pipeline/status"
	"remessa/reports/conciliacao"
	"remessa/rules"
)

// collector turns a run's results and ledger into the events a retorno
// reports, in row and parcel order: for each row, its rejection or, for
// each of its charges, the entry, a due date change, the payment, manual
// settlement or write-off, and a refund.
type collector struct {
	res    *results.Results
	echo   *Echo
	spec   *layoutSpec
	lang   string
	pos    map[int]int // row index → position in res.Rows
	runDay string
	// rebates are the ledger's changes of a cobv's abatimento, by charge
	// key (status.Ledger.RebateEvents)
	rebates map[string][]status.RebateEvent
}

func newCollector(res *results.Results, echo *Echo, spec *layoutSpec, lang string) *collector {
	c := &collector{res: res, echo: echo, spec: spec, lang: lang, pos: make(map[int]int, len(res.Rows))}
	for i := range res.Rows {
		c.pos[res.Rows[i].Index] = i
	}
	c.runDay = isoDay(res.Run.StartedAt)
	return c
}

// isoDay is the São Paulo day of an RFC 3339 time, or the date a
// YYYY-MM-DD… string starts with.
func isoDay(s string) string {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return rules.FormatISODate(rules.Today(t))
	}
	if len(s) >= 10 {
		return s[:10]
	}
	return s
}

func (c *collector) maxMotivos() int {
	if f := c.spec.layout().Field(detailRec(c.spec), "motivos"); f != nil {
		return f.Width() / 2
	}
	return 0
}

func detailRec(s *layoutSpec) string {
	if s.name == Layout240 {
		return "3T"
	}
	return "1"
}

func (c *collector) ids(row *results.Row) TitleIDs {
	if c.echo != nil && c.echo.Titles != nil {
		if t, ok := c.echo.Titles[row.SourceRow]; ok {
			return t
		}
	}
	return TitleIDs{}
}

func (c *collector) base(row *results.Row) Entry {
	ids := c.ids(row)
	return Entry{Row: row.Index, SourceRow: row.SourceRow, SeuNumero: firstOf(ids.SeuNumero, row.Key), UsoEmpresa: ids.UsoEmpresa,
		ERPNosso: ids.NossoNumero, Payer: row.PayerName, PayerDoc: row.PayerDoc, Due: row.DueDate, Value: row.AmountCents}
}

// rejection is the 03 of a refused or denied row.
func (c *collector) rejection(row *results.Row) Entry {
	e := c.base(row)
	e.Event, e.Key, e.Code = EventRejeicao, "rejeicao|row:"+strconv.Itoa(row.Index), c.spec.codes[EventRejeicao]
	e.Motivos, e.Text = motivos(row, c.maxMotivos(), c.lang)
	e.Occurred = c.runDay
	return e
}

// issuedDue is the due date a charge was issued with.
func issuedDue(row *results.Row, parcel int) string {
	for _, p := range row.Parcels {
		if p.Number == parcel {
			return p.DueDate
		}
	}
	return row.DueDate
}

// run calls fn with every event of the run in dir, in order.
func (c *collector) run(ctx context.Context, dir string, today time.Time, fn func(*Entry) error) error {
	l, err := status.OpenLedger(dir)
	if err != nil {
		return err
	}
	c.rebates, err = l.RebateEvents(ctx)
	l.Close()
	if err != nil {
		return err
	}
	rows := c.res.Rows
	next := 0
	flush := func(upTo int) error {
		for next < len(rows) && rows[next].Index < upTo {
			row := &rows[next]
			next++
			if row.Outcome == results.Refused || row.Outcome == results.Denied {
				e := c.rejection(row)
				if err := fn(&e); err != nil {
					return err
				}
			}
		}
		return nil
	}
	err = conciliacao.EachLine(ctx, dir, today, func(ch *status.Charge, l *conciliacao.Line) error {
		if err := flush(ch.RowIndex); err != nil {
			return err
		}
		i, ok := c.pos[ch.RowIndex]
		if !ok {
			return nil
		}
		row := &rows[i]
		if next <= i {
			next = i + 1
		}
		return c.charge(row, ch, l, fn)
	})
	if err != nil {
		return err
	}
	return flush(int(^uint(0) >> 1))
}

// charge calls fn with the events of one charge.
func (c *collector) charge(row *results.Row, ch *status.Charge, l *conciliacao.Line, fn func(*Entry) error) error {
	b := c.base(row)
	b.Parcel, b.ChargeID, b.Txid, b.Value, b.Due = ch.Parcel, ch.ChargeID, ch.Txid, ch.ValueCents, ch.Due
	if ch.ChargeID != 0 {
		b.NossoNumero = strconv.FormatInt(ch.ChargeID, 10)
	}
	if ch.Payer != "" {
		b.Payer = ch.Payer
	}
	emit := func(event, key string, set func(e *Entry)) error {
		e := b
		e.Event, e.Key, e.Code = event, event+"|"+key, c.spec.codes[event]
		set(&e)
		return fn(&e)
	}
	issued := issuedDue(row, ch.Parcel)
	if err := emit(EventEntrada, ch.Key, func(e *Entry) { e.Due, e.Occurred = firstOf(issued, ch.Due), c.runDay }); err != nil {
		return err
	}
	if issued != "" && ch.Due != issued {
		if err := emit(EventVencimento, ch.Key+"|"+ch.Due, func(e *Entry) { e.Occurred = isoDay(ch.UpdatedAt) }); err != nil {
			return err
		}
	}
	for _, r := range c.rebates[ch.Key] {
		// each change its own event: 12 with the abatimento granted, 13
		// with the one cancelled (when known)
		ev, v := EventAbatimento, r.Rebate.Cents
		if v == 0 {
			ev, v = EventAbatimentoCancelado, max(r.Rebate.Before, 0)
		}
		if err := emit(ev, ch.Key+"|"+strconv.FormatInt(r.ID, 10), func(e *Entry) {
			e.Abatimento, e.Occurred = v, isoDay(r.SeenAt)
		}); err != nil {
			return err
		}
	}
	switch ch.State {
	case status.StatePaid, status.StateRefunded:
		if err := emit(EventLiquidacao, ch.Key, func(e *Entry) {
			e.Paid, e.Method = l.Paid, ch.Method
			e.FineInterest, e.Discount, e.Abatimento = l.FineInterest, l.Discount-l.Abatimento, l.Abatimento
			e.Over, e.Short = l.Over, l.Short
			e.Occurred = firstOf(l.PaidOn, isoDay(ch.PaidAt))
			e.Credit = e.Occurred
		}); err != nil {
			return err
		}
	case status.StateSettled:
		if err := emit(EventManual, ch.Key, func(e *Entry) {
			e.Paid, e.Method = ch.PaidCents, status.MethodManual
			e.Occurred = firstOf(isoDay(ch.PaidAt), isoDay(ch.UpdatedAt))
			if c.spec.name == Layout240 {
				e.Motivos = []string{motivoBaixaCliente}
			}
			e.Text = "paga fora do banco (baixa manual)"
			if l.Short > 0 || l.Over > 0 {
				e.Short, e.Over = l.Short, l.Over
			}
		}); err != nil {
			return err
		}
	case status.StateCancelled:
		if err := emit(EventBaixa, ch.Key, func(e *Entry) {
			e.Occurred = isoDay(ch.UpdatedAt)
			m, text := motivoBaixaCliente, "cancelada"
			switch {
			case status.ServiceSaysOverdue(ch.Status):
				m, text = motivoBaixaPrazo, "prazo de pagamento encerrado"
			case strings.HasSuffix(ch.Status, "_PSP"):
				m, text = motivoBaixaBanco, "removida pelo PSP"
			}
			switch c.spec.name {
			case Layout240:
				e.Motivos = []string{m}
			case Layout400Brad:
				if m == motivoBaixaCliente {
					e.Motivos = []string{"10"} // baixa comandada pelo cliente
				}
			}
			e.Text = text
		}); err != nil {
			return err
		}
	}
	if ch.RefundCents > 0 {
		return emit(EventEstorno, ch.Key+"|"+strconv.FormatInt(ch.RefundCents, 10), func(e *Entry) {
			e.Refunded = ch.RefundCents
			e.Occurred = isoDay(ch.UpdatedAt)
			e.Text = "pagamento devolvido ao pagador"
		})
	}
	return nil
}
