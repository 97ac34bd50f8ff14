package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"remessa/api"
	"remessa/internal/sandboxclient"
	"remessa/sandbox"
	"remessa/sandbox/clock"
	"remessa/sandbox/sandboxtest"
)

// localClock is this machine's clock in a test: it moves only when told.
type localClock struct {
	mu sync.Mutex
	t  time.Time
}

func (l *localClock) now() time.Time { l.mu.Lock(); defer l.mu.Unlock(); return l.t }
func (l *localClock) add(d time.Duration) {
	l.mu.Lock()
	l.t = l.t.Add(d)
	l.mu.Unlock()
}

func httpDate(t time.Time) string { return t.UTC().Format(http.TimeFormat) }

// TestServiceClockReadsTheDateHeader: Now is the latest answer's Date
// plus the time elapsed here since; the same header again changes
// nothing; an answer of the previous second arriving late is not a move
// back, a Date two seconds or more behind is; a malformed Date is
// ignored; with no Date this machine's clock is the answer.
func TestServiceClockReadsTheDateHeader(t *testing.T) {
	here := &localClock{t: time.Date(2026, 11, 28, 1, 31, 27, 0, time.UTC)}
	c := api.NewServiceClock(here.now)
	if got := c.Now(); !got.Equal(here.now()) || c.Reading().Known {
		t.Fatalf("before any answer: %v known=%v, want this machine's %v", got, c.Reading().Known, here.now())
	}
	svc := time.Date(2026, 12, 21, 13, 0, 5, 0, time.UTC)
	c.Observe(httpDate(svc))
	here.add(90 * time.Second)
	if got, want := c.Now(), svc.Add(90*time.Second); !got.Equal(want) {
		t.Fatalf("Now %v, want %v (the Date plus 90 s elapsed here)", got, want)
	}
	// the same header, later: the reading stays the first one's
	c.Observe(httpDate(svc))
	if got, want := c.Now(), svc.Add(90*time.Second); !got.Equal(want) {
		t.Fatalf("Now %v after the same Date again, want %v", got, want)
	}
	r := c.Reading()
	if !r.Known || r.Skew() != svc.Sub(time.Date(2026, 11, 28, 1, 31, 27, 0, time.UTC)) || !r.Skewed() {
		t.Fatalf("reading %+v skew %v", r, r.Skew())
	}
	// a new second, then a late answer of the one before
	c.Observe(httpDate(svc.Add(91 * time.Second)))
	c.Observe(httpDate(svc.Add(90 * time.Second)))
	if got, want := c.Now(), svc.Add(91*time.Second); !got.Equal(want) {
		t.Fatalf("Now %v after a late answer of the previous second, want %v", got, want)
	}
	// the service's clock set back a day: followed
	back := svc.Add(-24 * time.Hour)
	c.Observe(httpDate(back))
	if got := c.Now(); !got.Equal(back) {
		t.Fatalf("Now %v after the service's clock went back, want %v", got, back)
	}
	for _, bad := range []string{"", "ontem", "Mon, 99 Foo 2026 25:61:61 GMT"} {
		c.Observe(bad)
		if got := c.Now(); !got.Equal(back) {
			t.Fatalf("Now %v after Date %q, want %v unchanged", got, bad, back)
		}
	}
	// within a minute: no warning
	here2 := &localClock{t: svc}
	c2 := api.NewServiceClock(here2.now)
	c2.Observe(httpDate(svc.Add(59 * time.Second)))
	if c2.Reading().Skewed() {
		t.Fatalf("59 s apart reported as skewed: %v", c2.Reading().Skew())
	}
	c2.Observe(httpDate(svc.Add(-61 * time.Second)))
	if !c2.Reading().Skewed() {
		t.Fatalf("61 s behind not reported: %v", c2.Reading().Skew())
	}
}

