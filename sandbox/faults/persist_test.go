package faults

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"remessa/sandbox/clock"
	"remessa/sandbox/store"
)

// quotaHandler wraps a 204 handler with inj; every request acts for "app1".
func quotaHandler(inj *Injector) http.Handler {
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	return inj.Wrap(next, func(r *http.Request) string { return r.Method + " " + r.URL.Path },
		func(*http.Request) (string, bool) { return "app1", true })
}

func status(h http.Handler, method, path string) int {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(method, path, nil))
	return w.Code
}

// TestQuotaSurvivesRestart: a quota of 3 a day, 2 used, the sandbox
// restarts on the same data: one request is left, not a fresh 3. The next
// São Paulo day starts from zero, and the old day's counters are dropped.
func TestQuotaSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.db")
	// 2026-03-10 12:00 UTC = 09:00 in São Paulo.
	clk := clock.NewFake(time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC))
	cfg := Config{All: Rule{Quota: 3}}
	open := func() (*Injector, *store.Store) {
		st, err := store.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		inj, err := New(cfg, clk)
		if err != nil {
			t.Fatal(err)
		}
		if err := inj.SetStore(context.Background(), st, func(err error) { t.Error(err) }); err != nil {
			t.Fatal(err)
		}
		return inj, st
	}
	inj, st := open()
	h := quotaHandler(inj)
	for i := range 2 {
		if got := status(h, "POST", "/v1/carnet"); got != 204 {
			t.Fatalf("request %d: %d", i+1, got)
		}
	}
	if got := status(h, "GET", "/v1/charge/1"); got != 204 { // another route has its own count
		t.Fatalf("other route: %d", got)
	}
	st.Close()

	inj, st = open()
	h = quotaHandler(inj)
	if n := inj.QuotaUsed("POST /v1/carnet", "app1"); n != 2 {
		t.Fatalf("after restart %d used, want 2", n)
	}
	if got := status(h, "POST", "/v1/carnet"); got != 204 {
		t.Fatalf("third request: %d", got)
	}
	if got := status(h, "POST", "/v1/carnet"); got != 429 {
		t.Fatalf("fourth request after a restart: %d, want 429 (quota 3 a day)", got)
	}
	st.Close()

	// 03:00 UTC of the 11th is 00:00 in São Paulo: a new day.
	clk.Set(time.Date(2026, 3, 11, 3, 0, 0, 0, time.UTC))
	inj, st = open()
	defer func() { st.Close() }() // the store open at the end
	h = quotaHandler(inj)
	if n := inj.QuotaUsed("POST /v1/carnet", "app1"); n != 0 {
		t.Fatalf("next day starts at %d", n)
	}
	left := 0
	_ = st.Each(context.Background(), KindQuota, func(account, id string, raw []byte) error {
		if account == "2026-03-10" {
			left++
		}
		return nil
	})
	if left != 0 {
		t.Fatalf("%d counters of the previous day kept", left)
	}
	if got := status(h, "POST", "/v1/carnet"); got != 204 {
		t.Fatalf("next day: %d", got)
	}
	// DELETE /sandbox/faults/quota forgets the persisted counts too.
	inj.ResetQuota()
	st.Close()
	inj, st = open()
	if n := inj.QuotaUsed("POST /v1/carnet", "app1"); n != 0 {
		t.Fatalf("after reset and restart %d used", n)
	}
}

// Documents (payer-facing pages) and CORS preflights are not API calls:
// no fault and no quota touch them.
func TestDocumentsAndPreflightExempt(t *testing.T) {
	inj, err := New(Config{All: Rule{P500: 1, Quota: 1}}, clock.Real{})
	if err != nil {
		t.Fatal(err)
	}
	h := quotaHandler(inj)
	for range 3 {
		for _, c := range []struct{ method, path string }{
			{"GET", "/v1/documents/charge/abc/pdf"},
			{"GET", "/v1/documents/carnet/abc/link"},
			{"OPTIONS", "/v1/pubkey"},
			{"OPTIONS", "/v1/card/0123/jsonp"},
		} {
			if got := status(h, c.method, c.path); got != 204 {
				t.Fatalf("%s %s: %d, want 204 (exempt)", c.method, c.path, got)
			}
		}
	}
	if got := status(h, "GET", "/v1/pubkey"); got != 500 {
		t.Fatalf("GET /v1/pubkey: %d, want the injected 500", got)
	}
	if n := inj.QuotaUsed("GET /v1/documents/charge/abc/pdf", "app1"); n != 0 {
		t.Fatalf("documents counted %d", n)
	}
}
