package control_test

import (
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"remessa/api"
	"remessa/sandbox/control"
)

// changesOf reads GET /v1/notification/{token} through the api client.
func (e *env) changesOf(token string) []api.NotificationChange {
	e.t.Helper()
	ch, err := e.c.GetNotification(ctx, token)
	if err != nil {
		e.t.Fatalf("GetNotification(%s): %v", token, err)
	}
	for i, c := range ch {
		if c.ID != i+1 {
			e.t.Fatalf("change %d has id %d; ids must be 1, 2, 3... in event order", i, c.ID)
		}
	}
	return ch
}

func last(ch []api.NotificationChange) api.NotificationChange { return ch[len(ch)-1] }

func prev(c api.NotificationChange) string {
	if c.Status.Previous == nil {
		return ""
	}
	return *c.Status.Previous
}

func TestSlipPaymentIsNotified(t *testing.T) {
	e := newEnv(t, "")
	rc := newReceiver(t)
	res := e.slip(rc.URL+"/hook", "2026-03-10", 15075)
	e.runDue()
	// The bank reports on the due date a payment it received the day before.
	e.control("POST", "/sandbox/clock/advance", map[string]string{"to": "2026-03-10"}, nil)
	var pay control.PayResult
	if st := e.control("POST", "/sandbox/charges/"+itoa(res.ChargeID)+"/pay", map[string]any{"paid_at": "2026-03-09"}, &pay); st != 200 {
		t.Fatalf("pay answered %d", st)
	}
	if pay.Value != 15075 || pay.PaidAt != "2026-03-09" || pay.Status != "paid" {
		t.Fatalf("pay result %+v (default value is the charge total)", pay)
	}
	if n := e.runDue(); n < 1 {
		t.Fatalf("payment delivered %d notifications", n)
	}
	got := rc.got()
	if len(got) == 0 {
		t.Fatal("no notification reached the receiver")
	}
	tok := got[len(got)-1]
	for _, g := range got {
		if g != tok || g == "" {
			t.Fatalf("tokens %v: one stable non-empty token per charge", got)
		}
	}
	if rc.ctypes[0] != "application/x-www-form-urlencoded" {
		t.Errorf("content type %q", rc.ctypes[0])
	}
	c := last(e.changesOf(tok))
	if c.Type != "charge" || c.Status.Current != "paid" || prev(c) != "waiting" || c.Identifiers.ChargeID != res.ChargeID ||
		c.Value == nil || *c.Value != 15075 || c.ReceivedByBankAt != "2026-03-09" {
		t.Fatalf("last change %+v", c)
	}
	// custom_id as set in the metadata; created_at on the sandbox clock in
	// São Paulo time (t0 is 10:00 there, 8 days later), "YYYY-MM-DD HH:MM:SS".
	if c.CustomID == nil || *c.CustomID != "slip-1" || c.CreatedAt != "2026-03-10 10:00:00" {
		t.Fatalf("last change custom_id %v created_at %q, want slip-1 and 2026-03-10 10:00:00", c.CustomID, c.CreatedAt)
	}
	ch, err := e.c.GetCharge(ctx, res.ChargeID)
	if err != nil || ch.Status != "paid" {
		t.Fatalf("charge after payment: %+v %v", ch, err)
	}
	// Paying again is refused in the charges API's dialect.
	var refusal struct {
		Code  int    `json:"code"`
		Error string `json:"error"`
	}
	if st := e.control("POST", "/sandbox/charges/"+itoa(res.ChargeID)+"/pay", nil, &refusal); st != 400 || refusal.Code != 3500044 {
		t.Fatalf("second payment answered %d %+v, want 400 code 3500044", st, refusal)
	}
}

func TestRetryAfterFailingReceiver(t *testing.T) {
	e := newEnv(t, "")
	rc := newReceiver(t, 500, 500) // then 200
	res := e.slip(rc.URL, "2026-03-10", 5000)
	start := len(rc.got())
	e.runDue() // creation notice, if any, takes the first 500s
	e.control("POST", "/sandbox/charges/"+itoa(res.ChargeID)+"/pay", map[string]any{"value": 4900}, nil)
	// Move the clock with the control route: each advance delivers what is due.
	for i := 0; i < 12 && len(rc.script) > 0; i++ {
		e.runDue()
		var s control.ClockState
		e.control("POST", "/sandbox/clock/advance", map[string]string{"duration": "5m"}, &s)
	}
	var s control.ClockState
	e.control("POST", "/sandbox/clock/advance", map[string]string{"duration": "1d"}, &s)
	got := rc.got()[start:]
	if len(got) < 3 {
		t.Fatalf("receiver got %d posts, want at least 3 (500, 500, then 200)", len(got))
	}
	pending, _ := e.ob.Pending(ctx)
	if len(pending) != 0 {
		t.Fatalf("still pending after the receiver recovered: %+v", pending)
	}
	n := len(rc.got())
	e.control("POST", "/sandbox/clock/advance", map[string]string{"duration": "30d"}, nil)
	if len(rc.got()) != n {
		t.Fatal("a delivered notification was sent again")
	}
	c := last(e.changesOf(got[0]))
	if c.Status.Current != "paid" || c.Value == nil || *c.Value != 4900 {
		t.Fatalf("last change %+v, want paid with the reported value 4900", c)
	}
}

