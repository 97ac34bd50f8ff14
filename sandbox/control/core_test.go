package control_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"remessa/api"
	"remessa/internal/sandboxclient"
	"remessa/sandbox"
	_ "remessa/sandbox/all"
	"remessa/sandbox/clock"
	"remessa/sandbox/control"
	"remessa/sandbox/sandboxtest"
)

// TestThroughTheCore runs the whole sandbox as "remessa sandbox" builds it
// (every module, the outbox loop, Deps.Lookup) with a fake clock, and
// drives it only over HTTP: the api client, the control client and the
// document links.
func TestThroughTheCore(t *testing.T) {
	clk := clock.NewFake(t0)
	rn := sandboxtest.Start(t, sandbox.Config{Clock: clk})
	c := sandboxclient.Client(t, rn, func(cfg *api.Config) { cfg.Now = clk.Now })
	ctl := &control.Client{BaseURL: rn.URL}
	rc := newReceiver(t)

	cn, err := c.CreateCarnet(ctx, api.CarnetRequest{Items: []api.Item{{Name: "Mensalidade", Value: 20000, Amount: 1}},
		Customer: customer(), ExpireAt: "2026-03-10", Repeats: 2, Metadata: &api.Metadata{NotificationURL: rc.URL}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(cn.PDF.Carnet)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(string(b), "%PDF-") {
		t.Fatalf("carnet PDF through the core: %d %.20q", resp.StatusCode, b)
	}
	if _, err := ctl.PayParcel(ctx, cn.CarnetID, 1, control.PayRequest{}, rn.PayeeCode); err != nil {
		t.Fatal(err)
	}
	s, err := ctl.Advance(ctx, control.AdvanceRequest{To: "2026-04-11"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Today != "2026-04-11" {
		t.Fatalf("clock %+v", s)
	}
	got, err := c.GetCarnet(ctx, cn.CarnetID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Charges[0].Status != "paid" || got.Charges[1].Status != "unpaid" {
		t.Fatalf("statuses %s %s, want paid unpaid", got.Charges[0].Status, got.Charges[1].Status)
	}
	// The advance ran the outbox: everything queued so far was delivered
	// (by it or by the background loop before it).
	l, err := ctl.Outbox(ctx, "pending")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Pending) != 0 || len(rc.got()) == 0 {
		t.Fatalf("pending %+v, receiver got %d", l.Pending, len(rc.got()))
	}
	changes, err := c.GetNotification(ctx, rc.got()[0])
	if err != nil {
		t.Fatal(err)
	}
	var sawPaid, sawUnpaid bool
	for _, ch := range changes {
		sawPaid = sawPaid || ch.Identifiers.ChargeID == cn.Charges[0].ChargeID && ch.Status.Current == "paid"
		sawUnpaid = sawUnpaid || ch.Identifiers.ChargeID == cn.Charges[1].ChargeID && ch.Status.Current == "unpaid"
	}
	if !sawPaid || !sawUnpaid {
		t.Fatalf("changes %+v: want parcel 1 paid and parcel 2 unpaid", changes)
	}
	// Refusals come back as *control.Error with the charges code.
	_, err = ctl.PayCharge(ctx, cn.Charges[0].ChargeID, control.PayRequest{}, "")
	var ce *control.Error
	if !asControlError(err, &ce) || ce.Status != 400 || ce.Code != 3500044 {
		t.Fatalf("paying a paid parcel: %v", err)
	}
}