// TestClientLearnsTheSandboxClock: through a real server, a client's
// clock is the sandbox's (a fake clock 23 days ahead of this machine's)
// after any answer; moving the sandbox's clock forward or back moves it;
// ServiceNow on a new client gets a token to learn it.
func TestClientLearnsTheSandboxClock(t *testing.T) {
	svc := time.Now().Add(23 * 24 * time.Hour).Truncate(time.Second)
	clk := clock.NewFake(svc)
	rn := sandboxtest.Start(t, sandbox.Config{Clock: clk})
	ctx := context.Background()
	c := sandboxclient.Client(t, rn, nil)
	if c.Clock().Reading().Known {
		t.Fatal("a client that made no call knows the service's time")
	}
	now, err := c.ServiceNow(ctx, api.V1)
	if err != nil {
		t.Fatal(err)
	}
	if d := now.Sub(svc); d < 0 || d > 5*time.Second {
		t.Fatalf("ServiceNow %v, want the sandbox's %v", now, svc)
	}
	if r := c.Clock().Reading(); !r.Known || !r.Skewed() || r.Skew() < 22*24*time.Hour {
		t.Fatalf("reading %+v: want known, 23 days ahead", r)
	}
	for _, to := range []time.Time{svc.Add(72 * time.Hour), svc.Add(-30 * 24 * time.Hour)} {
		clk.Set(to)
		if _, err := ping(t, c); err != nil {
			t.Fatal(err)
		}
		if d := c.Clock().Now().Sub(to); d < 0 || d > 5*time.Second {
			t.Fatalf("after the sandbox's clock moved to %v the client says %v", to, c.Clock().Now())
		}
	}
	// the NoRetry client shares the clock
	nr, err := c.NoRetry()
	if err != nil {
		t.Fatal(err)
	}
	if nr.Clock() != c.Clock() {
		t.Fatal("NoRetry made a second clock")
	}
	// refusals are dated too
	clk.Set(svc)
	if _, err := c.Do(ctx, api.V1, "GET", "/v1/charge/999999", nil); err == nil {
		t.Fatal("GET of a charge that does not exist succeeded")
	}
	if d := c.Clock().Now().Sub(svc); d < 0 || d > 5*time.Second {
		t.Fatalf("after a 404 dated %v the client says %v", svc, c.Clock().Now())
	}
}

// TestClientFallsBackOnThisMachine: a service whose answers carry no
// Date leaves this machine's clock as the answer, and says so.
func TestClientFallsBackOnThisMachine(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Date"] = nil // net/http then sends no Date
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/authorize") {
			w.Write([]byte(`{"access_token":"t","token_type":"Bearer","expires_in":600}`))
			return
		}
		w.Write([]byte(`{"code":200,"data":{}}`))
	}))
	defer srv.Close()
	here := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	c, err := api.New(api.Config{BaseURL: srv.URL, ClientID: "id", ClientSecret: "s", Now: func() time.Time { return here }})
	if err != nil {
		t.Fatal(err)
	}
	now, err := c.ServiceNow(context.Background(), api.V1)
	if err != nil {
		t.Fatal(err)
	}
	if !now.Equal(here) || c.Clock().Reading().Known {
		t.Fatalf("ServiceNow %v known=%v, want this machine's %v", now, c.Clock().Reading().Known, here)
	}
	// unreachable: this machine's time and the error
	srv.Close()
	c2, _ := api.New(api.Config{BaseURL: srv.URL, ClientID: "id", ClientSecret: "s", MaxRetries: -1, Now: func() time.Time { return here }})
	if now, err := c2.ServiceNow(context.Background(), api.V1); err == nil || !now.Equal(here) {
		t.Fatalf("unreachable service: %v %v", now, err)
	}
}

// BenchmarkServiceClockSameDate is the cost the Date handling adds to an
// answer of the same second as the one before (nearly every answer of a
// run): a map look-up and a string comparison.
func BenchmarkServiceClockSameDate(b *testing.B) {
	c := api.NewServiceClock(nil)
	h := http.Header{"Date": {httpDate(time.Now())}}
	c.Observe(h["Date"][0])
	for b.Loop() {
		if v := h["Date"]; len(v) > 0 {
			c.Observe(v[0])
		}
	}
}

// BenchmarkServiceClockNewDate is the cost of an answer with a new Date
// (once a second): the parse and one small allocation.
func BenchmarkServiceClockNewDate(b *testing.B) {
	c := api.NewServiceClock(nil)
	t0 := time.Now()
	dates := make([]string, 64)
	for i := range dates {
		dates[i] = httpDate(t0.Add(time.Duration(i) * time.Second))
	}
	i := 0
	for b.Loop() {
		c.Observe(dates[i%64])
		i++
	}
}
