package web

import (
	"context"
	"path/filepath"

	"net/http"
	"net/url"
	"os"
	"remessa/pipeline/results"
	"remessa/rules"
	"remessa/sandbox/control"
	"strings"
	"testing"
	"time"
)

// waitRun waits until run id ends and returns it. It logs when the
// run's status and progress stay the same for within (a run that stopped
// moving, or a machine busy with the tests running in parallel) and fails
// at the test's deadline: a run is given the time it takes. It reads the
// run again when the server publishes a change of it (its event stream's
// hub) and at least every half second, not every few milliseconds: each
// read is a query of web.db, CPU the run under test shares.
func waitRun(t testing.TB, srv *Server, id int64, within time.Duration) *runRecord {
	t.Helper()
	end := testDeadline(t)
	still := time.Now().Add(within)
	var last string
	logged := false
	events, unsubscribe := srv.hub.subscribe(id)
	defer unsubscribe()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		r, err := srv.loadRun(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if runFinished(r.Status) {
			return r
		}
		if now := r.Status + "\x00" + r.Progress; now != last {
			last, still, logged = now, time.Now().Add(within), false
		}
		if !logged && time.Now().After(still) {
			t.Logf("run %d still %s after %s without progress (a busy machine?): %s", id, r.Status, within, r.Message)
			logged = true
		}
		if time.Now().After(end) {
			t.Fatalf("run %d still %s at the test's deadline (progress %s): %s", id, r.Status, r.Progress, r.Message)
		}
		select {
		case _, ok := <-events:
			if !ok {
				events = nil // the server closed its hub: the ticker alone
			}
		case <-tick.C:
		}
	}
}

func readSample(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFlowCarnetsHTTP goes through the whole remessa flow without a
// browser: upload the school's sheet, keep the matched columns, set the
// carnets, validate, plan, run on the embedded service, and fetch a PDF.
func TestFlowCarnetsHTTP(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := login(t, srv, "admin", testAdminPassword)
	r := c.postMultipart("/remessas", url.Values{"kind": {"carnets"}, "account": {"1"}},
		upload{Field: "planilha", Name: "alunos.xlsx", Data: readSample(t, "../samples/escola/alunos.xlsx")})
	if r.Status != http.StatusOK || !strings.HasSuffix(r.URL.Path, "/colunas") {
		t.Fatalf("upload: %d at %s: %s", r.Status, r.URL.Path, r.Body)
	}
	for _, want := range []string{"Responsável", "Mensalidade", "Matrícula"} {
		if !strings.Contains(r.Body, want) {
			t.Errorf("columns page lacks header %q", want)
		}
	}
	base := strings.TrimSuffix(r.URL.Path, "/colunas")
	r = c.postForm(base+"/colunas", nil)
	if r.Status != http.StatusOK || !strings.HasSuffix(r.URL.Path, "/configuracao") {
		t.Fatalf("columns: %d at %s", r.Status, r.URL.Path)
	}
	r = c.postForm(base+"/configuracao", url.Values{"name": {"Mensalidades 2027"}, "repeats": {"12"}, "due": {"dia 10 do próximo mês"},
		"fine": {"2%"}, "interest": {"0,033%"}, "on_invalid": {"stop"}})
	if r.Status != http.StatusOK || !strings.HasSuffix(r.URL.Path, "/validacao") {
		t.Fatalf("settings: %d at %s: %s", r.Status, r.URL.Path, r.Body)
	}
	if !strings.Contains(r.Body, `data-count="refused">0<`) || !strings.Contains(r.Body, `data-count="rows">40<`) {
		t.Fatalf("validation counts wrong: %s", r.Body)
	}
	r = c.get(base + "/plano")
	if r.Status != http.StatusOK || !strings.Contains(r.Body, `data-count="accepted">40<`) {
		t.Fatalf("plan: %d %s", r.Status, r.Body)
	}
	r = c.postForm(base+"/executar", nil)
	if r.Status != http.StatusOK || !strings.HasPrefix(r.URL.Path, "/execucoes/") {
		t.Fatalf("confirm: %d at %s: %s", r.Status, r.URL.Path, r.Body)
	}
	run := waitRun(t, srv, 1, 90*time.Second)
	if run.Status != "done" {
		t.Fatalf("run ended %s: %s", run.Status, run.Message)
	}
	r = c.get("/execucoes/1")
	if !strings.Contains(r.Body, "/execucoes/1/documento/0") || !strings.Contains(r.Body, "relatorio.xlsx") {
		t.Fatalf("results page lacks the documents or downloads")
	}
	r = c.get("/execucoes/1/documento/0")
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Body, "%PDF") {
		t.Fatalf("carnet PDF: %d %q", r.Status, r.Body[:min(40, len(r.Body))])
	}

	// a parcel paid at the sandbox shows after "Atualizar situação"
	res, err := results.Load(filepath.Join(run.Dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	rn, err := srv.embedded()
	if err != nil {
		t.Fatal(err)
	}
	v := res.Rows[0].Parcels[0].ValueCents
	if _, err := sandboxControl(t, rn.URL).PayParcel(context.Background(), res.Rows[0].CarnetID, 1, control.PayRequest{Value: &v}, rn.PayeeCode); err != nil {
		t.Fatal(err)
	}
	r = c.postForm("/execucoes/1/situacao", nil)
	if r.Status != http.StatusOK || !strings.Contains(r.Body, "Totais conferem ao centavo") {
		t.Fatalf("refresh: %d", r.Status)
	}
	if want := `data-sit="received">` + rules.FormatBRL(v) + `<`; !strings.Contains(r.Body, want) {
		t.Fatalf("the run page should show %s received", rules.FormatBRL(v))
	}
	if !strings.Contains(r.Body, "/execucoes/1/arquivos/conciliacao.xlsx") {
		t.Errorf("the reconciliation is not offered for download")
	}
}
