// Package health serves a server's /healthz (the process lives) and
// /readyz (what it needs answers: its databases, River, the service it
// calls), for load balancers, systemd and operators (docs/operations.md).
package health

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Check is one readiness check. Name is short and stable ("banco",
// "river", "servico"); Fail is what /readyz says when it fails, for
// people: it never carries the error, which goes to the log only (an
// error may name a path, a host or a credential).
type Check struct {
	Name string
	Fail string
	Run  func(ctx context.Context) error
}

// Timeout bounds each check of one /readyz.
const Timeout = 3 * time.Second

// Mount registers GET /healthz and GET /readyz on mux.
func Mount(mux *http.ServeMux, log zerolog.Logger, checks ...Check) {
	mux.HandleFunc("GET /healthz", Healthz)
	mux.Handle("GET /readyz", Readyz(log, checks...))
}

// Healthz answers 200 "ok": the process lives and serves HTTP.
func Healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprintln(w, "ok")
}

// Readyz runs every check at once (each within Timeout) and answers 200
// with one "name: ok" line per check, or 503 with "name: Fail" for each
// that failed.
func Readyz(log zerolog.Logger, checks ...Check) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		errs := make([]error, len(checks))
		var wg sync.WaitGroup
		for i, c := range checks {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(r.Context(), Timeout)
				defer cancel()
				errs[i] = run(ctx, c)
			}()
		}
		wg.Wait()
		var b strings.Builder
		status := http.StatusOK
		for i, c := range checks {
			if errs[i] != nil {
				status = http.StatusServiceUnavailable
				fmt.Fprintf(&b, "%s: %s\n", c.Name, c.Fail)
				log.Warn().Str("check", c.Name).Err(errs[i]).Msg("readyz: check failed")
				continue
			}
			fmt.Fprintf(&b, "%s: ok\n", c.Name)
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		w.Write([]byte(b.String()))
	})
}

// run runs c, turning a panic into an error and a check that outlives its
// context into ctx's error.
func run(ctx context.Context, c Check) (err error) {
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("panic: %v", p)
			}
		}()
		done <- c.Run(ctx)
	}()
	select {
	case err = <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Reachable is a check that the service at baseURL answers HTTP at all
// (any status: a 401 or a 404 is an answer), within the check's time.
func Reachable(client *http.Client, baseURL string) func(ctx context.Context) error {
	if client == nil {
		client = http.DefaultClient
	}
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(baseURL, "/")+"/", nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
}
