package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"remessa/sandbox/clock"
	"remessa/sandbox/module"
	"remessa/sandbox/store"
)

var t0 = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

type hit struct {
	ContentType, Body string
}

// receiver is a loopback endpoint that answers the scripted statuses in
// order (then 200) and records what it got.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	script []int
	hits   []hit
}

func newReceiver(t *testing.T, script ...int) *receiver {
	rc := &receiver{script: script}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if r.Method != http.MethodPost {
			t.Errorf("receiver got %s, want POST", r.Method)
		}
		rc.hits = append(rc.hits, hit{r.Header.Get("Content-Type"), string(b)})
		status := http.StatusOK
		if len(rc.script) > 0 {
			status, rc.script = rc.script[0], rc.script[1:]
		}
		if status == http.StatusFound {
			w.Header().Set("Location", "/elsewhere")
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.hits)
}

func openMem(t *testing.T) *store.Store {
	st, err := store.Open(store.Memory)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func enqueue(t *testing.T, st *store.Store, o *Outbox, url, body, ct string) {
	t.Helper()
	err := st.Tx(context.Background(), func(tx *store.Tx) error { return o.Enqueue(context.Background(), tx, url, []byte(body), ct) })
	if err != nil {
		t.Fatal(err)
	}
}

func runDue(t *testing.T, o *Outbox) int {
	t.Helper()
	n, err := o.RunDue(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestDeliversForm(t *testing.T) {
	st, clk := openMem(t), clock.NewFake(t0)
	o := New(st, clk, Options{})
	rc := newReceiver(t)
	enqueue(t, st, o, rc.URL+"/notify", "notification=abc123", "application/x-www-form-urlencoded")
	if n := runDue(t, o); n != 1 {
		t.Fatalf("delivered %d, want 1", n)
	}
	if rc.count() != 1 || rc.hits[0].Body != "notification=abc123" || rc.hits[0].ContentType != "application/x-www-form-urlencoded" {
		t.Fatalf("receiver got %+v", rc.hits)
	}
	if p, _ := o.Pending(context.Background()); len(p) != 0 {
		t.Fatalf("still pending: %+v", p)
	}
	done, _ := o.Done(context.Background())
	if len(done) != 1 || done[0].State != StateDelivered || done[0].Attempts != 1 || done[0].LastStatus != 200 {
		t.Fatalf("done = %+v", done)
	}
	// Nothing is sent again, however far the clock moves.
	clk.Advance(400 * 24 * time.Hour)
	if n := runDue(t, o); n != 0 || rc.count() != 1 {
		t.Fatalf("second run delivered %d, receiver has %d hits", n, rc.count())
	}
}

func TestDeliversPixJSON(t *testing.T) {
	st, clk := openMem(t), clock.NewFake(t0)
	o := New(st, clk, Options{})
	rc := newReceiver(t)
	body := `{"pix":[{"endToEndId":"E09089356202603101200abcdefghijk","txid":"abc","valor":"10.00"}]}`
	enqueue(t, st, o, rc.URL+"/webhook/pix", body, "application/json")
	runDue(t, o)
	if rc.count() != 1 || rc.hits[0].Body != body || rc.hits[0].ContentType != "application/json" {
		t.Fatalf("receiver got %+v", rc.hits)
	}
}

func TestRolledBackEnqueueIsNotSent(t *testing.T) {
	st, clk := openMem(t), clock.NewFake(t0)
	o := New(st, clk, Options{})
	rc := newReceiver(t)
	boom := errors.New("state change failed")
	err := st.Tx(context.Background(), func(tx *store.Tx) error {
		if err := o.Enqueue(context.Background(), tx, rc.URL, []byte("notification=x"), "application/x-www-form-urlencoded"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if n := runDue(t, o); n != 0 || rc.count() != 0 {
		t.Fatalf("a rolled-back delivery was sent (%d, %d)", n, rc.count())
	}
}

func TestRetryScheduleAfterFailures(t *testing.T) {
	st, clk := openMem(t), clock.NewFake(t0)
	o := New(st, clk, Options{})
	rc := newReceiver(t, 500, 500) // then 200
	enqueue(t, st, o, rc.URL, "notification=tok", "application/x-www-form-urlencoded")

	if n := runDue(t, o); n != 0 || rc.count() != 1 {
		t.Fatalf("first attempt: delivered %d, hits %d", n, rc.count())
	}
	p, _ := o.Pending(context.Background())
	if len(p) != 1 || p[0].Attempts != 1 || p[0].LastStatus != 500 || !p[0].NextAt.Equal(t0.Add(5*time.Minute)) {
		t.Fatalf("after the first failure: %+v (next attempt must be 5 min later)", p)
	}
	// Not due before 5 minutes.
	clk.Advance(5*time.Minute - time.Second)
	if runDue(t, o); rc.count() != 1 {
		t.Fatalf("retried before 5 minutes (%d hits)", rc.count())
	}
	clk.Advance(time.Second)
	if n := runDue(t, o); n != 0 || rc.count() != 2 {
		t.Fatalf("second attempt: delivered %d, hits %d", n, rc.count())
	}
	p, _ = o.Pending(context.Background())
	if len(p) != 1 || !p[0].NextAt.Equal(t0.Add(15*time.Minute)) {
		t.Fatalf("after the second failure: %+v (next attempt 10 min later)", p)
	}
	clk.Advance(10 * time.Minute)
	if n := runDue(t, o); n != 1 || rc.count() != 3 {
		t.Fatalf("third attempt: delivered %d, hits %d", n, rc.count())
	}
	for i, h := range rc.hits {
		if h.Body != "notification=tok" {
			t.Errorf("attempt %d body %q", i+1, h.Body)
		}
	}
	clk.Advance(24 * time.Hour)
	if runDue(t, o); rc.count() != 3 {
		t.Fatal("sent again after a 2xx")
	}
}

func TestGivesUpAfterTenRetries(t *testing.T) {
	st, clk := openMem(t), clock.NewFake(t0)
	o := New(st, clk, Options{})
	script := make([]int, 20)
	for i := range script {
		script[i] = 503
	}
	rc := newReceiver(t, script...)
	enqueue(t, st, o, rc.URL, "notification=tok", "application/x-www-form-urlencoded")
	// The waits of real-service.md §1.2, in minutes.
	waits := []int{5, 10, 20, 40, 80, 160, 320, 640, 1280, 52560}
	runDue(t, o)
	for i, m := range waits {
		clk.Advance(time.Duration(m)*time.Minute - time.Second)
		if runDue(t, o); rc.count() != i+1 {
			t.Fatalf("retry %d came before %d minutes", i+1, m)
		}
		clk.Advance(time.Second)
		if runDue(t, o); rc.count() != i+2 {
			t.Fatalf("retry %d did not come after %d minutes (%d hits)", i+1, m, rc.count())
		}
	}
	done, _ := o.Done(context.Background())
	if len(done) != 1 || done[0].State != StateFailed || done[0].Attempts != 11 {
		t.Fatalf("done = %+v, want one failed delivery after 11 attempts", done)
	}
	clk.Advance(365 * 24 * time.Hour)
	if runDue(t, o); rc.count() != 11 {
		t.Fatalf("tried again after giving up (%d hits)", rc.count())
	}
}

func TestSpeedupCompressesWaits(t *testing.T) {
	st, clk := openMem(t), clock.NewFake(t0)
	o := New(st, clk, Options{Speedup: 60})
	rc := newReceiver(t, 500)
	enqueue(t, st, o, rc.URL, "notification=tok", "application/x-www-form-urlencoded")
	runDue(t, o)
	p, _ := o.Pending(context.Background())
	if len(p) != 1 || !p[0].NextAt.Equal(t0.Add(5*time.Second)) {
		t.Fatalf("with speedup 60 the first retry is due %v, want 5 s later", p[0].NextAt.Sub(t0))
	}
}

func TestFailureKinds(t *testing.T) {
	st, clk := openMem(t), clock.NewFake(t0)
	o := New(st, clk, Options{})
	for _, status := range []int{429, 302, 404} {
		rc := newReceiver(t, status)
		enqueue(t, st, o, rc.URL, "notification=s", "application/x-www-form-urlencoded")
	}
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	enqueue(t, st, o, deadURL, "notification=dead", "application/x-www-form-urlencoded")
	if n := runDue(t, o); n != 0 {
		t.Fatalf("delivered %d; 429, 302, 404 and a refused connection are failures", n)
	}
	p, _ := o.Pending(context.Background())
	if len(p) != 4 {
		t.Fatalf("%d pending, want 4", len(p))
	}
	if p[0].LastStatus != 429 || p[1].LastStatus != 302 || p[2].LastStatus != 404 {
		t.Errorf("statuses %d %d %d", p[0].LastStatus, p[1].LastStatus, p[2].LastStatus)
	}
	if p[3].LastStatus != 0 || !strings.Contains(p[3].LastError, "refused") {
		t.Errorf("refused connection recorded as %d %q", p[3].LastStatus, p[3].LastError)
	}
}

func TestNoLossAcrossRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	clk := clock.NewFake(t0)
	rc := newReceiver(t, 500) // the first attempt fails, the one after the restart succeeds
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	o := New(st, clk, Options{})
	enqueue(t, st, o, rc.URL, "notification=before-restart", "application/x-www-form-urlencoded")
	enqueue(t, st, o, rc.URL, "notification=never-tried", "application/x-www-form-urlencoded")
	// Only the first is tried before the "crash": deliver it by hand.
	p, _ := o.Pending(context.Background())
	if _, _, err := o.attempt(context.Background(), p[0]); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st2, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	o2 := New(st2, clk, Options{})
	// The never-tried delivery goes at once; the failed one waits its 5 min.
	if n := runDue(t, o2); n != 1 || rc.count() != 2 || rc.hits[1].Body != "notification=never-tried" {
		t.Fatalf("after restart: delivered %d, hits %+v", n, rc.hits)
	}
	clk.Advance(5 * time.Minute)
	if n := runDue(t, o2); n != 1 || rc.count() != 3 || rc.hits[2].Body != "notification=before-restart" {
		t.Fatalf("retry after restart: delivered %d, hits %+v", n, rc.hits)
	}
	st2.Close()

	st3, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st3.Close()
	o3 := New(st3, clk, Options{})
	clk.Advance(100 * 24 * time.Hour)
	if n := runDue(t, o3); n != 0 || rc.count() != 3 {
		t.Fatalf("delivered deliveries sent again after a restart (%d hits)", rc.count())
	}
	done, _ := o3.Done(context.Background())
	if len(done) != 2 {
		t.Fatalf("%d done after restarts, want 2", len(done))
	}
}

func TestConcurrentRunsSendOnce(t *testing.T) {
	st, clk := openMem(t), clock.NewFake(t0)
	o := New(st, clk, Options{})
	rc := newReceiver(t)
	for i := 0; i < 10; i++ {
		enqueue(t, st, o, rc.URL, "notification=n", "application/x-www-form-urlencoded")
	}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); o.RunDue(context.Background()) }()
	}
	wg.Wait()
	if rc.count() != 10 {
		t.Fatalf("%d posts for 10 deliveries", rc.count())
	}
}

func TestEnqueueRejectsBadURL(t *testing.T) {
	st, clk := openMem(t), clock.NewFake(t0)
	o := New(st, clk, Options{})
	for _, u := range []string{"", "ftp://x/y", "/relative", "http://", "https://user:secret@[::1"} {
		err := st.Tx(context.Background(), func(tx *store.Tx) error {
			return o.Enqueue(context.Background(), tx, u, []byte("x"), "text/plain")
		})
		if err == nil {
			t.Errorf("Enqueue(%q): no error", u)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("error leaks the URL's password: %v", err)
		}
	}
}

func TestRunLoopDeliversAfterEnqueue(t *testing.T) {
	st, clk := openMem(t), clock.NewFake(t0)
	o := New(st, clk, Options{Poll: time.Hour})
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- string(b)
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { o.Run(ctx); close(done) }()
	enqueue(t, st, o, srv.URL, "notification=loop", "application/x-www-form-urlencoded")
	select {
	case b := <-got:
		if b != "notification=loop" {
			t.Fatalf("got %q", b)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the background loop did not deliver within 10 s of the Enqueue (poll is 1 h)")
	}
	cancel()
	<-done
}

func TestControlRoutes(t *testing.T) {
	st, clk := openMem(t), clock.NewFake(t0)
	o := New(st, clk, Options{})
	rc := newReceiver(t, 500)
	enqueue(t, st, o, rc.URL, "notification=a", "application/x-www-form-urlencoded")
	enqueue(t, st, o, rc.URL, "notification=b", "application/x-www-form-urlencoded")
	mux := http.NewServeMux()
	o.Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/sandbox/outbox/run", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	var run map[string]int
	json.NewDecoder(resp.Body).Decode(&run)
	resp.Body.Close()
	if run["delivered"] != 0 {
		t.Fatalf("run answered %v, want delivered 0 (the first post got 500; the second waits for the next run)", run)
	}
	resp, err = http.Post(srv.URL+"/sandbox/outbox/run", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&run)
	resp.Body.Close()
	if run["delivered"] != 1 {
		t.Fatalf("second run answered %v, want delivered 1", run)
	}
	resp, err = http.Get(srv.URL + "/sandbox/outbox")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Pending, Done []DeliveryView
	}
	json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if len(list.Pending) != 1 || list.Pending[0].Body != "notification=a" || list.Pending[0].LastStatus != 500 ||
		list.Pending[0].NextAt == nil || !list.Pending[0].NextAt.Equal(t0.Add(5*time.Minute)) {
		t.Fatalf("pending = %+v", list.Pending)
	}
	if len(list.Done) != 1 || list.Done[0].Body != "notification=b" || list.Done[0].State != StateDelivered {
		t.Fatalf("done = %+v", list.Done)
	}
	resp, _ = http.Get(srv.URL + "/sandbox/outbox?state=bogus")
	if resp.StatusCode != 400 {
		t.Fatalf("bad state answered %d", resp.StatusCode)
	}
	resp.Body.Close()
}

func TestFailingReceiverCostsOnePostPerRun(t *testing.T) {
	st, clk := openMem(t), clock.NewFake(t0)
	o := New(st, clk, Options{})
	rc := newReceiver(t, 500, 500, 500, 500)
	for i := 0; i < 3; i++ {
		enqueue(t, st, o, rc.URL, "notification=n", "application/x-www-form-urlencoded")
	}
	if runDue(t, o); rc.count() != 1 {
		t.Fatalf("%d posts in one run to a failing receiver, want 1", rc.count())
	}
	p, _ := o.Pending(context.Background())
	if p[0].Attempts != 1 || p[1].Attempts != 0 || p[2].Attempts != 0 {
		t.Fatalf("attempts %d %d %d, want 1 0 0", p[0].Attempts, p[1].Attempts, p[2].Attempts)
	}
}

func TestInterruptedPostIsNotAnAttempt(t *testing.T) {
	st, clk := openMem(t), clock.NewFake(t0)
	o := New(st, clk, Options{})
	arrived, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-release
	}))
	defer srv.Close()
	defer close(release)
	enqueue(t, st, o, srv.URL, "notification=slow", "application/x-www-form-urlencoded")
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }()
	n, err := o.RunDue(ctx)
	if n != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("RunDue = %d, %v; want 0 and context.Canceled", n, err)
	}
	p, _ := o.Pending(context.Background())
	if len(p) != 1 || p[0].Attempts != 0 || !p[0].NextAt.Equal(t0) {
		t.Fatalf("after an interrupted post: %+v (want untouched, still due)", p)
	}
	// A run waiting for the lock gives up with its context.
	o.run <- struct{}{}
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if _, err := o.RunDue(ctx2); !errors.Is(err, context.Canceled) {
		t.Fatalf("RunDue while another runs: %v", err)
	}
	<-o.run
}

// TestRegisteredNotifierTakesSpeedup: "remessa sandbox --notify-speedup 60"
// reaches the outbox through Deps.NotifySpeedup.
func TestRegisteredNotifierTakesSpeedup(t *testing.T) {
	st, clk := openMem(t), clock.NewFake(t0)
	name, ctor := module.NotifierCtor()
	if name != "outbox" || ctor == nil {
		t.Fatalf("registered notifier %q", name)
	}
	n, err := ctor(module.Deps{Store: st, Clock: clk, Logger: zerolog.Nop(), NotifySpeedup: 60})
	if err != nil {
		t.Fatal(err)
	}
	o := n.(*Outbox)
	rc := newReceiver(t, 500)
	enqueue(t, st, o, rc.URL, "notification=tok", "application/x-www-form-urlencoded")
	runDue(t, o)
	p, _ := o.Pending(context.Background())
	if len(p) != 1 || !p[0].NextAt.Equal(t0.Add(5*time.Second)) {
		t.Fatalf("first retry due %v after the start, want 5 s (5 min / 60)", p[0].NextAt.Sub(t0))
	}
}
