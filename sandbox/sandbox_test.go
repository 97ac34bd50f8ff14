package sandbox_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"remessa/api"
	"remessa/internal/sandboxclient"
	"remessa/sandbox"
	"remessa/sandbox/faults"
	"remessa/sandbox/module"
	"remessa/sandbox/sandboxtest"
)

func TestModulesAreBuiltAndListed(t *testing.T) {
	srv, err := sandbox.New(sandbox.Config{DataDir: sandbox.Memory})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if got := strings.Join(srv.Modules(), ","); !strings.Contains(got, "sandboxtest") {
		t.Fatalf("modules %q", got)
	}
	if err := srv.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
}

func TestTLSWithoutProviderFailsClearly(t *testing.T) {
	srv, err := sandbox.New(sandbox.Config{DataDir: sandbox.Memory, TLS: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if _, err := srv.Start(); err == nil || !strings.Contains(err.Error(), "TLS") {
		t.Fatalf("Start with TLS and no provider: %v", err)
	}
}

func TestBaseURL(t *testing.T) {
	r := httptest.NewRequest("GET", "http://127.0.0.1:9999/v1/x", nil)
	if got := sandbox.BaseURL(r); got != "http://127.0.0.1:9999" {
		t.Fatal(got)
	}
}

func TestStatusRoute(t *testing.T) {
	rn := sandboxtest.Start(t, sandbox.Config{})
	resp, err := http.Get(rn.URL + "/sandbox/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf strings.Builder
	_, _ = io.Copy(&buf, resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(buf.String(), `"url":"`+rn.URL+`"`) || !strings.Contains(buf.String(), `"token_ttl_seconds":600`) {
		t.Fatalf("%d %s", resp.StatusCode, buf.String())
	}
}

// Runner and Closer of a module are driven by Start and Close.
type lifecycle struct {
	ran, closed chan struct{}
}

func (l *lifecycle) Register(mux module.Mux) {}
func (l *lifecycle) Run(ctx context.Context) { close(l.ran); <-ctx.Done() }
func (l *lifecycle) Close() error            { close(l.closed); return nil }

// lastLifecycle is the instance built by the latest sandbox.New (tests
// in this package do not run in parallel).
var lastLifecycle *lifecycle

func init() {
	module.Register("zz-lifecycle", func(module.Deps) (module.Module, error) {
		lastLifecycle = &lifecycle{ran: make(chan struct{}), closed: make(chan struct{})}
		return lastLifecycle, nil
	})
}

func TestModuleLifecycle(t *testing.T) {
	srv, err := sandbox.New(sandbox.Config{DataDir: sandbox.Memory})
	if err != nil {
		t.Fatal(err)
	}
	lc := lastLifecycle
	rn, err := srv.Start()
	if err != nil {
		t.Fatal(err)
	}
	<-lc.ran // Run was started (blocks until it is)
	select {
	case <-lc.closed:
		t.Fatal("closed before Close")
	default:
	}
	if err := rn.Close(); err != nil {
		t.Fatal(err)
	}
	<-lc.closed
	<-rn.Done()
}

// BenchmarkHandlerPing measures the core in process (no network): auth,
// routing, faults layer, access log, recover, envelope.
func BenchmarkHandlerPing(b *testing.B) {
	srv, err := sandbox.New(sandbox.Config{DataDir: sandbox.Memory})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	h := srv.Handler()
	req := httptest.NewRequest("POST", "/v1/authorize", strings.NewReader(`{"grant_type":"client_credentials"}`))
	c := srv.Credentials()
	req.SetBasicAuth(c.ClientID, c.ClientSecret)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	tok := strings.SplitN(strings.SplitN(w.Body.String(), `"access_token":"`, 2)[1], `"`, 2)[0]
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest("GET", sandboxtest.PingV1, nil)
		r.RemoteAddr = "127.0.0.1:1"
		r.Header.Set("Authorization", "Bearer "+tok)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatal(w.Code, w.Body)
		}
	}
}

type finder struct{ d module.Deps }

func (f *finder) Register(mux module.Mux) {}

var lastFinder *finder

func init() {
	module.Register("zz-finder", func(d module.Deps) (module.Module, error) {
		lastFinder = &finder{d: d}
		return lastFinder, nil
	})
}

func TestLookupFindsOtherModules(t *testing.T) {
	srv, err := sandbox.New(sandbox.Config{DataDir: sandbox.Memory})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	m, ok := lastFinder.d.Lookup("zz-lifecycle")
	if !ok || m != lastLifecycle {
		t.Fatalf("Lookup(zz-lifecycle) = %v, %v", m, ok)
	}
	if _, ok := lastFinder.d.Lookup("nenhum"); ok {
		t.Fatal("Lookup of a missing module succeeded")
	}
}

func TestSeparatePixListener(t *testing.T) {
	rn := sandboxtest.Start(t, sandbox.Config{PixAddr: "127.0.0.1:0"})
	if rn.PixURL == rn.URL || !strings.HasPrefix(rn.PixURL, "http://127.0.0.1:") {
		t.Fatalf("URL %s PixURL %s", rn.URL, rn.PixURL)
	}
	c := sandboxclient.Client(t, rn, nil)
	if _, err := c.PixAuthorize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Authorize(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestShutdownWaitsForRequestsInFlight(t *testing.T) {
	srv, err := sandbox.New(sandbox.Config{DataDir: sandbox.Memory})
	if err != nil {
		t.Fatal(err)
	}
	// 200 ms of latency on the ping: Close must let it finish.
	if err := srv.Faults().SetConfig(faultsLatency(200)); err != nil {
		t.Fatal(err)
	}
	rn, err := srv.Start()
	if err != nil {
		t.Fatal(err)
	}
	c := sandboxclient.Client(t, rn, nil)
	if _, err := c.Authorize(context.Background()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		close(started)
		_, err := c.Do(context.Background(), api.V1, "GET", sandboxtest.PingV1, nil)
		done <- err
	}()
	<-started
	// Wait until the request is being served, then close.
	for srv.Faults().QuotaUsed("GET "+sandboxtest.PingV1, rn.ClientID) == 0 {
		runtime.Gosched()
	}
	if err := rn.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("request in flight during Close: %v", err)
	}
}

// faultsLatency is a config with ms of latency and a quota high enough to
// count requests (QuotaUsed tells when a request reached the server).
func faultsLatency(ms int) faults.Config {
	return faults.Config{All: faults.Rule{Latency: faults.Duration(time.Duration(ms) * time.Millisecond), Quota: 1 << 30}}
}
