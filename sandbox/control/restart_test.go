package control_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"remessa/api"
	"remessa/internal/sandboxclient"
	"remessa/sandbox"
	"remessa/sandbox/control"
	"remessa/sandbox/sandboxtest"
)

// TestAdvancedClockSurvivesRestart runs the sandbox as "remessa sandbox"
// does (adjustable clock, data on disk), moves its clock 5 days so a slip
// goes unpaid while the receiver fails, and restarts it: the clock is
// still 5 days ahead (not back at the real time), so the retry the outbox
// scheduled 5 minutes after the failure comes due with the next 5 minutes
// of sandbox time instead of 5 real days later.
func TestAdvancedClockSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	var up atomic.Bool
	var posts atomic.Int32
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		if !up.Load() {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer recv.Close()

	rn := sandboxtest.Start(t, sandbox.Config{DataDir: dir})
	ctl := &control.Client{BaseURL: rn.URL}
	c := sandboxclient.Client(t, rn, nil)
	before, err := ctl.Clock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	due, _ := time.Parse("2006-01-02", before.Today)
	res, err := c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: []api.Item{{Name: "Taxa", Value: 5000, Amount: 1}},
		Metadata: &api.Metadata{NotificationURL: recv.URL},
		Payment:  api.Payment{BankingBillet: &api.BankingBillet{Customer: customer(), ExpireAt: due.AddDate(0, 0, 2).Format("2006-01-02")}}})
	if err != nil {
		t.Fatal(err)
	}
	moved, err := ctl.Advance(ctx, control.AdvanceRequest{Duration: "5d"})
	if err != nil {
		t.Fatal(err)
	}
	if want := due.AddDate(0, 0, 5).Format("2006-01-02"); moved.Today != want {
		t.Fatalf("today after 5d = %s, want %s", moved.Today, want)
	}
	if ch, err := c.GetCharge(ctx, res.ChargeID); err != nil || ch.Status != "unpaid" {
		t.Fatalf("slip after 5 days: %+v %v", ch, err)
	}
	if posts.Load() == 0 {
		t.Fatal("the receiver got no post before the restart")
	}
	if err := rn.Close(); err != nil {
		t.Fatal(err)
	}

	up.Store(true)
	n := posts.Load()
	rn = sandboxtest.Start(t, sandbox.Config{DataDir: dir})
	ctl = &control.Client{BaseURL: rn.URL}
	after, err := ctl.Clock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.Today != moved.Today {
		t.Fatalf("after the restart today is %s (offset %s), want %s: the clock went back", after.Today, after.Offset, moved.Today)
	}
	s, err := ctl.Advance(ctx, control.AdvanceRequest{Duration: "6m"})
	if err != nil {
		t.Fatal(err)
	}
	// The advance's delivery run waits for a background one in progress,
	// so the retry has been posted when it returns, by one or the other.
	if posts.Load() <= n {
		t.Fatalf("6 minutes after the restart (now %s): receiver posts %d then %d; want the retry posted", s.Now, n, posts.Load())
	}
}
