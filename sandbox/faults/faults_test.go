package faults

import (
	"context"
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"remessa/sandbox/clock"
)

func TestNormalizeRoute(t *testing.T) {
	for in, want := range map[string]string{
		"POST /v1/carnet":            "POST /v1/carnet",
		"post /v1/charge/:id/pay":    "POST /v1/charge/*/pay",
		"PUT /v1/charge/{id}/cancel": "PUT /v1/charge/*/cancel",
		"GET  /v2/cobv/{txid}":       "GET /v2/cobv/*",
		" GET /v1/notification/{t} ": "GET /v1/notification/*",
	} {
		got, err := NormalizeRoute(in)
		if err != nil || got != want {
			t.Errorf("NormalizeRoute(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"/v1/carnet", "POST", "POST v1/carnet", ""} {
		if _, err := NormalizeRoute(bad); err == nil {
			t.Errorf("NormalizeRoute(%q) accepted", bad)
		}
	}
}

func TestValidate(t *testing.T) {
	half := 0.6
	for _, c := range []Config{
		{All: Rule{P500: -0.1}},
		{All: Rule{Drop: 1.01}},
		{All: Rule{P500: 0.5, P503: 0.3, P429: 0.3}},
		{All: Rule{Latency: Duration(2 * time.Minute)}},
		{All: Rule{Quota: -1}},
		{All: Rule{P500: 0.5}, Routes: map[string]Override{"GET /v1/x": {P503: &half}}}, // 0.5 + 0.6 on that route
		{Routes: map[string]Override{"nada": {}}},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
	if err := (Config{All: Rule{P500: 0.2, P503: 0.3, P429: 0.5, Drop: 1, Quota: 15000}}).Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestBindFlags(t *testing.T) {
	var c Config
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	c.BindFlags(fs)
	err := fs.Parse([]string{"--fault-latency", "50ms", "--fault-500", "0.1", "--fault-503", "POST /v1/carnet=0.25",
		"--fault-429", "0.05", "--fault-retry-after", "3", "--fault-drop", "GET /v1/charge/:id=0.5", "--quota", "15000",
		"--quota", "GET /v1/notification/:token=30000", "--fault-seed", "42", "--fault-jitter", "10ms"})
	if err != nil {
		t.Fatal(err)
	}
	if c.All.Latency != Duration(50*time.Millisecond) || c.All.Jitter != Duration(10*time.Millisecond) || c.All.P500 != 0.1 ||
		c.All.P429 != 0.05 || c.All.RetryAfter != 3 || c.All.Quota != 15000 || c.Seed != 42 {
		t.Fatalf("all: %+v", c)
	}
	if o := c.Routes["POST /v1/carnet"]; o.P503 == nil || *o.P503 != 0.25 || o.P500 != nil {
		t.Fatalf("carnet override %+v", o)
	}
	if o := c.Routes["GET /v1/notification/:token"]; o.Quota == nil || *o.Quota != 30000 {
		t.Fatalf("notification override %+v", o)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]string{{"--fault-500", "2"}, {"--fault-latency", "fast"}, {"--quota", "-1"}, {"--fault-503", "carnet=0.1"}} {
		var c Config
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		fs.SetOutput(new(strings.Builder))
		c.BindFlags(fs)
		if err := fs.Parse(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestSecondsToMidnight(t *testing.T) {
	for _, tc := range []struct {
		utc  string
		want int
	}{
		{"2026-01-10T23:00:00Z", 4 * 3600},  // 20:00 in São Paulo
		{"2026-01-11T02:59:59Z", 1},         // 23:59:59
		{"2026-01-11T03:00:00Z", 24 * 3600}, // midnight exactly: a full day
		{"2026-01-11T02:59:59.5Z", 1},       // rounds up, at least 1
		{"2026-06-30T15:00:00Z", 12 * 3600}, // noon
	} {
		now, _ := time.Parse(time.RFC3339Nano, tc.utc)
		if got := secondsToMidnight(now); got != tc.want {
			t.Errorf("secondsToMidnight(%s) = %d, want %d", tc.utc, got, tc.want)
		}
	}
}

// The same seed gives the same sequence of decisions.
func TestSeedIsDeterministic(t *testing.T) {
	run := func() string {
		inj, err := New(Config{Seed: 99, All: Rule{P500: 0.3, P503: 0.3, Drop: 0.2}}, clock.Real{})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for range 200 {
			d := inj.decide("GET /v1/x", "")
			b.WriteByte("0123456789"[d.status/100])
			if d.drop {
				b.WriteByte('d')
			}
		}
		return b.String()
	}
	a, b := run(), run()
	if a != b {
		t.Fatal("same seed, different decisions")
	}
	// Shares are roughly honoured: 200 draws at 30 % each.
	n5 := strings.Count(a, "5")
	if n5 < 90 || n5 > 150 {
		t.Fatalf("%d of 200 answered 5xx with 60 %% configured", n5)
	}
}

func TestOverrideMergesWithAll(t *testing.T) {
	zero := 0.0
	inj, err := New(Config{All: Rule{P503: 1}, Routes: map[string]Override{"POST /v1/authorize": {P503: &zero}}}, clock.Real{})
	if err != nil {
		t.Fatal(err)
	}
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) })
	h := inj.Wrap(next, func(r *http.Request) string { return r.Method + " " + r.URL.Path }, nil)
	for path, want := range map[string]int{"/v1/authorize": 204, "/v1/carnet": 503, "/sandbox/faults": 204, "/docs/x": 204} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("POST", path, nil))
		if w.Code != want {
			t.Errorf("POST %s: %d, want %d", path, w.Code, want)
		}
	}
}

func TestSummary(t *testing.T) {
	if s := (Config{}).Summary(); s != "nenhuma" {
		t.Fatal(s)
	}
	q := 10
	s := Config{All: Rule{P500: 0.1}, Routes: map[string]Override{"POST /v1/carnet": {Quota: &q}}}.Summary()
	if !strings.Contains(s, "500 10%") || !strings.Contains(s, "POST /v1/carnet") || !strings.Contains(s, "cota 10/dia") {
		t.Fatal(s)
	}
}

func TestSleep(t *testing.T) {
	start := time.Now()
	if err := sleep(context.Background(), 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 20*time.Millisecond || el > 500*time.Millisecond {
		t.Fatalf("slept %v, want 20ms", el)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	start = time.Now()
	if err := sleep(ctx, time.Minute); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want deadline exceeded", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("canceled sleep took %v", el)
	}
	// after a canceled sleep and many short ones (their timers reused on
	// Linux), each sleep still lasts its whole time: no timer left armed
	// or fired and unread wakes the next one early
	for i := range 200 {
		if i%50 == 0 {
			ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
			sleep(ctx, time.Hour)
			cancel()
		}
		d := time.Duration(1+i%3) * time.Millisecond
		start := time.Now()
		if err := sleep(context.Background(), d); err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); el < d {
			t.Fatalf("sleep %d of %v lasted %v", i, d, el)
		}
	}
}
