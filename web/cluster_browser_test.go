package web

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"remessa/internal/pgtest"
)

// TestBrowserCluster shows the pages `remessa web --db` changes in a
// browser, at a laptop's width and a phone's: the new remessa page's note
// on the embedded account, the plan of an embedded remessa (explained,
// no confirm button), and a cluster run's page following its units and
// rows from the database until it ends.
func TestBrowserCluster(t *testing.T) {
	t.Parallel()
	const rows, batch = 400, 50
	dsn := pgtest.DSN(t)
	rn, cl := clusterSandbox(t)
	// slow batch PUTs: the run lasts long enough to be seen under way
	crashSetFaults(t, rn.URL, `{"all":{},"routes":{"PUT /v2/lotecobv/:id":{"latency":"700ms","jitter":"300ms"}}}`)
	srv := startClusterServer(t, dsn, 1)
	setup := login(t, srv, "admin", testAdminPassword)
	acc := clusterAccount(t, setup, rn)

	ctx := newBrowser(t)
	rec := browserErrors(t, ctx)
	browserAcceptLanguage(t, ctx, "pt-BR,pt;q=0.9")
	browserLogin(t, ctx, srv, "admin", adminTestPassword)
	step := func(name string) {
		t.Helper()
		browserBothWidths(t, ctx, "cluster-"+name)
	}

	browserGo(t, ctx, srv.URL+"/remessas/nova")
	if got := browserText(t, ctx, "#cluster-hint"); got != tr("pt", "new.cluster") {
		t.Errorf("new remessa page: the note says %q", got)
	}
	if opt := browserText(t, ctx, "select[name=account] option[value='1']"); !strings.Contains(opt, tr("pt", "new.noembedded")) {
		t.Errorf("the embedded account's option says %q", opt)
	}
	// the account chosen at first is one that can issue with --db
	if opt := browserText(t, ctx, "select[name=account] option:checked"); strings.Contains(opt, tr("pt", "new.noembedded")) {
		t.Errorf("the account chosen at first is the embedded one: %q", opt)
	}
	step("01-nova")

	// an embedded remessa: its plan explains why it cannot be issued
	r := setup.postMultipart("/remessas", url.Values{"kind": {"carnets"}, "account": {"1"}},
		upload{Field: "planilha", Name: "alunos.xlsx", Data: readSample(t, "../samples/escola/alunos.xlsx")})
	base := strings.TrimSuffix(r.URL.Path, "/colunas")
	setup.postForm(base+"/colunas", nil)
	setup.postForm(base+"/configuracao", url.Values{"name": {"Mensalidades"}, "repeats": {"12"}, "due": {"dia 10 do próximo mês"}, "on_invalid": {"stop"}})
	browserGo(t, ctx, srv.URL+base+"/plano")
	if !strings.Contains(browserText(t, ctx, "#sem-cluster"), "não alcançam o serviço embutido") || browserHas(t, ctx, "#confirmar") {
		t.Errorf("the embedded plan with --db: message %q, confirm button %v", browserText(t, ctx, "#sem-cluster"), browserHas(t, ctx, "#confirmar"))
	}
	step("02-plano-embutido")
	browserClick(t, ctx, "main a.btn[href='/remessas/nova']")
	if p := browserPath(t, ctx); p != "/remessas/nova" {
		t.Errorf("the plan's button leads to %s", p)
	}

	// a cluster run on the sandbox account, confirmed in the browser
	sheet, job := clusterCobv("B", rows, batch, rn.PixKey)
	r = setup.postMultipart("/remessas", url.Values{"kind": {"cobv"}, "account": {acc}},
		upload{Field: "planilha", Name: "pagadores.csv", Data: sheet}, upload{Field: "job", Name: "job.yaml", Data: job})
	base = strings.TrimSuffix(r.URL.Path, "/validacao")
	browserGo(t, ctx, srv.URL+base+"/plano")
	if got := browserText(t, ctx, "#cluster"); got != tr("pt", "plan.cluster") {
		t.Errorf("the plan's cluster note says %q", got)
	}
	step("03-plano")
	browserType(t, ctx, "input[name=confirmacao]", fmt.Sprint(rows))
	browserClick(t, ctx, "main form[action$='/executar'] button.btn")
	runPath := browserPath(t, ctx)
	if !strings.HasPrefix(runPath, "/execucoes/") {
		t.Fatalf("after confirming at %s: %s", runPath, browserText(t, ctx, "main"))
	}
	// once the database's counts are stored, a reload shows them, and the
	// event stream moves them
	deadline := testDeadline(t)
	for !strings.Contains(srvProgress(t, srv), `"cluster"`) {
		if time.Now().After(deadline) {
			t.Fatal("no cluster progress stored by the test's deadline")
		}
		time.Sleep(100 * time.Millisecond)
	}
	browserGo(t, ctx, srv.URL+runPath)
	if browserHas(t, ctx, ".badge.done") {
		t.Log("the run ended before the page under way could be shown")
	} else {
		browserWait(t, ctx, "#unidades")
		first := browserText(t, ctx, "[data-k=units]")
		step("04-execucao")
		deadline = testDeadline(t)
		for browserText(t, ctx, "[data-k=units]") == first && !browserHas(t, ctx, ".badge.done") {
			if time.Now().After(deadline) {
				t.Fatalf("the units on the page stayed at %s", first)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitFor := testDeadline(t)
	for !browserHas(t, ctx, ".badge.done") {
		if time.Now().After(waitFor) {
			t.Fatalf("run page not done: %s", browserText(t, ctx, "main"))
		}
		time.Sleep(250 * time.Millisecond)
	}
	browserWait(t, ctx, "#unidades")
	if got, want := browserText(t, ctx, "[data-k=units]"), fmt.Sprintf("%d/%d", rows/batch, rows/batch); got != want {
		t.Errorf("units at the end %q, want %q", got, want)
	}
	if got := browserText(t, ctx, "[data-k=row_states]"); got != fmt.Sprintf("emitidas %d", rows) {
		t.Errorf("rows by state at the end %q", got)
	}
	if got := browserText(t, ctx, "[data-k=done]"); got != fmt.Sprint(rows) {
		t.Errorf("processed at the end %q", got)
	}
	step("05-resultado")
	if n := len(countCobv(t, cl)); n != rows {
		t.Errorf("%d cobv in the sandbox, want %d", n, rows)
	}
	browserCheckConsole(t, rec)
}

// srvProgress is the stored progress of the server's latest run.
func srvProgress(t *testing.T, srv *Server) string {
	t.Helper()
	var p string
	srv.db.QueryRowContext(context.Background(), `SELECT progress FROM runs ORDER BY id DESC LIMIT 1`).Scan(&p)
	return p
}
