package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"remessa/api"
	"remessa/internal/sandboxclient"
	"remessa/sandbox"
	"remessa/sandbox/clock"
	"remessa/sandbox/control"
	"remessa/sandbox/sandboxtest"
)

func runCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := dispatch(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestSandboxClockCLI(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 3, 2, 13, 0, 0, 0, time.UTC))
	rn := sandboxtest.Start(t, sandbox.Config{Clock: clk})
	code, out, errs := runCLI("sandbox", "clock", "--url", rn.URL)
	if code != exitOK || !strings.Contains(out, "2026-03-02T10:00:00-03:00") {
		t.Fatalf("clock: %d %q %q", code, out, errs)
	}
	code, out, errs = runCLI("sandbox", "clock", "advance", "2d", "--url", rn.URL)
	if code != exitOK || !strings.Contains(out, "2026-03-04T10:00:00-03:00") || !strings.Contains(out, "avançou 48h0m0s") {
		t.Fatalf("advance: %d %q %q", code, out, errs)
	}
	code, out, _ = runCLI("sandbox", "clock", "--to", "01/04/2026", "--url", rn.URL, "--format", "json")
	if code != exitOK || !strings.Contains(out, `"today": "2026-04-01"`) {
		t.Fatalf("--to: %d %q", code, out)
	}
	if !clk.Now().Equal(time.Date(2026, 4, 1, 13, 0, 0, 0, time.UTC)) {
		t.Fatalf("fake clock at %v", clk.Now())
	}
	// Backwards is refused by the sandbox: exit 1 with its message.
	code, _, errs = runCLI("sandbox", "clock", "--to", "2026-03-01", "--url", rn.URL)
	if code != exitProblems || !strings.Contains(errs, "só anda para a frente") {
		t.Fatalf("backwards: %d %q", code, errs)
	}
	// Bad usage never reaches the sandbox.
	for _, args := range [][]string{
		{"sandbox", "clock", "advance", "soon", "--url", rn.URL},
		{"sandbox", "clock", "advance", "--url", rn.URL},
		{"sandbox", "clock", "--to", "ontem", "--url", rn.URL},
		{"sandbox", "pay", "slip", "abc", "--url", rn.URL},
		{"sandbox", "pay", "boleto", "1", "--url", rn.URL},
		{"sandbox", "pay", "slip", "1", "--value", "dez reais", "--url", rn.URL},
		{"sandbox", "pay", "parcel", "1", "--url", rn.URL},
		{"sandbox", "pay", "cob", "abc", "--date", "2026-03-01", "--url", rn.URL},
		{"sandbox", "refund", "slip", "1", "--url", rn.URL},
	} {
		if code, _, errs := runCLI(args...); code != exitUsage {
			t.Errorf("%v: exit %d (%q), want %d", args, code, errs, exitUsage)
		}
	}
	if !clk.Now().Equal(time.Date(2026, 4, 1, 13, 0, 0, 0, time.UTC)) {
		t.Fatalf("a refused command moved the clock to %v", clk.Now())
	}
}

func TestSandboxPayCLIErrors(t *testing.T) {
	rn := sandboxtest.Start(t, sandbox.Config{Clock: clock.NewFake(time.Date(2026, 3, 2, 13, 0, 0, 0, time.UTC))})
	// An unknown Pix charge: the Pix module answers 404, exit 1.
	code, _, errs := runCLI("sandbox", "pay", "cob", "txidquenaoexiste0000000000001", "--url", rn.URL)
	if code != exitProblems || !strings.Contains(errs, "404") {
		t.Fatalf("unknown cob: %d %q", code, errs)
	}
	code, _, errs = runCLI("sandbox", "pay", "slip", "999999", "--value", "R$ 10,00", "--url", rn.URL)
	if code != exitProblems {
		t.Fatalf("unknown slip: %d %q", code, errs)
	}
	// Nobody listening: exit 3.
	code, _, errs = runCLI("sandbox", "clock", "--url", "http://127.0.0.1:1")
	if code != exitInternal || !strings.Contains(errs, "inacessível") {
		t.Fatalf("unreachable: %d %q", code, errs)
	}
}

