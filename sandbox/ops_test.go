package sandbox_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"remessa/sandbox"
	"remessa/sandbox/sandboxtest"
)

// TestSandboxHealthAndMetrics: a running sandbox answers /healthz, /readyz
// (its store answers) and /metrics (parsed by Prometheus' parser) on its
// main address, without a token.
func TestSandboxHealthAndMetrics(t *testing.T) {
	rn := sandboxtest.Start(t, sandbox.Config{})
	get := func(path string) (int, string) {
		resp, err := http.Get(rn.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if st, body := get("/healthz"); st != 200 || body != "ok\n" {
		t.Errorf("healthz: %d %q", st, body)
	}
	if st, body := get("/readyz"); st != 200 || body != "banco: ok\n" {
		t.Errorf("readyz: %d %q", st, body)
	}
	resp, err := http.Get(rn.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/metrics: %d %v", resp.StatusCode, err)
	}
	if mfs["go_goroutines"] == nil {
		t.Errorf("/metrics lacks the Go runtime's metrics: %d families", len(mfs))
	}
}
