package outbox_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"remessa/api"
	"remessa/internal/sandboxclient"
	"remessa/sandbox"
	"remessa/sandbox/control"
	"remessa/sandbox/outbox"
	"remessa/sandbox/sandboxtest"
)

// notifyEnv is a running sandbox, its API and control clients, receiver A
// (answers 500) and receiver B (answers 200).
type notifyEnv struct {
	rn   *sandbox.Running
	c    *api.Client
	ctl  *control.Client
	a, b string
	aGot chan post
	bGot chan post
	cfg  sandbox.Config
}

func newNotifyEnv(t *testing.T, cfg sandbox.Config) *notifyEnv {
	e := &notifyEnv{cfg: cfg}
	srvA, aGot := hookStatus(t, http.StatusInternalServerError)
	srvB, bGot := hook(t)
	e.a, e.b, e.aGot, e.bGot = srvA.URL+"/a", srvB.URL+"/b", aGot, bGot
	e.start(t)
	return e
}

func (e *notifyEnv) start(t *testing.T) {
	e.rn = sandboxtest.Start(t, e.cfg)
	e.c = sandboxclient.Client(t, e.rn, nil)
	e.ctl = &control.Client{BaseURL: e.rn.URL}
}

// advance moves the sandbox clock and runs the outbox; it returns after
// any background run in progress has recorded its attempts.
func (e *notifyEnv) advance(t *testing.T, d string) {
	t.Helper()
	if _, err := e.ctl.Advance(context.Background(), control.AdvanceRequest{Duration: d}); err != nil {
		t.Fatal(err)
	}
}

// failedAtA waits for the first (failing) post to A of a new owner and
// returns its notification token.
func (e *notifyEnv) failedAtA(t *testing.T) string {
	t.Helper()
	p := wait(t, e.aGot, "first notification at A")
	form, err := url.ParseQuery(p.body)
	if err != nil || form.Get("notification") == "" {
		t.Fatalf("notification body %q", p.body)
	}
	e.advance(t, "1s") // the failed attempt is recorded
	return form.Get("notification")
}

// pendingOf returns the pending deliveries of token.
func (e *notifyEnv) pendingOf(t *testing.T, token string) []outbox.DeliveryView {
	t.Helper()
	l, err := e.ctl.Outbox(context.Background(), "pending")
	if err != nil {
		t.Fatal(err)
	}
	var out []outbox.DeliveryView
	for _, d := range l.Pending {
		if d.Body == "notification="+token {
			out = append(out, d)
		}
	}
	return out
}

func (e *notifyEnv) noPost(t *testing.T, ch chan post, who string) {
	t.Helper()
	select {
	case p := <-ch:
		t.Fatalf("%s got %q", who, p.body)
	default:
	}
}

func (e *notifyEnv) charge(t *testing.T) int64 {
	t.Helper()
	res, err := e.c.CreateCharge(context.Background(), api.ChargeRequest{Items: []api.Item{{Name: "Mensalidade", Value: 12345, Amount: 1}},
		Metadata: &api.Metadata{NotificationURL: e.a}})
	if err != nil {
		t.Fatal(err)
	}
	return res.ChargeID
}

func setURL(s string) api.MetadataUpdate { return api.MetadataUpdate{NotificationURL: &s} }

// TestChangedNotificationURLTakesPendingNotifications: receiver A fails
// the charge's notification; PUT /v1/charge/:id/metadata points it at B.
// The pending notification goes to B at its scheduled retry (5 minutes
// after the failure), once; A gets nothing after the change.
func TestChangedNotificationURLTakesPendingNotifications(t *testing.T) {
	e := newNotifyEnv(t, sandbox.Config{})
	ctx := context.Background()
	id := e.charge(t)
	token := e.failedAtA(t)
	if p := e.pendingOf(t, token); len(p) != 1 || p[0].URL != e.a || p[0].Attempts != 1 {
		t.Fatalf("before the change: %+v, want one delivery at A with one failed attempt", p)
	}
	if err := e.c.UpdateChargeMetadata(ctx, id, setURL(e.b)); err != nil {
		t.Fatal(err)
	}
	if p := e.pendingOf(t, token); len(p) != 1 || p[0].URL != e.b || p[0].Attempts != 1 {
		t.Fatalf("after the change: %+v, want the delivery at B, its attempt kept", p)
	}
	e.advance(t, "3m")
	e.noPost(t, e.bGot, "B, before the retry is due,")
	e.advance(t, "3m")
	p := wait(t, e.bGot, "retargeted notification at B")
	if p.body != "notification="+token || p.path != "/b" {
		t.Fatalf("B got %s %q, want notification=%s", p.path, p.body, token)
	}
	changes, err := e.c.GetNotification(ctx, token)
	if err != nil || len(changes) == 0 || changes[0].Identifiers.ChargeID != id {
		t.Fatalf("token %s reads %+v %v, want the changes of charge %d", token, changes, err, id)
	}
	e.advance(t, "1d")
	e.noPost(t, e.bGot, "B, a second time,")
	e.noPost(t, e.aGot, "A, after the change,")
	if p := e.pendingOf(t, token); len(p) != 0 {
		t.Fatalf("still pending: %+v", p)
	}
}

