package control_test

import (
	"errors"
	"testing"
	"time"

	"remessa/api"
	"remessa/internal/sandboxclient"
	"remessa/sandbox"
	"remessa/sandbox/clock"
	"remessa/sandbox/control"
	"remessa/sandbox/sandboxtest"
)

// What a payment without a value pays, through the whole core on loopback
// (api client, control client, fake clock moved with the clock control).
// Every expected amount is worked out by hand in its comment; none comes
// from rules. t0 is Monday 2026-03-02. National holidays near the dates
// used: Carnival 16-17 Feb, Good Friday 3 Apr, Tiradentes 21 Apr, 1 May —
// none falls inside a lateness counted below (interest counts calendar
// days anyway; only the adjusted due date looks at business days).

type dueEnv struct {
	t   *testing.T
	clk *clock.Fake
	rn  *sandbox.Running
	c   *api.Client
	ctl *control.Client
}

func newDueEnv(t *testing.T) *dueEnv {
	clk := clock.NewFake(t0)
	rn := sandboxtest.Start(t, sandbox.Config{Clock: clk})
	return &dueEnv{t: t, clk: clk, rn: rn, c: sandboxclient.Client(t, rn, func(cfg *api.Config) { cfg.Now = clk.Now }),
		ctl: &control.Client{BaseURL: rn.URL}}
}

// to moves the sandbox clock to day (YYYY-MM-DD) through the control.
func (e *dueEnv) to(day string) {
	e.t.Helper()
	s, err := e.ctl.Advance(ctx, control.AdvanceRequest{To: day})
	if err != nil || s.Today != day {
		e.t.Fatalf("advance to %s: %v %+v", day, err, s)
	}
}

func (e *dueEnv) oneStep(cents int64, b api.BankingBillet) int64 {
	e.t.Helper()
	b.Customer = customer()
	res, err := e.c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: []api.Item{{Name: "Mensalidade", Value: cents, Amount: 1}},
		Payment: api.Payment{BankingBillet: &b}})
	if err != nil {
		e.t.Fatal(err)
	}
	return res.ChargeID
}

