package web

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape GETs /metrics without a session and parses it with Prometheus'
// own text parser.
func scrape(t *testing.T, srv *Server) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d", resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return mfs
}

// metricValue is the value of name's series whose labels include want
// (0 when there is none).
func metricValue(mfs map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	mf := mfs[name]
	if mf == nil {
		return 0
	}
	var sum float64
	for _, m := range mf.GetMetric() {
		ok := true
		for k, v := range want {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			ok = ok && found
		}
		if !ok {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum
}

func getText(t *testing.T, u string, hdr map[string]string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// TestHealthAndReadiness: /healthz and /readyz answer without a session;
// readiness fails with 503 and a short reason per failing check (not the
// address it tried, not the error) when an account's service is
// unreachable; every answer carries an X-Request-Id, a new one per request
// or the plain one the request came with.
func TestHealthAndReadiness(t *testing.T) {
	srv := startServer(t)
	if st, body, _ := getText(t, srv.URL+"/healthz", nil); st != 200 || body != "ok\n" {
		t.Errorf("healthz: %d %q", st, body)
	}
	st, body, h := getText(t, srv.URL+"/readyz", nil)
	if st != 200 || body != "banco: ok\nfila: ok\nservico: ok\n" {
		t.Errorf("readyz: %d %q", st, body)
	}
	id1 := h.Get("X-Request-Id")
	_, _, h2 := getText(t, srv.URL+"/entrar", nil)
	if id1 == "" || h2.Get("X-Request-Id") == "" || id1 == h2.Get("X-Request-Id") {
		t.Errorf("request ids %q and %q, want two different ones", id1, h2.Get("X-Request-Id"))
	}
	if _, _, h := getText(t, srv.URL+"/entrar", map[string]string{"X-Request-Id": "proxy-42"}); h.Get("X-Request-Id") != "proxy-42" {
		t.Errorf("a proxy's request id came back as %q", h.Get("X-Request-Id"))
	}
	if _, _, h := getText(t, srv.URL+"/entrar", map[string]string{"X-Request-Id": "<script>"}); h.Get("X-Request-Id") == "<script>" {
		t.Error("a request id that is not plain was echoed")
	}

	// an account whose service does not answer: a port nobody listens on
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	if _, err := srv.db.Exec(`INSERT INTO accounts (name, service, base_url, created_at) VALUES ('Banco fora do ar', 'sandbox', ?, ?)`, dead, nowText()); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	st, body, _ = getText(t, srv.URL+"/readyz", nil)
	if st != http.StatusServiceUnavailable || body != "banco: ok\nfila: ok\nservico: o serviço de cobranças de uma conta não responde\n" {
		t.Errorf("readyz with the service down: %d %q", st, body)
	}
	if strings.Contains(body, ln.Addr().String()) || strings.Contains(body, "refused") {
		t.Errorf("readyz shows internals: %q", body)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("readyz took %s", time.Since(start))
	}
}

// lockedBuffer is a log writer the server's goroutines share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// cpfLike matches what a CPF, a CNPJ or a secret looks like in a label.
var cpfLike = regexp.MustCompile(`\d{3}\.?\d{3}\.?\d{3}-?\d{2}|\d{11}|Client_(Id|Secret)|senha|[A-Za-z0-9+/]{32,}`)

// TestMetricsMove: /metrics parses, a wrong password moves the sign-in
// failure counter, and a run of the school's 40 carnets moves the calls
// counter of POST /v1/carnet, its latency histogram, the issued rows and
// the finished runs; no label value looks like a CPF, an id or a secret.
func TestMetricsMove(t *testing.T) {
	var logs lockedBuffer
	srv, err := New(context.Background(), Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), AdminPassword: testAdminPassword, Log: &logs})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		srv.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	before := scrape(t, srv)
	if _, err := tryLogin(t, srv, "admin", "senha-errada"); err == nil {
		t.Fatal("signed in with a wrong password")
	}
	c := login(t, srv, "admin", testAdminPassword)
	mid := scrape(t, srv)
	if got := metricValue(mid, "remessa_web_sign_in_failures_total", map[string]string{"reason": "password"}) -
		metricValue(before, "remessa_web_sign_in_failures_total", map[string]string{"reason": "password"}); got != 1 {
		t.Errorf("sign-in failures moved by %v, want 1", got)
	}
	if got := metricValue(mid, "remessa_web_sessions", nil); got < 1 {
		t.Errorf("active sessions %v, want at least 1", got)
	}

	r := c.postMultipart("/remessas", url.Values{"kind": {"carnets"}, "account": {"1"}},
		upload{Field: "planilha", Name: "alunos.xlsx", Data: readSample(t, "../samples/escola/alunos.xlsx")})
	base := strings.TrimSuffix(r.URL.Path, "/colunas")
	c.postForm(base+"/colunas", nil)
	c.postForm(base+"/configuracao", url.Values{"name": {"Mensalidades 2027"}, "repeats": {"12"}, "due": {"dia 10 do próximo mês"},
		"fine": {"2%"}, "interest": {"0,033%"}, "on_invalid": {"stop"}})
	c.get(base + "/plano")
	// confirmed by a request whose id a proxy gave: the run's log lines name it
	req, _ := http.NewRequest(http.MethodPost, srv.URL+base+"/executar", strings.NewReader(url.Values{"csrf": {c.csrf}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Request-Id", "pedido-teste-77")
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !strings.HasPrefix(resp.Request.URL.Path, "/execucoes/") {
		t.Fatalf("confirm: %d at %s", resp.StatusCode, resp.Request.URL.Path)
	}
	if run := waitRun(t, srv, 1, 120*time.Second); run.Status != "done" {
		t.Fatalf("run ended %s: %s", run.Status, run.Message)
	}
	// the run's last line ("execução parou") is written as its job
	// returns, just after the status the wait above saw: wait for it too
	var started, stopped bool
	for end := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, `"request_id":"pedido-teste-77"`) {
				started = started || strings.Contains(line, "execução começou")
				stopped = stopped || strings.Contains(line, "execução parou")
			}
		}
		if started && stopped || time.Now().After(end) {
			break
		}
	}
	after := scrape(t, srv)
	if !started || !stopped {
		t.Errorf("the run's log lines do not name the request that started it (began %v, ended %v):\n%s", started, stopped, logs.String())
	}
	// a handler's own log line (the backup download's) names its request too
	breq, _ := http.NewRequest(http.MethodPost, srv.URL+"/admin/backup", strings.NewReader(url.Values{"csrf": {c.csrf}}.Encode()))
	breq.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	breq.Header.Set("X-Request-Id", "pedido-backup-9")
	bresp, err := c.http.Do(breq)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, bresp.Body)
	bresp.Body.Close()
	if bresp.StatusCode != http.StatusOK {
		t.Fatalf("backup download: %d", bresp.StatusCode)
	}
	named := false
	for _, line := range strings.Split(logs.String(), "\n") {
		named = named || strings.Contains(line, `"request_id":"pedido-backup-9"`) && strings.Contains(line, "backup baixado")
	}
	if !named {
		t.Errorf("the backup's log line does not name its request:\n%s", logs.String())
	}
	carnet := map[string]string{"api": "v1", "route": "POST /v1/carnet", "status": "200"}
	if got := metricValue(after, "remessa_api_calls_total", carnet) - metricValue(mid, "remessa_api_calls_total", carnet); got != 40 {
		t.Errorf("POST /v1/carnet 200 moved by %v, want 40", got)
	}
	lat := map[string]string{"api": "v1", "route": "POST /v1/carnet"}
	if got := metricValue(after, "remessa_api_call_duration_seconds", lat) - metricValue(mid, "remessa_api_call_duration_seconds", lat); got != 40 {
		t.Errorf("POST /v1/carnet latency observations moved by %v, want 40", got)
	}
	issued := map[string]string{"kind": "carnets", "state": "issued"}
	if got := metricValue(after, "remessa_rows_total", issued) - metricValue(mid, "remessa_rows_total", issued); got != 40 {
		t.Errorf("issued rows moved by %v, want 40", got)
	}
	if got := metricValue(after, "remessa_web_runs", map[string]string{"status": "done"}); got != 1 {
		t.Errorf("runs done %v, want 1", got)
	}
	if after["remessa_river_jobs"] == nil {
		t.Error("no River queue gauge")
	}
	for name, mf := range after {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if cpfLike.MatchString(l.GetValue()) {
					t.Errorf("%s{%s=%q} looks like a CPF, an id or a secret", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
}