func TestSandboxOutboxCLI(t *testing.T) {
	rn := sandboxtest.Start(t, sandbox.Config{})
	hit := make(chan struct{}, 8)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		hit <- struct{}{}
	}))
	defer recv.Close()
	c := sandboxclient.Client(t, rn, nil)
	res, err := c.CreateOneStepCharge(context.Background(), api.OneStepRequest{
		Items:    []api.Item{{Name: "Taxa", Value: 1000, Amount: 1}},
		Metadata: &api.Metadata{NotificationURL: recv.URL + "/n"},
		Payment: api.Payment{BankingBillet: &api.BankingBillet{ExpireAt: time.Now().AddDate(0, 0, 5).Format("2006-01-02"),
			Customer: api.Customer{Name: "Maria Souza", CPF: "52998224725", PhoneNumber: "41999998888"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SettleCharge(context.Background(), res.ChargeID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hit:
	case <-time.After(15 * time.Second):
		t.Fatal("the running outbox did not post within 15 s")
	}
	// Runs are serialised: this returns after the loop recorded its attempt.
	resp, err := http.Post(rn.URL+"/sandbox/outbox/run", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	code, out, errs := runCLI("sandbox", "outbox", "--state", "pending", "--url", rn.URL)
	if code != exitOK || !strings.Contains(out, "Pendentes:") || !strings.Contains(out, recv.URL+"/n") ||
		!strings.Contains(out, "último HTTP 503") || !strings.Contains(out, "próxima") {
		t.Fatalf("outbox: %d %q %q", code, out, errs)
	}
	if code, _, _ := runCLI("sandbox", "outbox", "--state", "all", "--url", rn.URL); code != exitUsage {
		t.Fatalf("bad --state: exit %d", code)
	}
}

// TestSandboxPayCLI drives each payment control from the command line and
// reads the outcome back through api/: a slip paid with another value and
// date, a carnet parcel, a card approved and partly refunded, and a cob.
func TestSandboxPayCLI(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 3, 2, 13, 0, 0, 0, time.UTC))
	rn := sandboxtest.Start(t, sandbox.Config{Clock: clk})
	c := sandboxclient.Client(t, rn, func(cfg *api.Config) { cfg.Now = clk.Now })
	ctx := context.Background()
	cust := api.Customer{Name: "Maria Souza", CPF: "52998224725", PhoneNumber: "41999998888", Email: "maria@example.com",
		Birth: "1980-01-15"}

	slip, err := c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: []api.Item{{Name: "Taxa", Value: 15075, Amount: 1}},
		Payment: api.Payment{BankingBillet: &api.BankingBillet{ExpireAt: "2026-03-10", Customer: cust}}})
	if err != nil {
		t.Fatal(err)
	}
	id := strconv.FormatInt(slip.ChargeID, 10)
	// A payment dated after the sandbox's today is refused: move the clock first.
	if code, _, errs := runCLI("sandbox", "pay", "slip", id, "--date", "09/03/2026", "--url", rn.URL); code != exitProblems || !strings.Contains(errs, "paid_at") {
		t.Fatalf("payment dated in the future: %d %q", code, errs)
	}
	if code, _, errs := runCLI("sandbox", "clock", "--to", "2026-03-10", "--url", rn.URL); code != exitOK {
		t.Fatalf("clock --to: %d %q", code, errs)
	}
	code, out, errs := runCLI("sandbox", "pay", "slip", id, "--value", "R$ 149,00", "--date", "09/03/2026", "--url", rn.URL)
	if want := "cobrança " + id + " paga: R$ 149,00 em 2026-03-09"; code != exitOK || !strings.Contains(out, want) {
		t.Fatalf("pay slip: %d %q %q, want %q", code, out, errs, want)
	}
	if ch, err := c.GetCharge(ctx, slip.ChargeID); err != nil || ch.Status != "paid" {
		t.Fatalf("slip after pay: %+v %v", ch, err)
	}
	// Paid twice: the charges API refuses it, exit 1 with its message.
	if code, _, errs := runCLI("sandbox", "pay", "slip", id, "--url", rn.URL); code != exitProblems || !strings.Contains(errs, "3500044") && !strings.Contains(errs, "paid") {
		t.Fatalf("second payment: %d %q", code, errs)
	}

	cn, err := c.CreateCarnet(ctx, api.CarnetRequest{Items: []api.Item{{Name: "Curso", Value: 10000, Amount: 1}},
		Customer: cust, ExpireAt: "2026-03-10", Repeats: 3})
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI("sandbox", "pay", "parcel", strconv.FormatInt(cn.CarnetID, 10), "2", "--format", "json", "--url", rn.URL)
	var pr control.PayResult
	if code != exitOK || json.Unmarshal([]byte(out), &pr) != nil || pr.CarnetID != cn.CarnetID || pr.Parcel != 2 ||
		pr.ChargeID != cn.Charges[1].ChargeID || pr.Value != 10000 || pr.PaidAt != "2026-03-10" {
		t.Fatalf("pay parcel: %d %q %q", code, out, errs)
	}
	got, err := c.GetCarnet(ctx, cn.CarnetID)
	if err != nil || got.Charges[0].Status != "waiting" || got.Charges[1].Status != "paid" || got.Charges[2].Status != "waiting" {
		t.Fatalf("carnet after paying parcel 2: %+v %v", got, err)
	}

	tok, err := c.PaymentToken(ctx, rn.PayeeCode, api.CardData{Brand: "visa", Number: "4012001038443335", CVV: "123",
		ExpirationMonth: "05", ExpirationYear: "2030"})
	if err != nil {
		t.Fatal(err)
	}
	addr := api.Address{Street: "Rua XV de Novembro", Number: "100", Neighborhood: "Centro", Zipcode: "80020310", City: "Curitiba", State: "PR"}
	card, err := c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: []api.Item{{Name: "Curso", Value: 20000, Amount: 1}},
		Payment: api.Payment{CreditCard: &api.CreditCard{Customer: cust, Installments: 1, PaymentToken: tok.PaymentToken, BillingAddress: addr}}})
	if err != nil {
		t.Fatal(err)
	}
	cid := strconv.FormatInt(card.ChargeID, 10)
	if code, out, errs := runCLI("sandbox", "pay", "card", cid, "--url", rn.URL); code != exitOK || !strings.Contains(out, "R$ 200,00") {
		t.Fatalf("pay card: %d %q %q", code, out, errs)
	}
	code, out, errs = runCLI("sandbox", "refund", "card", cid, "--value", "50,00", "--url", rn.URL)
	if code != exitOK || !strings.Contains(out, "estorno de R$ 50,00") {
		t.Fatalf("refund card: %d %q %q", code, out, errs)
	}
	if code, out, errs := runCLI("sandbox", "refund", "card", cid, "--url", rn.URL); code != exitOK || !strings.Contains(out, "status refunded") {
		t.Fatalf("refund the rest: %d %q %q", code, out, errs)
	}
	if ch, err := c.GetCharge(ctx, card.ChargeID); err != nil || ch.Status != "refunded" {
		t.Fatalf("card after refunds: %+v %v", ch, err)
	}

	cob, err := c.CreateCob(ctx, api.CobRequest{Valor: api.PixValor{Original: "10.00"}, Chave: rn.PixKey})
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI("sandbox", "pay", "cob", cob.Txid, "--url", rn.URL)
	if code != exitOK || !strings.Contains(out, "txid "+cob.Txid) || !strings.Contains(out, "valor 10.00") {
		t.Fatalf("pay cob: %d %q %q", code, out, errs)
	}
	if got, err := c.GetCob(ctx, cob.Txid); err != nil || got.Status != "CONCLUIDA" || len(got.Pix) != 1 {
		t.Fatalf("cob after pay: %+v %v", got, err)
	}
}
