package control_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"remessa/api"
	"remessa/sandbox/control"
)

func TestClockRoutes(t *testing.T) {
	e := newEnv(t, "")
	var s control.ClockState
	if st := e.control("GET", "/sandbox/clock", nil, &s); st != 200 {
		t.Fatalf("GET clock: %d", st)
	}
	// t0 is 13:00 UTC = 10:00 in São Paulo.
	if s.Now != "2026-03-02T10:00:00-03:00" || s.Today != "2026-03-02" || !s.Adjustable {
		t.Fatalf("clock %+v", s)
	}
	cases := []struct {
		body map[string]string
		now  string
	}{
		{map[string]string{"duration": "48h"}, "2026-03-04T10:00:00-03:00"},
		{map[string]string{"duration": "1d12h"}, "2026-03-05T22:00:00-03:00"},
		{map[string]string{"duration": "90m"}, "2026-03-05T23:30:00-03:00"},
		{map[string]string{"to": "2026-04-01"}, "2026-04-01T23:30:00-03:00"}, // keeps the time of day
		{map[string]string{"to": "2026-04-02T08:00:00-03:00"}, "2026-04-02T08:00:00-03:00"},
	}
	for _, c := range cases {
		s = control.ClockState{}
		if st := e.control("POST", "/sandbox/clock/advance", c.body, &s); st != 200 || s.Now != c.now {
			t.Fatalf("advance %v: %d now %s, want %s", c.body, st, s.Now, c.now)
		}
		if s.Delivered == nil {
			t.Errorf("advance %v did not run the outbox", c.body)
		}
	}
	if !e.clk.Now().Equal(time.Date(2026, 4, 2, 11, 0, 0, 0, time.UTC)) {
		t.Fatalf("fake clock at %v", e.clk.Now())
	}
	bad := []map[string]string{
		{},
		{"duration": "-1h"},
		{"duration": "0s"},
		{"duration": "soon"},
		{"to": "2026-04-01"}, // the past
		{"to": "2026-04-02"}, // today at 08:00 is now: not after
		{"to": "01/05/2026"}, // not ISO
		{"duration": "1h", "to": "2027-01-01"},
		{"durasion": "1h"}, // unknown property
		// Beyond the limits (100 years a move, never past 2199): an
		// offset of 292 years would overflow and move the clock back.
		{"duration": "9223372036854775807ns"},
		{"duration": "2562047h"},
		{"duration": "36501d"},
		{"duration": "36500d1h"},
		{"to": "9999-12-31"},
		{"to": "3000-01-01"},
		{"to": "2200-01-01"},
		{"to": "2200-01-01T00:00:00Z"},
	}
	for _, b := range bad {
		var eb control.ErrorBody
		if st := e.control("POST", "/sandbox/clock/advance", b, &eb); st != 400 || eb.Message == "" {
			t.Errorf("advance %v: %d %+v, want 400 with a message", b, st, eb)
		}
	}
	if !e.clk.Now().Equal(time.Date(2026, 4, 2, 11, 0, 0, 0, time.UTC)) {
		t.Fatalf("a refused advance moved the clock to %v", e.clk.Now())
	}
}

func TestAdvanceMakesSlipUnpaid(t *testing.T) {
	e := newEnv(t, "")
	rc := newReceiver(t)
	res := e.slip(rc.URL, "2026-03-03", 5000)
	e.runDue()
	before := len(rc.got())
	// Due 2026-03-03: still waiting on the due date itself...
	e.control("POST", "/sandbox/clock/advance", map[string]string{"to": "2026-03-03"}, nil)
	if ch, _ := e.c.GetCharge(ctx, res.ChargeID); ch.Status != "waiting" {
		t.Fatalf("on the due date: %s", ch.Status)
	}
	// ...unpaid the day after, and notified by the advance itself.
	e.control("POST", "/sandbox/clock/advance", map[string]string{"duration": "1d"}, nil)
	if len(rc.got()) != before+1 {
		t.Fatalf("the overdue change was not delivered by the advance (%d posts, %d before)", len(rc.got()), before)
	}
	c := last(e.changesOf(rc.got()[before]))
	if c.Status.Current != "unpaid" || prev(c) != "waiting" {
		t.Fatalf("change %+v", c)
	}
	if ch, _ := e.c.GetCharge(ctx, res.ChargeID); ch.Status != "unpaid" {
		t.Fatalf("after the due date: %s", ch.Status)
	}
	// An unpaid slip can still be paid (late), as the bank reports it.
	var pay control.PayResult
	if st := e.control("POST", "/sandbox/charges/"+itoa(res.ChargeID)+"/pay", map[string]any{"value": 5110}, &pay); st != 200 || pay.PaidAt != "2026-03-04" {
		t.Fatalf("late payment: %d %+v", st, pay)
	}
}

