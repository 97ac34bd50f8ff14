package listen_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"remessa/pipeline/listen"
	"remessa/pipeline/run"
)

func counter(t *testing.T, base, name string, labels map[string]string) float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	var sum float64
	for _, m := range mfs[name].GetMetric() {
		if hasLabels(m, labels) {
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	for k, v := range want {
		found := false
		for _, l := range m.GetLabel() {
			found = found || l.GetName() == k && l.GetValue() == v
		}
		if !found {
			return false
		}
	}
	return true
}

// TestListenHealthAndMetrics: the listener answers /healthz; /readyz says
// 503 with a short reason when the service it reads tokens from does not
// answer; a notification kept moves the received counter, and working it
// (the service down) the failed one.
func TestListenHealthAndMetrics(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	s := serve(t, "", listen.Options{RunsDir: t.TempDir(), Run: run.Options{BaseURL: dead, Getenv: noEnv}})
	get := func(path string) (int, string) {
		resp, err := http.Get(s.URL + path)
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
	if st, body := get("/readyz"); st != 503 || body != "banco: ok\nservico: o serviço de cobranças não responde\n" {
		t.Errorf("readyz with the service down: %d %q", st, body)
	}
	recv := map[string]string{"source": "charges"}
	before := counter(t, s.URL, "remessa_notifications_received_total", recv)
	postToken(t, s.URL+"/notificacao", "tok-metricas-1")
	if got := counter(t, s.URL, "remessa_notifications_received_total", recv) - before; got != 1 {
		t.Errorf("received moved by %v, want 1", got)
	}
	failed := map[string]string{"source": "charges", "outcome": "failed"}
	unknown := map[string]string{"source": "charges", "outcome": "unknown"}
	fb, ub := counter(t, s.URL, "remessa_notifications_applied_total", failed), counter(t, s.URL, "remessa_notifications_applied_total", unknown)
	s.L.Drain(context.Background())
	if got := counter(t, s.URL, "remessa_notifications_applied_total", failed) - fb + counter(t, s.URL, "remessa_notifications_applied_total", unknown) - ub; got != 1 {
		t.Errorf("worked notifications moved by %v, want 1", got)
	}
}
