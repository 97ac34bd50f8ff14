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