func TestPayRouteErrors(t *testing.T) {
	e := newEnv(t, "")
	res := e.slip("", "2026-03-10", 5000)
	id := itoa(res.ChargeID)
	other, err := e.auth.CreateAccount(ctx, "Outra Escola Ltda")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path   string
		body   any
		status int
		prop   string
	}{
		{"/sandbox/charges/999999999/pay", nil, 404, "id"},
		{"/sandbox/charges/abc/pay", nil, 400, "id"},
		{"/sandbox/charges/" + id + "/pay?payee_code=" + other.PayeeCode, nil, 404, "id"},
		{"/sandbox/charges/" + id + "/pay?payee_code=ffffffffffffffffffffffffffffffff", nil, 404, "payee_code"},
		{"/sandbox/charges/" + id + "/pay", map[string]any{"value": -5}, 400, "/value"},
		// More than a slip can carry (10 digits of cents in the barcode).
		{"/sandbox/charges/" + id + "/pay", map[string]any{"value": int64(10_000_000_000)}, 400, "/value"},
		{"/sandbox/charges/" + id + "/pay", map[string]any{"value": int64(9223372036854775807)}, 400, "/value"},
		{"/sandbox/charges/" + id + "/pay", map[string]any{"value": "10,00"}, 400, "/value"},
		{"/sandbox/charges/" + id + "/pay", map[string]any{"paid_at": "10/03/2026"}, 400, "/paid_at"},
		// Today is 2026-03-02 and the slip was created today: a bank cannot
		// report a payment tomorrow, nor one before the slip existed.
		{"/sandbox/charges/" + id + "/pay", map[string]any{"paid_at": "2026-03-03"}, 400, "/paid_at"},
		{"/sandbox/charges/" + id + "/pay", map[string]any{"paid_at": "2026-03-01"}, 400, "/paid_at"},
		{"/sandbox/charges/" + id + "/pay", map[string]any{"extra": 1}, 400, "/extra"},
		{"/sandbox/carnets/12345/parcels/1/pay", nil, 404, "id"},
		{"/sandbox/cards/999999999/refund", nil, 404, "id"},
	}
	for _, c := range cases {
		var eb control.ErrorBody
		st := e.control("POST", c.path, c.body, &eb)
		if st != c.status || eb.Property != c.prop || eb.Message == "" {
			t.Errorf("POST %s %v: %d %+v, want %d property %s", c.path, c.body, st, eb, c.status, c.prop)
		}
	}
	if ch, _ := e.c.GetCharge(ctx, res.ChargeID); ch.Status != "waiting" {
		t.Fatalf("a refused request changed the charge: %s", ch.Status)
	}
	// With the owner's payee_code it works.
	if st := e.control("POST", "/sandbox/charges/"+id+"/pay?payee_code="+e.creds.PayeeCode, nil, nil); st != 200 {
		t.Fatalf("pay with the owner's payee_code: %d", st)
	}
	// A slip is not a card: the refund is refused in the charges dialect.
	var refusal struct{ Code int }
	if st := e.control("POST", "/sandbox/cards/"+id+"/refund", nil, &refusal); st != 400 || refusal.Code == 0 {
		t.Fatalf("refund of a slip: %d %+v", st, refusal)
	}
}