func TestNoLossAcrossRestart(t *testing.T) {
	e := newEnv(t, t.TempDir()+"/sandbox.db")
	res := e.slip("", "2026-03-10", 7000)
	rc := newReceiver(t, 500) // the first delivery fails, before the "crash"
	u := rc.URL
	if err := e.c.UpdateChargeMetadata(ctx, res.ChargeID, api.MetadataUpdate{NotificationURL: &u}); err != nil {
		t.Fatal(err)
	}
	e.control("POST", "/sandbox/charges/"+itoa(res.ChargeID)+"/pay", nil, nil)
	e.runDue()
	if len(rc.got()) != 1 {
		t.Fatalf("receiver got %d posts before the restart, want 1 (answered 500)", len(rc.got()))
	}
	pending, _ := e.ob.Pending(ctx)
	if len(pending) != 1 || pending[0].LastStatus != 500 {
		t.Fatalf("pending before restart: %+v", pending)
	}
	e.restart()
	// Not due yet after the restart; due 5 minutes after the failure.
	if e.runDue(); len(rc.got()) != 1 {
		t.Fatal("retried before its time after the restart")
	}
	var s control.ClockState
	e.control("POST", "/sandbox/clock/advance", map[string]string{"duration": "5m"}, &s)
	if s.Delivered == nil || *s.Delivered != 1 || len(rc.got()) != 2 {
		t.Fatalf("advance delivered %v, receiver has %d posts; want the retry delivered once", s.Delivered, len(rc.got()))
	}
	e.restart()
	e.control("POST", "/sandbox/clock/advance", map[string]string{"duration": "30d"}, nil)
	if len(rc.got()) != 2 {
		t.Fatalf("sent again after a 2xx and a restart (%d posts)", len(rc.got()))
	}
	if c := last(e.changesOf(rc.got()[1])); c.Status.Current != "paid" {
		t.Fatalf("notification after restart shows %+v", c)
	}
}

func TestPendingDeliveredOnceAfterRestart(t *testing.T) {
	e := newEnv(t, t.TempDir()+"/sandbox.db")
	rc := newReceiver(t)
	res := e.slip(rc.URL, "2026-03-10", 7000)
	e.control("POST", "/sandbox/charges/"+itoa(res.ChargeID)+"/pay", nil, nil)
	pending, _ := e.ob.Pending(ctx)
	if len(pending) == 0 {
		t.Fatal("the payment queued no notification")
	}
	e.restart() // before any delivery
	if n := e.runDue(); n != len(pending) {
		t.Fatalf("delivered %d after restart, want the %d pending", n, len(pending))
	}
	got := len(rc.got())
	e.restart()
	e.clk.Advance(30 * 24 * time.Hour)
	e.runDue()
	if len(rc.got()) != got {
		t.Fatalf("deliveries repeated after a second restart: %d then %d", got, len(rc.got()))
	}
	c := last(e.changesOf(rc.got()[0]))
	if c.Status.Current != "paid" {
		t.Fatalf("after restart the notification shows %+v", c)
	}
}

func TestMetadataChangeRedirects(t *testing.T) {
	e := newEnv(t, "")
	a, b := newReceiver(t), newReceiver(t)
	res := e.slip(a.URL, "2026-03-10", 9000)
	e.runDue()
	before := len(a.got())
	nb := b.URL + "/novo"
	if err := e.c.UpdateChargeMetadata(ctx, res.ChargeID, api.MetadataUpdate{NotificationURL: &nb}); err != nil {
		t.Fatal(err)
	}
	e.control("POST", "/sandbox/charges/"+itoa(res.ChargeID)+"/pay", nil, nil)
	e.runDue()
	if len(a.got()) != before {
		t.Fatalf("old URL got %d more posts after the change", len(a.got())-before)
	}
	if len(b.got()) != 1 {
		t.Fatalf("new URL got %d posts, want 1", len(b.got()))
	}
	if c := last(e.changesOf(b.got()[0])); c.Status.Current != "paid" {
		t.Fatalf("change at the new URL: %+v", c)
	}
}

func TestDocumentLinksServeThePrintedSlip(t *testing.T) {
	e := newEnv(t, "")
	res := e.slip("", "2026-03-10", 15075)
	if res.PDF == nil || res.PDF.Charge == "" || res.BilletLink == "" || res.Link == "" {
		t.Fatalf("slip links %+v", res)
	}
	get := func(u string) (string, string) {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", u, resp.StatusCode, b)
		}
		return resp.Header.Get("Content-Type"), string(b)
	}
	ct, body := get(res.PDF.Charge)
	if dir := os.Getenv("REMESSA_SAMPLE_DIR"); dir != "" {
		os.WriteFile(dir+"/sandbox-slip.pdf", []byte(body), 0o644)
	}
	if ct != "application/pdf" || !strings.HasPrefix(body, "%PDF-") {
		t.Fatalf("pdf link answered %s %.20q", ct, body)
	}
	ct, body = get(res.BilletLink)
	if !strings.HasPrefix(ct, "text/html") || !strings.Contains(body, res.Barcode) || !strings.Contains(body, "R$ 150,75") {
		t.Fatalf("billet link: %s, typed line %q present: %v", ct, res.Barcode, strings.Contains(body, res.Barcode))
	}
	ct, body = get(res.Link)
	if !strings.HasPrefix(ct, "text/html") || !strings.Contains(body, res.Barcode) {
		t.Fatalf("link: %s", ct)
	}
	resp, err := http.Get(e.srv.URL + "/v1/documents/charge/00000000000000000000000000000000/pdf")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("unknown token answered %d", resp.StatusCode)
	}
}
