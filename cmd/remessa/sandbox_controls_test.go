package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"remessa/api"
	"remessa/sandbox"
	"remessa/sandbox/clock"
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
	c := sandboxtest.Client(t, rn, nil)
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
