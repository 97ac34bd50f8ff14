package api_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"remessa/api"
	"remessa/internal/sandboxclient"
	"remessa/sandbox"
	"remessa/sandbox/sandboxtest"
)

// BenchmarkCoreAuthorize: POST /v1/authorize through HTTP on loopback,
// persistence on (a data dir), one client connection reused.
func BenchmarkCoreAuthorize(b *testing.B) {
	rn := sandboxtest.Start(b, sandbox.Config{DataDir: b.TempDir()})
	c := sandboxclient.Client(b, rn, nil)
	ctx := context.Background()
	for b.Loop() {
		if _, err := c.Authorize(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCorePing: an authenticated trivial GET through api.Client
// (token check, faults layer, logging, envelope) — the core's overhead
// per request.
func BenchmarkCorePing(b *testing.B) {
	rn := sandboxtest.Start(b, sandbox.Config{DataDir: b.TempDir()})
	c := sandboxclient.Client(b, rn, nil)
	ctx := context.Background()
	for b.Loop() {
		if _, err := c.Do(ctx, api.V1, "GET", sandboxtest.PingV1, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCorePingParallel is BenchmarkCorePing from GOMAXPROCS*4 goroutines.
func BenchmarkCorePingParallel(b *testing.B) {
	rn := sandboxtest.Start(b, sandbox.Config{DataDir: b.TempDir()})
	c := sandboxclient.Client(b, rn, nil)
	ctx := context.Background()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Do(ctx, api.V1, "GET", sandboxtest.PingV1, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkCorePingRaw is the same GET with net/http only (no api.Client).
func BenchmarkCorePingRaw(b *testing.B) {
	rn := sandboxtest.Start(b, sandbox.Config{DataDir: b.TempDir()})
	tok, err := sandboxclient.Client(b, rn, nil).Authorize(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	req, _ := http.NewRequest("GET", rn.URL+sandboxtest.PingV1, nil)
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	for b.Loop() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"code":200`) {
			b.Fatalf("%d %s", resp.StatusCode, body)
		}
	}
}

// BenchmarkCoreCounterPost: an authenticated POST that commits one store
// transaction (write-through cost with synchronous=NORMAL).
func BenchmarkCoreCounterPost(b *testing.B) {
	rn := sandboxtest.Start(b, sandbox.Config{DataDir: b.TempDir()})
	c := sandboxclient.Client(b, rn, nil)
	ctx := context.Background()
	for b.Loop() {
		if _, err := c.Do(ctx, api.V1, "POST", sandboxtest.CounterV1, nil); err != nil {
			b.Fatal(err)
		}
	}
}
