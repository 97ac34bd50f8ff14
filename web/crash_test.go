package web

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"remessa/api"
	"remessa/pipeline/cluster"
	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/pipeline/run/runtest"
	"remessa/sandbox"
	_ "remessa/sandbox/all"
)

// TestWebRunSurvivesKill9 is the web app's durability test: a 3,000-row
// cobv remessa is started through HTTP on a real `remessa web` process,
// the process is killed with SIGKILL in the middle of the run, and started
// again on the same data folder. Without any further request the run must
// finish by itself (River job recovered, run resumed through its journal),
// and the embedded sandbox must hold exactly one cobv per row.
func TestWebRunSurvivesKill9(t *testing.T) {
	t.Parallel()
	const rows = 3000
	start := time.Now()
	bin := crashBuildRemessa(t)
	data := t.TempDir()
	pwFile := filepath.Join(t.TempDir(), "senha-admin")
	if err := os.WriteFile(pwFile, []byte(testAdminPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sheet, cents := crashCobvSheet(rows)

	p := crashStartWeb(t, bin, data, pwFile)
	t.Logf("web up after %s", time.Since(start).Round(time.Millisecond))
	// The embedded sandbox starts with the server: slow its batch PUTs
	// and the paged fetch of each batch's charges before the run starts,
	// so the run is killed with its batches in flight.
	var sbURL string
	select {
	case sbURL = <-p.sandboxURL:
	case <-time.After(time.Until(testDeadline(t))):
		t.Fatalf("no \"serviço embutido iniciado\" log line; stderr:\n%s", p.log())
	}
	crashSetFaults(t, sbURL, `{"all":{},"routes":{"PUT /v2/lotecobv/:id":{"latency":"500ms","jitter":"1s"},"GET /v2/cobv":{"latency":"2s","jitter":"2s"}}}`)
	c := crashLogin(t, p.url)
	runPath := crashStartCobvRun(t, c, sheet, rows)
	t.Logf("run %s started after %s", runPath, time.Since(start).Round(time.Millisecond))

	// Kill once the batches are under way (sent or being sent, none
	// fetched yet: a fetch takes at least 2 s), or later if the events
	// only show it then.
	ev := crashWatchProgress(t, c, runPath+"/eventos", func(ev RunEvent) bool {
		return ev.Finished || ev.Progress.Batches > 0 || ev.Progress.Done > 0
	})
	if ev.Finished || ev.Progress.Done >= rows {
		t.Fatalf("the run got to the end before the kill: %+v", ev)
	}
	// let the batch PUTs reach the sandbox (0.5-1.5 s each) while no
	// batch's charges can have been fetched yet (2-4 s each after that)
	time.Sleep(1200 * time.Millisecond)
	p.kill9(t)
	t.Logf("killed with %d/%d rows done (%s) after %s", ev.Progress.Done, ev.Progress.Total, ev.Progress.Phase,
		time.Since(start).Round(time.Millisecond))

	// Same command on the same data: the run goes on by itself.
	p = crashStartWeb(t, bin, data, pwFile)
	c = crashLogin(t, p.url)
	crashWaitDone(t, c, p, runPath)
	t.Logf("run done after the restart, %s in all", time.Since(start).Round(time.Millisecond))
	if !strings.Contains(p.log(), "execução retomada após parada do servidor") {
		t.Errorf("the restart did not log the run's recovery; stderr:\n%s", p.log())
	}
	p.stop(t)

	crashCheckCobvOnce(t, data, rows, cents, start)
	t.Logf("checked in %s", time.Since(start).Round(time.Millisecond))
}

// crashStartCobvRun uploads sheet as a cobv remessa through c, confirms
// it, and returns the run page's path.
func crashStartCobvRun(t *testing.T, c *client, sheet []byte, rows int) string {
	t.Helper()
	r := c.postMultipart("/remessas", url.Values{"kind": {"cobv"}, "account": {"1"}},
		upload{Field: "planilha", Name: "cobrancas.csv", Data: sheet})
	if r.Status != http.StatusOK || !strings.HasSuffix(r.URL.Path, "/colunas") {
		t.Fatalf("upload: %d at %s: %s", r.Status, r.URL.Path, crashSnippet(r.Body))
	}
	if strings.Contains(r.Body, `class="error"`) || !strings.Contains(r.Body, "Vencimento") {
		t.Fatalf("columns page has a problem or lacks the sheet's headers: %s", crashSnippet(r.Body))
	}
	base := strings.TrimSuffix(r.URL.Path, "/colunas")
	r = c.postForm(base+"/colunas", nil)
	if r.Status != http.StatusOK || !strings.HasSuffix(r.URL.Path, "/configuracao") {
		t.Fatalf("columns: %d at %s: %s", r.Status, r.URL.Path, crashSnippet(r.Body))
	}
	r = c.postForm(base+"/configuracao", url.Values{"name": {"Cobranças do mês"}, "chave": {"financeiro@example.com"},
		"on_invalid": {"stop"}})
	if r.Status != http.StatusOK || !strings.HasSuffix(r.URL.Path, "/validacao") {
		t.Fatalf("settings: %d at %s: %s", r.Status, r.URL.Path, crashSnippet(r.Body))
	}
	if !strings.Contains(r.Body, `data-count="refused">0<`) || !strings.Contains(r.Body, fmt.Sprintf(`data-count="rows">%d<`, rows)) {
		t.Fatalf("validation counts wrong: %s", crashSnippet(r.Body))
	}
	r = c.postForm(base+"/executar", nil)
	if r.Status != http.StatusOK || !strings.HasPrefix(r.URL.Path, "/execucoes/") {
		t.Fatalf("confirm: %d at %s: %s", r.Status, r.URL.Path, crashSnippet(r.Body))
	}
	return r.URL.Path
}

// crashWaitDone waits until the test's deadline for the run at runPath to
// be done.
func crashWaitDone(t *testing.T, c *client, p *crashWeb, runPath string) {
	t.Helper()
	deadline := testDeadline(t)
	for {
		r := c.get(runPath)
		if r.Status != http.StatusOK {
			t.Fatalf("run page: %d %s", r.Status, crashSnippet(r.Body))
		}
		if strings.Contains(r.Body, `class="badge done" data-k="status"`) {
			break
		}
		if m := regexp.MustCompile(`class="badge (failed|problems|cancelled)" data-k="status"`).FindStringSubmatch(r.Body); m != nil {
			t.Fatalf("run ended %s after the restart: %s\nstderr:\n%s", m[1], crashSnippet(r.Body), p.log())
		}
		if time.Now().After(deadline) {
			t.Fatalf("run not done at the test's deadline after the restart: %s\nstderr:\n%s", crashSnippet(r.Body), p.log())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// crashCheckCobvOnce checks the run of the desk's data folder data: its
// results have every row issued, and the embedded sandbox holds exactly
// one cobv per row, with the row's value.
func crashCheckCobvOnce(t *testing.T, data string, rows int, cents map[string]int64, start time.Time) {
	t.Helper()
	// The run's results: every row issued, once.
	res := crashResults(t, filepath.Join(data, "execucoes"))
	if !res.Run.Complete || res.Totals.Issued.Rows != rows || len(res.Rows) != rows {
		t.Fatalf("results: complete %v, %d rows, totals %+v", res.Run.Complete, len(res.Rows), res.Totals)
	}
	if ok, why := res.Totals.Reconciles(); !ok {
		t.Errorf("results totals do not reconcile: %s", why)
	}

	// The sandbox, opened on the web's data: exactly one cobv per row,
	// with the row's value.
	srv, err := sandbox.New(sandbox.Config{Addr: "127.0.0.1:0", DataDir: filepath.Join(data, "execucoes", ".sandbox"),
		ClientID: run.EmbeddedClientID, ClientSecret: run.EmbeddedClientSecret})
	if err != nil {
		t.Fatal(err)
	}
	rn, err := srv.Start()
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	defer rn.Close()
	cl, err := api.New(api.Config{BaseURL: rn.URL, PixBaseURL: rn.PixURL, ClientID: run.EmbeddedClientID, ClientSecret: run.EmbeddedClientSecret})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	value := map[string]string{}
	for page := 0; ; page++ {
		lp := api.ListCobVParams{}
		lp.Inicio, lp.Fim = start.Add(-24*time.Hour), time.Now().Add(24*time.Hour)
		lp.PaginaAtual, lp.ItensPorPagina = page, 1000
		pg, err := cl.ListCobV(context.Background(), lp)
		if err != nil {
			t.Fatal(err)
		}
		for _, cob := range pg.Cobs {
			count[cob.Txid]++
			value[cob.Txid] = cob.Valor.Original
		}
		if page+1 >= pg.Parametros.Paginacao.QuantidadeDePaginas {
			break
		}
	}
	if len(count) != rows {
		t.Errorf("%d distinct cobv txids in the sandbox, want %d", len(count), rows)
	}
	for txid, n := range count {
		if n != 1 {
			t.Errorf("txid %s listed %d times", txid, n)
		}
	}
	bad := 0
	for _, row := range res.Rows {
		want := cents[row.Key]
		got := value[row.Txid]
		if row.Outcome != results.Issued || count[row.Txid] != 1 || row.AmountCents != want ||
			got != fmt.Sprintf("%d.%02d", want/100, want%100) {
			if bad++; bad <= 10 {
				t.Errorf("row %s: outcome %s, txid %q in the sandbox %d times with value %q; results %d cents, sheet %d cents",
					row.Key, row.Outcome, row.Txid, count[row.Txid], got, row.AmountCents, want)
			}
		}
	}
	if bad > 10 {
		t.Errorf("... %d rows wrong in all", bad)
	}
}

// crashBuildRemessa builds the remessa command (once per test process).
func crashBuildRemessa(t *testing.T) string { return runtest.Binary(t) }

// crashCobvSheet is a semicolon CSV of n cobv rows (valid CPFs, values
// that differ, due in 30 days) and each row's value in cents by key.
func crashCobvSheet(n int) ([]byte, map[string]int64) {
	var b bytes.Buffer
	b.WriteString("Código;Nome;CPF;Valor;Vencimento\n")
	due := time.Now().AddDate(0, 0, 30).Format("02/01/2006")
	cents := make(map[string]int64, n)
	for i := 0; i < n; i++ {
		key := fmt.Sprintf("C%05d", i+1)
		v := int64(15000 + (i*137)%90000)
		cents[key] = v
		fmt.Fprintf(&b, "%s;Pagador %d;%s;%d,%02d;%s\n", key, i+1, runtest.CPF(fmt.Sprintf("%09d", (100_000_000+i*7919)%1_000_000_000)), v/100, v%100, due)
	}
	return b.Bytes(), cents
}

// crashWeb is `remessa web` running as a child process.
type crashWeb struct {
	cmd        *exec.Cmd
	url        string
	sandboxURL chan string
	done       chan struct{}

	mu     sync.Mutex
	stderr bytes.Buffer
}

func (p *crashWeb) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// crashLines calls fn with each line written to it.
type crashLines struct {
	buf []byte
	fn  func(string)
}

func (w *crashLines) Write(b []byte) (int, error) {
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		w.fn(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
}

var crashURLLine = regexp.MustCompile(`remessa web em (http://\S+)`)

// crashStartWeb starts `remessa web` on data on a free loopback port and
// waits until it says where it listens. The process is killed when the
// test ends.
func crashStartWeb(t *testing.T, bin, data, pwFile string) *crashWeb {
	t.Helper()
	return crashStartWebWith(t, bin, data, pwFile, nil)
}

// crashStartWebWith is crashStartWeb with env added to the process's
// environment and more flags.
func crashStartWebWith(t *testing.T, bin, data, pwFile string, env []string, flags ...string) *crashWeb {
	t.Helper()
	p := &crashWeb{sandboxURL: make(chan string, 1), done: make(chan struct{})}
	urls := make(chan string, 1)
	cmd := exec.Command(bin, append([]string{"web", "--data", data, "--addr", "127.0.0.1:0", "--admin-password-file", pwFile}, flags...)...)
	// the test's environment, without a database URL the test did not ask for
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, cluster.EnvDB+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout = &crashLines{fn: func(l string) {
		if m := crashURLLine.FindStringSubmatch(l); m != nil {
			select {
			case urls <- m[1]:
			default:
			}
		}
	}}
	cmd.Stderr = &crashLines{fn: func(l string) {
		p.mu.Lock()
		p.stderr.WriteString(l + "\n")
		p.mu.Unlock()
		var e struct {
			Message string `json:"message"`
			URL     string `json:"url"`
		}
		if json.Unmarshal([]byte(l), &e) == nil && e.Message == "serviço embutido iniciado" && e.URL != "" {
			select {
			case p.sandboxURL <- e.URL:
			default:
			}
		}
	}}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.cmd = cmd
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
	})
	select {
	case p.url = <-urls:
	case <-p.done:
		t.Fatalf("remessa web ended at start: %v\n%s", cmd.ProcessState, p.log())
	case <-time.After(time.Until(testDeadline(t))):
		t.Fatalf("remessa web did not say where it listens; stderr:\n%s", p.log())
	}
	return p
}

// kill9 kills the process with SIGKILL and waits until it is gone.
func (p *crashWeb) kill9(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
}

// stop ends the process as Ctrl+C does and waits for it.
func (p *crashWeb) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(time.Until(testDeadline(t))):
		t.Fatalf("remessa web did not stop on SIGTERM; stderr:\n%s", p.log())
	}
	if !p.cmd.ProcessState.Success() {
		t.Errorf("remessa web ended %v after SIGTERM; stderr:\n%s", p.cmd.ProcessState, p.log())
	}
}

// crashLogin signs the administrator in on the app at base.
func crashLogin(t *testing.T, base string) *client {
	t.Helper()
	c := newClient(t, &Server{URL: base})
	r := c.get("/entrar")
	m := helperCSRFField.FindStringSubmatch(r.Body)
	if r.Status != http.StatusOK || m == nil {
		t.Fatalf("GET /entrar: %d, token found %v", r.Status, m != nil)
	}
	r = c.send(http.MethodPost, "/entrar", "application/x-www-form-urlencoded",
		strings.NewReader(url.Values{"usuario": {"admin"}, "senha": {testAdminPassword}, "csrf": {m[1]}}.Encode()))
	if r.Status != http.StatusOK || r.URL.Path == "/entrar" || c.csrf == "" {
		t.Fatalf("sign in: %d at %s", r.Status, r.URL.Path)
	}
	return c
}

// crashSetFaults replaces the sandbox's fault configuration.
func crashSetFaults(t testing.TB, sbURL, body string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, sbURL+"/sandbox/faults", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("PUT /sandbox/faults: %d %s", resp.StatusCode, b)
	}
}

// crashWatchProgress reads the run's event stream until an event
// satisfies stop, and returns that event.
func crashWatchProgress(t *testing.T, c *client, path string, stop func(RunEvent) bool) RunEvent {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), testDeadline(t))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Jar: c.http.Jar} // no timeout: a stream
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var last RunEvent
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev RunEvent
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		last = ev
		if stop(ev) {
			return ev
		}
	}
	t.Fatalf("event stream ended (%v) at %+v", sc.Err(), last)
	return last
}

// crashResults loads the results of the only run under runsDir.
func crashResults(t *testing.T, runsDir string) *results.Results {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(runsDir, "*", "results.json"))
	if len(files) != 1 {
		t.Fatalf("%d results.json under %s, want 1", len(files), runsDir)
	}
	res, err := results.Load(files[0])
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func crashSnippet(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "…"
	}
	return s
}