// TestRemovedCarnetNotificationURLCancelsPending: PUT
// /v1/carnet/:id/metadata with an empty notification_url gives the
// carnet's pending notifications up (canceled, as the real service posts
// only to the URL the carnet has); setting a URL again does not bring
// them back. The token still reads the changes.
func TestRemovedCarnetNotificationURLCancelsPending(t *testing.T) {
	e := newNotifyEnv(t, sandbox.Config{})
	ctx := context.Background()
	st, err := e.ctl.Clock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := time.Parse("2006-01-02", st.Today)
	cn, err := e.c.CreateCarnet(ctx, api.CarnetRequest{Items: []api.Item{{Name: "Curso", Value: 30000, Amount: 1}},
		Customer: api.Customer{Name: "Maria das Graças Souza", CPF: "52998224725", PhoneNumber: "41999998888"},
		ExpireAt: first.AddDate(0, 0, 20).Format("2006-01-02"), Repeats: 3, Metadata: &api.Metadata{NotificationURL: e.a}})
	if err != nil {
		t.Fatal(err)
	}
	token := e.failedAtA(t)
	if err := e.c.UpdateCarnetMetadata(ctx, cn.CarnetID, setURL("")); err != nil {
		t.Fatal(err)
	}
	if p := e.pendingOf(t, token); len(p) != 0 {
		t.Fatalf("pending after removing the URL: %+v", p)
	}
	l, err := e.ctl.Outbox(ctx, "done")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Done) != 1 || l.Done[0].State != outbox.StateCanceled || l.Done[0].URL != e.a || l.Done[0].Attempts != 1 {
		t.Fatalf("done: %+v, want the delivery canceled at A after one attempt", l.Done)
	}
	if err := e.c.UpdateCarnetMetadata(ctx, cn.CarnetID, setURL(e.b)); err != nil {
		t.Fatal(err)
	}
	e.advance(t, "1h")
	e.noPost(t, e.aGot, "A, after the removal,")
	e.noPost(t, e.bGot, "B (the canceled notification)")
	if changes, err := e.c.GetNotification(ctx, token); err != nil || len(changes) == 0 || changes[0].Identifiers.CarnetID != cn.CarnetID {
		t.Fatalf("token reads %+v %v", changes, err)
	}
}

// TestRetargetSurvivesRestart: charge X is pointed at B before a
// restart, charge Y (whose failed delivery was queued before the restart)
// after it. Both pending notifications reach B at their retry, once; A
// gets nothing after the restart.
func TestRetargetSurvivesRestart(t *testing.T) {
	e := newNotifyEnv(t, sandbox.Config{DataDir: t.TempDir(), ClientID: "Client_Id_retarget", ClientSecret: "Client_Secret_retarget"})
	ctx := context.Background()
	x := e.charge(t)
	tokX := e.failedAtA(t)
	y := e.charge(t)
	tokY := e.failedAtA(t)
	if err := e.c.UpdateChargeMetadata(ctx, x, setURL(e.b)); err != nil {
		t.Fatal(err)
	}
	if err := e.rn.Close(); err != nil {
		t.Fatal(err)
	}
	e.start(t)
	if p := e.pendingOf(t, tokX); len(p) != 1 || p[0].URL != e.b {
		t.Fatalf("X after the restart: %+v, want at B", p)
	}
	if err := e.c.UpdateChargeMetadata(ctx, y, setURL(e.b)); err != nil {
		t.Fatal(err)
	}
	if p := e.pendingOf(t, tokY); len(p) != 1 || p[0].URL != e.b || p[0].Attempts != 1 {
		t.Fatalf("Y, queued before the restart: %+v, want at B with its attempt", p)
	}
	e.advance(t, "6m")
	got := map[string]int{}
	for range 2 {
		got[wait(t, e.bGot, "notification at B").body]++
	}
	if got["notification="+tokX] != 1 || got["notification="+tokY] != 1 {
		t.Fatalf("B got %v, want X's and Y's notification once each", got)
	}
	e.advance(t, "1d")
	e.noPost(t, e.bGot, "B, again,")
	e.noPost(t, e.aGot, "A, after the restart,")
}