func (e *dueEnv) paidValue(id int64) int64 {
	e.t.Helper()
	ch, err := e.c.GetCharge(ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	if ch.Status != "paid" || ch.Payment == nil {
		e.t.Fatalf("charge %d: status %s, payment %+v", id, ch.Status, ch.Payment)
	}
	return ch.Payment.PaidValue
}

func i64(n int64) *int64 { return &n }

// A carnet parcel of R$ 150,00 with a 2 % fine and 0,033 % a day, paid 10
// days late, comes in at value + fine + interest, in the pay answer, the
// charge's paid_value, the listing and the notification.
func TestPayParcelLateWithFineAndInterest(t *testing.T) {
	e := newDueEnv(t)
	rc := newReceiver(t)
	cn, err := e.c.CreateCarnet(ctx, api.CarnetRequest{Items: []api.Item{{Name: "Mensalidade", Value: 15000, Amount: 1}},
		Customer: customer(), ExpireAt: "2026-03-10", Repeats: 3, Configurations: &api.CarnetConfigurations{Fine: 200, Interest: 33},
		Metadata: &api.Metadata{NotificationURL: rc.URL}})
	if err != nil {
		t.Fatal(err)
	}
	// Parcel 1 is due Tuesday 2026-03-10 (a business day). Paid Friday
	// 2026-03-20: 10 days late.
	//   fine     = 150,00 × 2 %              = 3,00
	//   interest = 150,00 × 0,033 % × 10     = 0,495 → 0,50 (half up)
	//   total    = 150,00 + 3,00 + 0,50      = 153,50
	e.to("2026-03-20")
	r, err := e.ctl.PayParcel(ctx, cn.CarnetID, 1, control.PayRequest{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Value != 15350 || r.Owed != 15350 || r.Fine != 300 || r.Interest != 50 || r.DaysLate != 10 || r.Discount != 0 || r.PaidAt != "2026-03-20" {
		t.Fatalf("pay parcel 1: %+v, want value 15350 = 15000 + fine 300 + interest 50, 10 days late", r)
	}
	if got := e.paidValue(cn.Charges[0].ChargeID); got != 15350 {
		t.Fatalf("paid_value %d, want 15350", got)
	}
	list, err := e.c.ListCharges(ctx, api.ChargeListQuery{ChargeType: "carnet", BeginDate: "2026-03-01", EndDate: "2026-03-31"})
	if err != nil {
		t.Fatal(err)
	}
	var listed bool
	for _, it := range list.Data {
		if it.ID == cn.Charges[0].ChargeID {
			listed = it.Payment != nil && it.Payment.PaidValue == 15350
		}
	}
	if !listed {
		t.Fatalf("listing: parcel 1 without paid_value 15350: %+v", list.Data)
	}
	// The notification's change carries the value.
	for deadline := time.Now().Add(10 * time.Second); len(rc.got()) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no notification")
		}
	}
	changes, err := e.c.GetNotification(ctx, rc.got()[0])
	if err != nil {
		t.Fatal(err)
	}
	var notified bool
	for _, ch := range changes {
		if ch.Identifiers.ChargeID == cn.Charges[0].ChargeID && ch.Status.Current == "paid" {
			notified = ch.Value != nil && *ch.Value == 15350 && ch.ReceivedByBankAt == "2026-03-20"
		}
	}
	if !notified {
		t.Fatalf("changes %+v: want parcel 1 paid with value 15350 received 2026-03-20", changes)
	}

	// Parcel 2 is due Friday 2026-04-10; paid with a date (--date): the
	// bank received it Monday 2026-04-20, 10 days late, reported on 04-25.
	// Same arithmetic: 150,00 + 3,00 + 0,50 = 153,50.
	e.to("2026-04-25")
	r, err = e.ctl.PayParcel(ctx, cn.CarnetID, 2, control.PayRequest{PaidAt: "2026-04-20"}, "")
	if err != nil || r.Value != 15350 || r.DaysLate != 10 || r.PaidAt != "2026-04-20" {
		t.Fatalf("pay parcel 2 with paid_at: %v %+v, want 15350", err, r)
	}

	// Parcel 3 (due Sunday 2026-05-10, so Monday 05-11 is the adjusted due
	// date) with a value: a partial payment records what came in, and the
	// answer says what was owed. Paid Wednesday 05-13: 2 days after 05-11.
	//   fine 3,00; interest = 150,00 × 0,033 % × 2 = 0,099 → 0,10
	//   owed = 153,10; paid 100,00.
	e.to("2026-05-13")
	r, err = e.ctl.PayParcel(ctx, cn.CarnetID, 3, control.PayRequest{Value: i64(10000)}, "")
	if err != nil || r.Value != 10000 || r.Owed != 15310 || r.DaysLate != 2 {
		t.Fatalf("partial payment of parcel 3: %v %+v, want value 10000 owed 15310", err, r)
	}
	if got := e.paidValue(cn.Charges[2].ChargeID); got != 10000 {
		t.Fatalf("partial paid_value %d, want 10000", got)
	}
}

// A slip paid on time with a conditional discount: R$ 160,00 with an
// unconditional discount of R$ 10,00 (the charge total is R$ 150,00) and
// 5 % until 5 days before the due date.
func TestPaySlipConditionalDiscount(t *testing.T) {
	e := newDueEnv(t)
	terms := api.BankingBillet{ExpireAt: "2026-03-20", Configurations: &api.Configurations{Fine: 200, Interest: 33},
		Discount:            &api.Discount{Type: "currency", Value: 1000},
		ConditionalDiscount: &api.ConditionalDiscount{Type: "percentage", Value: 500, UntilDate: "2026-03-15"}}
	onTime, late := e.oneStep(16000, terms), e.oneStep(16000, terms)
	// Paid 2026-03-15, the last day of the conditional discount:
	//   160,00 − 10,00 = 150,00 (the total); 5 % of 150,00 = 7,50;
	//   150,00 − 7,50 = 142,50.
	e.to("2026-03-15")
	r, err := e.ctl.PayCharge(ctx, onTime, control.PayRequest{}, "")
	if err != nil || r.Value != 14250 || r.Discount != 750 || r.Fine != 0 {
		t.Fatalf("on time with conditional discount: %v %+v, want 14250", err, r)
	}
	if got := e.paidValue(onTime); got != 14250 {
		t.Fatalf("paid_value %d, want 14250", got)
	}
	// The day after: no conditional discount, not late either: 150,00.
	e.to("2026-03-16")
	r, err = e.ctl.PayCharge(ctx, late, control.PayRequest{}, "")
	if err != nil || r.Value != 15000 || r.Discount != 0 {
		t.Fatalf("after the discount date: %v %+v, want 15000", err, r)
	}
}

// days_to_write_off: payable through due + n, and always through the
// adjusted due date; after it the payment is refused, with or without a
// value.
func TestPaySlipAfterWriteOffRefused(t *testing.T) {
	e := newDueEnv(t)
	zero, two := int64(0), int64(2)
	// Due Saturday 2026-03-14 with days_to_write_off 0: Monday 03-16 (the
	// adjusted due date) still pays, at face value (not late).
	sat1 := e.oneStep(15000, api.BankingBillet{ExpireAt: "2026-03-14", Configurations: &api.Configurations{Fine: 200, Interest: 33, DaysToWriteOff: &zero}})
	sat2 := e.oneStep(15000, api.BankingBillet{ExpireAt: "2026-03-14", Configurations: &api.Configurations{Fine: 200, Interest: 33, DaysToWriteOff: &zero}})
	// Due Tuesday 2026-03-10 with days_to_write_off 2: 03-12 is the last
	// day; 03-12 pays 150,00 + 3,00 + 150,00 × 0,033 % × 2 = 0,099 → 0,10
	// = 153,10; 03-13 is refused.
	tue1 := e.oneStep(15000, api.BankingBillet{ExpireAt: "2026-03-10", Configurations: &api.Configurations{Fine: 200, Interest: 33, DaysToWriteOff: &two}})
	tue2 := e.oneStep(15000, api.BankingBillet{ExpireAt: "2026-03-10", Configurations: &api.Configurations{Fine: 200, Interest: 33, DaysToWriteOff: &two}})

	e.to("2026-03-12")
	if r, err := e.ctl.PayCharge(ctx, tue1, control.PayRequest{}, ""); err != nil || r.Value != 15310 {
		t.Fatalf("last payable day: %v %+v, want 15310", err, r)
	}
	e.to("2026-03-16")
	if r, err := e.ctl.PayCharge(ctx, sat1, control.PayRequest{}, ""); err != nil || r.Value != 15000 || r.DaysLate != 0 {
		t.Fatalf("Saturday due date paid on Monday: %v %+v, want 15000", err, r)
	}
	for _, req := range []control.PayRequest{{}, {Value: i64(15000)}} {
		_, err := e.ctl.PayCharge(ctx, tue2, req, "")
		var ce *control.Error
		if !errors.As(err, &ce) || ce.Status != 400 || ce.Code != 3500906 {
			t.Fatalf("paid after the write-off (value %v): %v, want 400 code 3500906", req.Value, err)
		}
	}
	e.to("2026-03-17")
	_, err := e.ctl.PayCharge(ctx, sat2, control.PayRequest{}, "")
	var ce *control.Error
	if !errors.As(err, &ce) || ce.Code != 3500906 {
		t.Fatalf("Saturday due date paid on Tuesday with days_to_write_off 0: %v, want 3500906", err)
	}
}

func cobv(e *dueEnv, txid, due string, validade int, v api.PixValor) *api.Cob {
	e.t.Helper()
	cv, err := e.c.PutCobV(ctx, txid, api.CobVRequest{
		Calendario: api.PixCalendario{DataDeVencimento: due, ValidadeAposVencimento: &validade},
		Devedor:    api.PixPessoa{CPF: "52998224725", Nome: "Fulano de Tal"},
		Valor:      v, Chave: e.rn.PixKey})
	if err != nil {
		e.t.Fatal(err)
	}
	return cv
}

// A cobv without a valor pays rules' valor final on the sandbox's date;
// the received Pix carries it, the cobv keeps valor.original, and the Pix
// can be refunded (devolução) and shows it in GET /v2/pix.
func TestPayCobvAmountDue(t *testing.T) {
	e := newDueEnv(t)
	// R$ 200,00 due Tuesday 2026-03-10, multa 2 % (modalidade 2), juros
	// 1 % a month (modalidade 3, calendar days), paid Wednesday 03-25: 15
	// calendar days late.
	//   multa = 200,00 × 2 %             = 4,00
	//   juros = 200,00 × 1 % × 15 / 30   = 1,00
	//   final = 200,00 + 4,00 + 1,00     = 205,00
	late := cobv(e, "tardia000000000000000000000001", "2026-03-10", 30, api.PixValor{Original: "200.00",
		Multa: &api.PixModalidade{Modalidade: 2, ValorPerc: "2.00"}, Juros: &api.PixModalidade{Modalidade: 3, ValorPerc: "1.00"}})
	// R$ 200,00 due Friday 2026-03-20, desconto modalidade 1: R$ 10,00
	// until 03-15, 5 days before; paid 03-15 → 200,00 − 10,00 = 190,00.
	early := cobv(e, "antecipada00000000000000000001", "2026-03-20", 30, api.PixValor{Original: "200.00",
		Desconto: &api.PixDesconto{Modalidade: 1, DescontoDataFixa: []api.PixDataFixa{{Data: "2026-03-15", ValorPerc: "10.00"}}}})
	// R$ 200,00 due 2026-03-10 with validadeAposVencimento 5: 03-15 is
	// the last day, so on 03-25 it is refused.
	expired := cobv(e, "vencida0000000000000000000001", "2026-03-10", 5, api.PixValor{Original: "200.00"})

	e.to("2026-03-15")
	p, err := e.ctl.PayPix(ctx, early.Txid, "")
	if err != nil || p.Valor != "190.00" || p.Desconto != "10.00" {
		t.Fatalf("cobv paid early: %v %+v, want 190.00", err, p)
	}
	e.to("2026-03-25")
	p, err = e.ctl.PayPix(ctx, late.PixCopiaECola, "")
	if err != nil || p.Valor != "205.00" || p.Multa != "4.00" || p.Juros != "1.00" || p.DiasAtraso != 15 || p.Original != "200.00" {
		t.Fatalf("cobv paid late: %v %+v, want 205.00", err, p)
	}
	for _, valor := range []string{"", "200.00"} {
		_, err = e.ctl.PayPix(ctx, expired.Txid, valor)
		var ce *control.Error
		if !errors.As(err, &ce) || ce.Status != 400 {
			t.Fatalf("cobv paid after validadeAposVencimento (valor %q): %v, want 400", valor, err)
		}
	}

	// The received Pix carries the value; the cobv keeps valor.original.
	got, err := e.c.GetCobV(ctx, late.Txid)
	if err != nil || got.Status != "CONCLUIDA" || got.Valor.Original != "200.00" || len(got.Pix) != 1 || got.Pix[0].Valor != "205.00" {
		t.Fatalf("GET cobv after payment: %v %+v", err, got)
	}
	win := api.ListParams{Inicio: e.clk.Now().Add(-24 * time.Hour), Fim: e.clk.Now().Add(time.Hour)}
	list, err := e.c.ListPix(ctx, api.ListPixParams{ListParams: win, Txid: late.Txid})
	if err != nil || len(list.Pix) != 1 || list.Pix[0].Valor != "205.00" || list.Pix[0].EndToEndID != p.EndToEndID {
		t.Fatalf("GET /v2/pix: %v %+v", err, list)
	}

	// Refund R$ 5,00 of it (the multa and juros back).
	dv, err := e.c.PutDevolucao(ctx, p.EndToEndID, "estorno1", api.DevolucaoRequest{Valor: "5.00"})
	if err != nil || dv.Valor != "5.00" {
		t.Fatalf("PUT devolucao: %v %+v", err, dv)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		list, err = e.c.ListPix(ctx, api.ListPixParams{ListParams: win, Txid: late.Txid})
		if err != nil {
			t.Fatal(err)
		}
		if d := list.Pix[0].Devolucoes; len(d) == 1 && d[0].Status != "EM_PROCESSAMENTO" {
			if d[0].ID != "estorno1" || d[0].Valor != "5.00" || d[0].Status != "DEVOLVIDO" {
				t.Fatalf("devolucoes %+v", d)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("refund not settled: %+v", list.Pix[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
	withRefund, err := e.c.ListPix(ctx, api.ListPixParams{ListParams: win, DevolucaoPresente: boolp(true)})
	if err != nil || len(withRefund.Pix) != 1 || withRefund.Pix[0].EndToEndID != p.EndToEndID {
		t.Fatalf("GET /v2/pix?devolucaoPresente=true: %v %+v", err, withRefund)
	}
}

func boolp(b bool) *bool { return &b }
