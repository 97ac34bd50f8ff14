package outbox

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"remessa/sandbox/clock"
	"remessa/sandbox/module"
	"remessa/sandbox/store"
)

var _ module.Retargeter = (*Outbox)(nil)

const form = "application/x-www-form-urlencoded"

func enqueueFor(t *testing.T, st *store.Store, o *Outbox, key, url, body string) {
	t.Helper()
	if err := st.Tx(context.Background(), func(tx *store.Tx) error {
		return o.EnqueueFor(context.Background(), tx, key, url, []byte(body), form)
	}); err != nil {
		t.Fatal(err)
	}
}

func retarget(t *testing.T, st *store.Store, o *Outbox, key, url string) int {
	t.Helper()
	var n int
	if err := st.Tx(context.Background(), func(tx *store.Tx) (err error) {
		n, err = o.Retarget(context.Background(), tx, key, url)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

func bodies(hs []hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Body
	}
	return out
}

// TestRetargetMovesOnlyTheKeysPendingDeliveries: after a failed attempt at
// A, the key's pending deliveries go to B at their scheduled retry (not
// before), once; other keys and keyless deliveries stay at A.
func TestRetargetMovesOnlyTheKeysPendingDeliveries(t *testing.T) {
	st, clk := openMem(t), clock.NewFake(t0)
	o := New(st, clk, Options{})
	a := newReceiver(t, 500, 500, 500, 500, 500, 500, 500, 500)
	b := newReceiver(t)
	enqueueFor(t, st, o, "k1", a.URL, "notification=k1")
	enqueueFor(t, st, o, "k2", a.URL, "notification=k2")
	enqueue(t, st, o, a.URL, "keyless", form)
	if n := runDue(t, o); n != 0 || a.count() != 1 {
		t.Fatalf("first run: delivered %d, A got %d posts; want 0 and 1", n, a.count())
	}
	if n := retarget(t, st, o, "k1", b.URL); n != 1 {
		t.Fatalf("Retarget(k1, B) changed %d deliveries, want 1", n)
	}
	if n := retarget(t, st, o, "k1", b.URL); n != 0 {
		t.Fatalf("second Retarget(k1, B) changed %d, want 0 (already there)", n)
	}
	p, _ := o.Pending(context.Background())
	if len(p) != 3 || p[0].URL != b.URL || p[0].Attempts != 1 || !p[0].NextAt.Equal(t0.Add(5*time.Minute)) ||
		p[1].URL != a.URL || p[2].URL != a.URL {
		t.Fatalf("pending after retarget: %+v; want k1 at B, 1 attempt, retry at +5m; k2 and keyless at A", p)
	}
	if n := runDue(t, o); n != 0 || b.count() != 0 {
		t.Fatalf("before the retry is due: delivered %d, B got %d posts", n, b.count())
	}
	clk.Advance(5 * time.Minute)
	runDue(t, o)
	clk.Advance(time.Hour)
	runDue(t, o)
	if got := bodies(b.hits); len(got) != 1 || got[0] != "notification=k1" {
		t.Fatalf("B got %q, want notification=k1 once", got)
	}
	for _, h := range bodies(a.hits[1:]) {
		if h == "notification=k1" {
			t.Fatalf("A got k1 after the retarget: %q", bodies(a.hits))
		}
	}
	done, _ := o.Done(context.Background())
	if len(done) != 1 || done[0].Key != "k1" || done[0].URL != b.URL || done[0].State != StateDelivered || done[0].Attempts != 2 {
		t.Fatalf("done: %+v", done)
	}
}

// TestRetargetToNoURLCancels: removing the URL gives the key's pending
// deliveries up (state canceled, URL where they were failing kept); a
// rolled back Retarget changes nothing.
func TestRetargetToNoURLCancels(t *testing.T) {
	st, clk := openMem(t), clock.NewFake(t0)
	o := New(st, clk, Options{})
	a := newReceiver(t, 500)
	enqueueFor(t, st, o, "k", a.URL, "notification=k")
	enqueueFor(t, st, o, "other", a.URL, "notification=other")
	runDue(t, o)
	boom := errors.New("boom")
	if err := st.Tx(context.Background(), func(tx *store.Tx) error {
		if _, err := o.Retarget(context.Background(), tx, "k", ""); err != nil {
			return err
		}
		return boom
	}); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if p, _ := o.Pending(context.Background()); len(p) != 2 {
		t.Fatalf("a rolled back Retarget left %d pending, want 2", len(p))
	}
	clk.Advance(time.Minute)
	if n := retarget(t, st, o, "k", ""); n != 1 {
		t.Fatalf("Retarget(k, \"\") changed %d, want 1", n)
	}
	done, _ := o.Done(context.Background())
	if len(done) != 1 || done[0].State != StateCanceled || done[0].URL != a.URL || done[0].Attempts != 1 ||
		done[0].DoneAt == nil || !done[0].DoneAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("done after removing the URL: %+v", done)
	}
	clk.Advance(24 * time.Hour)
	runDue(t, o)
	if got := bodies(a.hits); len(got) != 2 || got[0] != "notification=k" || got[1] != "notification=other" {
		t.Fatalf("A got %q; want k once (before the removal) and other", got)
	}
	if _, err := o.Retarget(context.Background(), nil, "", "http://x"); err == nil {
		t.Fatal("Retarget without a key: no error")
	}
	if err := st.Tx(context.Background(), func(tx *store.Tx) error {
		_, err := o.Retarget(context.Background(), tx, "k", "ftp://x")
		return err
	}); err == nil {
		t.Fatal("Retarget to ftp://x: no error")
	}
}

// TestRetargetRacesARun: a Retarget committed while RunDue is posting to
// A. The delivery in flight fails and its retry goes to B; a delivery
// RunDue had listed for A but not yet posted is not posted to A.
func TestRetargetRacesARun(t *testing.T) {
	st, clk := openMem(t), clock.NewFake(t0)
	o := New(st, clk, Options{})
	inFlight, release := make(chan struct{}), make(chan int)
	var (
		mu   sync.Mutex
		late []string // posts to A the test did not expect
	)
	a := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case inFlight <- struct{}{}:
			w.WriteHeader(<-release)
		case <-time.After(5 * time.Second):
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			late = append(late, string(b))
			mu.Unlock()
		}
	}))
	defer a.Close()
	b := newReceiver(t)
	enqueueFor(t, st, o, "first", a.URL, "notification=first")
	enqueueFor(t, st, o, "second", a.URL, "notification=second")

	// 1: the first post is failing at A when "first" moves to B.
	ran := make(chan error, 1)
	go func() { _, err := o.RunDue(context.Background()); ran <- err }()
	<-inFlight
	retarget(t, st, o, "first", b.URL)
	release <- http.StatusInternalServerError
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	p, _ := o.Pending(context.Background())
	if len(p) != 2 || p[0].URL != b.URL || p[0].Attempts != 1 || p[0].LastStatus != 500 {
		t.Fatalf("after a failure during the retarget: %+v; want first at B with the failed attempt", p)
	}

	// 2: "third" is moved while the run that listed it for A is posting
	// "second" to A.
	enqueueFor(t, st, o, "third", a.URL, "notification=third") // queued after second: posted after it
	go func() { _, err := o.RunDue(context.Background()); ran <- err }()
	<-inFlight // "second" at A
	retarget(t, st, o, "third", b.URL)
	release <- http.StatusOK
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	// third was listed for A in that run but not posted there; it is due
	// now at B, first at B in 5 minutes.
	clk.Advance(5 * time.Minute)
	if n := runDue(t, o); n != 2 {
		t.Fatalf("delivered %d at B, want first and third", n)
	}
	if got := bodies(b.hits); len(got) != 2 || got[0] != "notification=first" || got[1] != "notification=third" {
		t.Fatalf("B got %q", got)
	}
	done, _ := o.Done(context.Background())
	if len(done) != 3 || string(done[1].Body) != "notification=second" || done[1].URL != a.URL {
		t.Fatalf("done: %+v", done)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(late) != 0 {
		t.Fatalf("A got %q after the retargets", late)
	}
}