func TestParcelRouteErrors(t *testing.T) {
	e := newEnv(t, "")
	cn, err := e.c.CreateCarnet(ctx, api.CarnetRequest{Items: []api.Item{{Name: "Curso", Value: 10000, Amount: 1}},
		Customer: customer(), ExpireAt: "2026-03-10", Repeats: 2})
	if err != nil {
		t.Fatal(err)
	}
	var eb control.ErrorBody
	if st := e.control("POST", "/sandbox/carnets/"+itoa(cn.CarnetID)+"/parcels/3/pay", nil, &eb); st != 404 || eb.Property != "n" {
		t.Fatalf("parcel 3 of 2: %d %+v", st, eb)
	}
	if st := e.control("POST", "/sandbox/carnets/"+itoa(cn.CarnetID)+"/parcels/0/pay", nil, &eb); st != 400 {
		t.Fatalf("parcel 0: %d", st)
	}
	if st := e.control("POST", "/sandbox/carnets/"+itoa(cn.CarnetID)+"/parcels/2/pay", map[string]any{"value": 9999}, nil); st != 200 {
		t.Fatalf("parcel 2: %d", st)
	}
	got, _ := e.c.GetCarnet(ctx, cn.CarnetID)
	if got.Charges[0].Status != "waiting" || got.Charges[1].Status != "paid" {
		t.Fatalf("statuses %s %s", got.Charges[0].Status, got.Charges[1].Status)
	}
}

func TestCardPayAndRefund(t *testing.T) {
	e := newEnv(t, "")
	tok, err := e.c.PaymentToken(ctx, e.creds.PayeeCode, api.CardData{Brand: "visa", Number: "4012001038443335", CVV: "123",
		ExpirationMonth: "05", ExpirationYear: "2030"})
	if err != nil {
		t.Fatal(err)
	}
	c := customer()
	c.Birth = "1980-01-15"
	res, err := e.c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: []api.Item{{Name: "Curso", Value: 20000, Amount: 1}},
		Payment: api.Payment{CreditCard: &api.CreditCard{Customer: c, Installments: 1, PaymentToken: tok.PaymentToken,
			BillingAddress: *customer().Address}}})
	if err != nil {
		t.Fatal(err)
	}
	id := itoa(res.ChargeID)
	if st := e.control("POST", "/sandbox/charges/"+id+"/pay", nil, nil); st != 200 {
		t.Fatalf("card approval: %d", st)
	}
	var r control.PayResult
	if st := e.control("POST", "/sandbox/cards/"+id+"/refund", map[string]any{"value": 5000}, &r); st != 200 || r.Value != 5000 {
		t.Fatalf("partial refund: %d %+v", st, r)
	}
	if st := e.control("POST", "/sandbox/cards/"+id+"/refund", nil, &r); st != 200 || r.Status != "refunded" || r.Value != 20000 {
		t.Fatalf("full refund: %d %+v (want status refunded, 20000 refunded in all)", st, r)
	}
	ch, err := e.c.GetCharge(ctx, res.ChargeID)
	if err != nil || ch.Status != "refunded" {
		t.Fatalf("charge after refund: %+v %v", ch, err)
	}
}

func TestRoutesWithoutChargesModule(t *testing.T) {
	e := newEnv(t, "")
	mux := http.NewServeMux()
	control.New(moduleDeps(e), nil).Register(mux)
	rec := doMux(mux, "POST", "/sandbox/charges/1/pay")
	if rec != http.StatusServiceUnavailable {
		t.Fatalf("pay without charges module: %d", rec)
	}
}

// TestClockStopsBefore2200: 100 years at a time, and no further than 2199
// (the clock's offset holds at most 292 years).
func TestClockStopsBefore2200(t *testing.T) {
	e := newEnv(t, "")
	var s control.ClockState
	if st := e.control("POST", "/sandbox/clock/advance", map[string]string{"duration": "36500d"}, &s); st != 200 {
		t.Fatalf("first 100 years: %d", st)
	}
	at := e.clk.Now()
	if at.Year() != 2126 {
		t.Fatalf("after 36500 days from 2026: %v", at)
	}
	var eb control.ErrorBody
	if st := e.control("POST", "/sandbox/clock/advance", map[string]string{"duration": "36500d"}, &eb); st != 400 || !strings.Contains(eb.Message, "2199") {
		t.Fatalf("past 2199: %d %+v", st, eb)
	}
	if !e.clk.Now().Equal(at) {
		t.Fatalf("the refused advance moved the clock to %v", e.clk.Now())
	}
}
