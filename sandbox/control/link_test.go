package control_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"remessa/api"
	"remessa/sandbox/control"
)

func TestPaymentLinkPageAndExpiry(t *testing.T) {
	e := newEnv(t, "")
	rc := newReceiver(t)
	disc := int64(500)
	l, err := e.c.CreateOneStepLink(ctx, api.OneStepLinkRequest{
		Items:    []api.Item{{Name: "Camiseta <azul>", Value: 4990, Amount: 2}},
		Metadata: &api.Metadata{NotificationURL: rc.URL},
		Settings: api.LinkSettings{PaymentMethod: "all", ExpireAt: "2026-03-05", BilletDiscount: &disc, Message: "Obrigado!"},
	})
	if err != nil {
		t.Fatal(err)
	}
	page := func() (int, string) {
		resp, err := http.Get(l.PaymentURL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	st, body := page()
	for _, want := range []string{"R$ 99,80", "Camiseta &lt;azul&gt;", "boleto ou cartão de crédito", "R$ 5,00", "05/03/2026", "Obrigado!"} {
		if st != 200 || !strings.Contains(body, want) {
			t.Errorf("payment page (%d) lacks %q", st, want)
		}
	}
	e.runDue()
	before := len(rc.got())
	// The link expires after its expire_at: advancing the clock notifies it.
	var s control.ClockState
	e.control("POST", "/sandbox/clock/advance", map[string]string{"to": "2026-03-07"}, &s)
	ch, err := e.c.GetCharge(ctx, l.ChargeID)
	if err != nil || ch.Status != "expired" {
		t.Fatalf("link charge after expire_at: %+v %v", ch, err)
	}
	if len(rc.got()) != before+1 {
		t.Fatalf("expiry delivered %d notifications, want 1", len(rc.got())-before)
	}
	if c := last(e.changesOf(rc.got()[before])); c.Status.Current != "expired" || prev(c) != "link" {
		t.Fatalf("expiry change %+v", c)
	}
	if st, body := page(); st != 200 || !strings.Contains(body, "expirada") {
		t.Fatalf("page after expiry: %d, shows expirada: %v", st, strings.Contains(body, "expirada"))
	}
}

func TestWriteOffDaysRunOut(t *testing.T) {
	e := newEnv(t, "")
	two := int64(2)
	res, err := e.c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: []api.Item{{Name: "Taxa", Value: 8000, Amount: 1}},
		Payment: api.Payment{BankingBillet: &api.BankingBillet{Customer: customer(), ExpireAt: "2026-03-10",
			Configurations: &api.Configurations{Fine: 200, Interest: 33, DaysToWriteOff: &two}}}})
	if err != nil {
		t.Fatal(err)
	}
	e.control("POST", "/sandbox/clock/advance", map[string]string{"to": "2026-03-13"}, nil)
	// Due 03-10 + 2 days = payable until 03-12; on 03-13 the bank refuses it.
	var refusal struct {
		Code  int    `json:"code"`
		Error string `json:"error"`
	}
	if st := e.control("POST", "/sandbox/charges/"+itoa(res.ChargeID)+"/pay", nil, &refusal); st != 400 || refusal.Code == 0 {
		t.Fatalf("payment after the write-off: %d %+v", st, refusal)
	}
	// Reported as paid on the last payable day, it is accepted.
	if st := e.control("POST", "/sandbox/charges/"+itoa(res.ChargeID)+"/pay", map[string]any{"paid_at": "2026-03-12", "value": 8183}, nil); st != 200 {
		t.Fatalf("payment dated the last payable day: %d", st)
	}
}
