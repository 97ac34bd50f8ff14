package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"remessa/api"
	"remessa/internal/pgtest"
	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/pipeline/run/runtest"
	"remessa/sandbox"
)

// The tests of `remessa web --db` (cluster.go): a web run is a cluster
// run in a throw-away PostgreSQL (internal/pgtest), issued against a
// sandbox of its own (not the web's embedded one) through a web account
// of service "sandbox".

const (
	clusterClientID     = "Client_Id_webcluster"
	clusterClientSecret = "Client_Secret_webcluster"
)

// clusterSandbox starts a sandbox apart from the web's, with the
// application clusterClientID, and returns it with a client of its API.
func clusterSandbox(t *testing.T) (*sandbox.Running, *api.Client) {
	t.Helper()
	srv, err := sandbox.New(sandbox.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), ClientID: clusterClientID, ClientSecret: clusterClientSecret})
	if err != nil {
		t.Fatal(err)
	}
	rn, err := srv.Start()
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { rn.Close(); srv.Close() })
	cl, err := api.New(api.Config{BaseURL: rn.URL, PixBaseURL: rn.PixURL, ClientID: clusterClientID, ClientSecret: clusterClientSecret, MaxRetries: 8})
	if err != nil {
		t.Fatal(err)
	}
	return rn, cl
}

// startClusterServer starts the app with --db dsn on a fresh data folder
// (migratedDataDir).
func startClusterServer(t *testing.T, dsn string, units int) *Server {
	t.Helper()
	srv, err := New(context.Background(), Config{Addr: "127.0.0.1:0", DataDir: migratedDataDir(t), AdminPassword: testAdminPassword,
		DB: dsn, Units: units, UnitTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		srv.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// clusterAccount creates, as admin, the web account of service sandbox
// on rn and returns its id.
func clusterAccount(t *testing.T, admin *client, rn *sandbox.Running) string {
	t.Helper()
	r := admin.postMultipart("/admin/contas", url.Values{"nome": {"Homologação"}, "servico": {"sandbox"}, "base_url": {rn.URL},
		"pix_base_url": {rn.PixURL}, "client_id": {clusterClientID}, "client_secret": {clusterClientSecret}})
	if r.Status != http.StatusOK || r.URL.Query().Get("ok") != "created" {
		t.Fatalf("create the sandbox account: %d at %s\n%s", r.Status, r.URL, crashSnippet(r.Body))
	}
	return strings.TrimPrefix(r.URL.Path, "/admin/contas/")
}

// clusterCobv is a cobv sheet of n rows (keys prefix…, Pix key chave)
// and a job that cuts it into batches of batch rows.
func clusterCobv(prefix string, n, batch int, chave string) (sheet, job []byte) {
	var sb strings.Builder
	sb.WriteString("Código;Nome;CPF;Valor;Chave\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "%s%05d;Pagador %d;%s;%d,%02d;%s\n", prefix, i, i, runtest.CPF(fmt.Sprintf("%09d", 100000000+i*7919)), 100+i%500, i%100, chave)
	}
	j := fmt.Sprintf(`version: 1
name: Web cluster %s
input:
  file: pagadores.csv
  key: Código
issue:
  cobv:
    due: +25d
    chave: "{{ .Chave }}"
    solicitacao: "Associado {{ .Código }}"
    batch: {size: %d}
service: sandbox
concurrency: 8
reports:
  formats: [json, xlsx]
`, prefix, batch)
	return []byte(sb.String()), []byte(j)
}

// clusterConfirm uploads sheet and job on account, checks the plan and
// confirms (an approver typing the count); it returns the run's path.
func clusterConfirm(t *testing.T, c *client, account string, sheet, job []byte, rows int) string {
	t.Helper()
	r := c.postMultipart("/remessas", url.Values{"kind": {"cobv"}, "account": {account}},
		upload{Field: "planilha", Name: "pagadores.csv", Data: sheet}, upload{Field: "job", Name: "job.yaml", Data: job})
	if r.Status != http.StatusOK || !strings.HasSuffix(r.URL.Path, "/validacao") {
		t.Fatalf("upload: %d at %s: %s", r.Status, r.URL.Path, crashSnippet(r.Body))
	}
	if !strings.Contains(r.Body, fmt.Sprintf(`data-count="rows">%d<`, rows)) || !strings.Contains(r.Body, `data-count="refused">0<`) {
		t.Fatalf("validation counts wrong: %s", crashSnippet(r.Body))
	}
	base := strings.TrimSuffix(r.URL.Path, "/validacao")
	r = c.get(base + "/plano")
	if r.Status != http.StatusOK || !strings.Contains(r.Body, `id="cluster"`) || strings.Contains(r.Body, `id="sem-cluster"`) {
		t.Fatalf("plan: %d, want the cluster note: %s", r.Status, crashSnippet(r.Body))
	}
	r = c.postForm(base+"/executar", url.Values{"confirmacao": {strconv.Itoa(rows)}})
	if r.Status != http.StatusOK || !strings.HasPrefix(r.URL.Path, "/execucoes/") {
		t.Fatalf("confirm: %d at %s: %s", r.Status, r.URL.Path, crashSnippet(r.Body))
	}
	return r.URL.Path
}

// countCobv counts each txid of the cobv the sandbox created in the last
// day (the sandbox is the test's own: all of them are the test's).
func countCobv(t *testing.T, cl *api.Client) map[string]int {
	t.Helper()
	count := map[string]int{}
	for page := 0; ; page++ {
		lp := api.ListCobVParams{}
		lp.Inicio, lp.Fim = time.Now().Add(-24*time.Hour), time.Now().Add(24*time.Hour)
		lp.PaginaAtual, lp.ItensPorPagina = page, 1000
		pg, err := cl.ListCobV(context.Background(), lp)
		if err != nil {
			t.Fatal(err)
		}
		for _, cob := range pg.Cobs {
			count[cob.Txid]++
		}
		if page+1 >= pg.Parametros.Paginacao.QuantidadeDePaginas {
			return count
		}
	}
}

// checkOnce fails the test unless the sandbox holds exactly one cobv per
// row of res, every row issued.
func checkOnce(t *testing.T, cl *api.Client, res *results.Results, rows int) {
	t.Helper()
	count := countCobv(t, cl)
	if len(count) != rows {
		t.Errorf("%d distinct cobv in the sandbox, want %d", len(count), rows)
	}
	for txid, n := range count {
		if n != 1 {
			t.Errorf("txid %s listed %d times", txid, n)
		}
	}
	if res.Totals.Issued.Rows != rows || len(res.Rows) != rows || !res.Run.Complete {
		t.Fatalf("results: complete %v, %d rows, %d issued", res.Run.Complete, len(res.Rows), res.Totals.Issued.Rows)
	}
	for _, row := range res.Rows {
		if row.Outcome != results.Issued || count[row.Txid] != 1 {
			t.Fatalf("row %s: %s, txid %q in the sandbox %d times", row.Key, row.Outcome, row.Txid, count[row.Txid])
		}
	}
}

// clusterRuns lists the run ids of the database's runs index.
func clusterRuns(t *testing.T, dsn string) []string {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), `SELECT run_id FROM remessa_runs ORDER BY run_id`)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestWebClusterRun: with --db, a remessa confirmed on the web is a
// cluster run that the server's own unit worker finishes alone: every
// row issued once on the separate sandbox, the run page showing the
// units and rows as the database has them, the results downloadable and
// in the database's runs index, which a second web on the same database
// consults when the same sheet is planned again.
func TestWebClusterRun(t *testing.T) {
	t.Parallel()
	const rows, batch = 500, 100
	start := time.Now()
	dsn := pgtest.DSN(t)
	rn, cl := clusterSandbox(t)
	srv := startClusterServer(t, dsn, 2)
	admin := login(t, srv, "admin", testAdminPassword)
	acc := clusterAccount(t, admin, rn)
	sheet, job := clusterCobv("W", rows, batch, rn.PixKey)
	runPath := clusterConfirm(t, admin, acc, sheet, job, rows)
	id, _ := strconv.ParseInt(strings.TrimPrefix(runPath, "/execucoes/"), 10, 64)

	// the event stream carries the database's counts while the run goes
	ev := crashWatchProgress(t, admin, runPath+"/eventos", func(ev RunEvent) bool { return ev.Progress.Cluster != nil || ev.Finished })
	if ev.Progress.Cluster == nil || ev.Progress.Cluster.Units != rows/batch {
		t.Errorf("first event with the cluster's progress: %+v (cluster %+v), want %d units", ev, ev.Progress.Cluster, rows/batch)
	}
	rec := waitRun(t, srv, id, 3*time.Minute)
	if rec.Status != "done" {
		t.Fatalf("run ended %s: %s", rec.Status, rec.Message)
	}
	t.Logf("run done %s after the start", time.Since(start).Round(time.Millisecond))
	if !rec.Cluster || rec.Units != rows/batch || rec.HandedAt == "" {
		t.Errorf("the web's record of the handoff: cluster %v, units %d, handed at %q", rec.Cluster, rec.Units, rec.HandedAt)
	}

	r := admin.get(runPath)
	for _, want := range []string{`id="unidades"`, fmt.Sprintf(`data-k="units">%d/%d<`, rows/batch, rows/batch), `data-k="units_failed">0<`,
		fmt.Sprintf(`>emitidas %d</span>`, rows), `data-labels="{&#34;ambiguous&#34;:&#34;incertas&#34;`, `class="badge done" data-k="status"`, "Execução distribuída (PostgreSQL)"} {
		if !strings.Contains(r.Body, want) {
			t.Errorf("run page lacks %s", want)
		}
	}
	r = admin.get(runPath + "/arquivos/results.json")
	var res results.Results
	if r.Status != http.StatusOK || json.Unmarshal([]byte(r.Body), &res) != nil {
		t.Fatalf("results.json download: %d %s", r.Status, crashSnippet(r.Body))
	}
	checkOnce(t, cl, &res, rows)
	if r := admin.get(runPath + "/arquivos/relatorio.xlsx"); r.Status != http.StatusOK || !strings.HasPrefix(r.Body, "PK") {
		t.Errorf("relatorio.xlsx download: %d", r.Status)
	}

	// `remessa status --db` sees the same run, every unit completed
	st, err := run.ClusterStatus(context.Background(), dsn, rec.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 1 || st[0].Units.Completed != rows/batch || st[0].States["issued"] != rows || st[0].FinishedAt == nil || st[0].Dir != rec.Dir {
		t.Errorf("status --db: %+v", st)
	}

	// a second web on the same database: its plan of the same sheet says
	// the database ran it (its own runs folder knows nothing of it), and
	// the run is refused without "emitir mesmo assim"
	srv2 := startClusterServer(t, dsn, 1)
	admin2 := login(t, srv2, "admin", testAdminPassword)
	acc2 := clusterAccount(t, admin2, rn)
	r = admin2.postMultipart("/remessas", url.Values{"kind": {"cobv"}, "account": {acc2}},
		upload{Field: "planilha", Name: "pagadores.csv", Data: sheet}, upload{Field: "job", Name: "job.yaml", Data: job})
	base := strings.TrimSuffix(r.URL.Path, "/validacao")
	r = admin2.get(base + "/plano")
	if !strings.Contains(r.Body, "já rodou com esta mesma planilha na execução "+rec.RunID) || !strings.Contains(r.Body, `name="novamente"`) {
		t.Errorf("the second web's plan does not name the database's earlier run %s: %s", rec.RunID, crashSnippet(r.Body))
	}
	if strings.Contains(r.Body, pgPassword(dsn)) && pgPassword(dsn) != "" {
		t.Errorf("the plan shows the database password")
	}
	if r = admin2.postForm(base+"/executar", url.Values{"confirmacao": {strconv.Itoa(rows)}}); !strings.HasPrefix(r.URL.Path, "/execucoes/") {
		t.Fatalf("confirm on the second web: %d at %s", r.Status, r.URL.Path)
	}
	rec2 := waitRun(t, srv2, 1, time.Minute)
	if rec2.Status != "failed" || !strings.Contains(rec2.Message, rec.RunID) {
		t.Errorf("the same sheet again on the second web: %s %q, want failed naming %s", rec2.Status, rec2.Message, rec.RunID)
	}
	if ids := clusterRuns(t, dsn); len(ids) != 1 {
		t.Errorf("runs in the database's index: %v, want 1", ids)
	}
	if n := len(countCobv(t, cl)); n != rows {
		t.Errorf("%d cobv in the sandbox after the refused repeat, want %d", n, rows)
	}
	t.Logf("checked %s after the start", time.Since(start).Round(time.Millisecond))
}

func pgPassword(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return ""
	}
	pw, _ := u.User.Password()
	return pw
}

// TestWebClusterEmbeddedRefused: with --db, the embedded account cannot
// issue (workers on other machines would not reach this server's
// sandbox): the new remessa page says so, the plan page explains it
// without a confirm button, and a confirm posted anyway is refused.
func TestWebClusterEmbeddedRefused(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	srv := startClusterServer(t, dsn, -1)
	c := login(t, srv, "admin", testAdminPassword)
	if r := c.get("/remessas/nova"); !strings.Contains(r.Body, `id="cluster-hint"`) {
		t.Errorf("the new remessa page does not say the embedded account does not issue with --db")
	}
	r := c.postMultipart("/remessas", url.Values{"kind": {"carnets"}, "account": {"1"}},
		upload{Field: "planilha", Name: "alunos.xlsx", Data: readSample(t, "../samples/escola/alunos.xlsx")})
	base := strings.TrimSuffix(r.URL.Path, "/colunas")
	c.postForm(base+"/colunas", nil)
	c.postForm(base+"/configuracao", url.Values{"name": {"Mensalidades"}, "repeats": {"12"}, "due": {"dia 10 do próximo mês"}, "on_invalid": {"stop"}})
	r = c.get(base + "/plano")
	if r.Status != http.StatusOK || !strings.Contains(r.Body, `id="sem-cluster"`) || strings.Contains(r.Body, `id="confirmar"`) {
		t.Fatalf("plan on the embedded account with --db: %d, want the explanation and no confirm button: %s", r.Status, crashSnippet(r.Body))
	}
	r = c.postForm(base+"/executar", nil)
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "não alcançam o serviço embutido") {
		t.Fatalf("confirm on the embedded account with --db: %d %s", r.Status, crashSnippet(r.Body))
	}
	var n int
	srv.db.QueryRow(`SELECT count(*) FROM runs`).Scan(&n)
	if n != 0 {
		t.Errorf("%d runs recorded, want none", n)
	}
}

// TestWebClusterSharedWithWorker: a `remessa worker` process on the same
// database shares a web run's units with the web's own worker; every row
// is issued once.
func TestWebClusterSharedWithWorker(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary and runs a worker process; skipped with -short")
	}
	const rows, batch = 600, 50
	start := time.Now()
	dsn := pgtest.DSN(t)
	bin := runtest.Binary(t)
	rn, cl := clusterSandbox(t)
	// each batch PUT takes a while, so neither worker takes every unit
	crashSetFaults(t, rn.URL, `{"all":{},"routes":{"PUT /v2/lotecobv/:id":{"latency":"400ms","jitter":"200ms"}}}`)
	srv := startClusterServer(t, dsn, 1)
	logs := t.TempDir()
	cmd := exec.Command(bin, "worker", "--db", dsn, "--units", "1", "--unit-timeout", "10s", "--log-dir", logs)
	cmd.Env = append(os.Environ(), "REMESSA_CLIENT_ID="+clusterClientID, "REMESSA_CLIENT_SECRET="+clusterClientSecret)
	var wout strings.Builder
	cmd.Stdout, cmd.Stderr = &crashLines{fn: func(l string) {}}, &crashLines{fn: func(l string) { wout.WriteString(l + "\n") }}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })

	admin := login(t, srv, "admin", testAdminPassword)
	acc := clusterAccount(t, admin, rn)
	sheet, job := clusterCobv("S", rows, batch, rn.PixKey)
	runPath := clusterConfirm(t, admin, acc, sheet, job, rows)
	id, _ := strconv.ParseInt(strings.TrimPrefix(runPath, "/execucoes/"), 10, 64)
	rec := waitRun(t, srv, id, 3*time.Minute)
	if rec.Status != "done" {
		t.Fatalf("run ended %s: %s", rec.Status, rec.Message)
	}
	t.Logf("run done %s after the start", time.Since(start).Round(time.Millisecond))
	cmd.Process.Signal(os.Interrupt)
	<-done
	res, err := results.Load(filepath.Join(rec.Dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkOnce(t, cl, res, rows)
	// who finished which unit: the worker says so; River records the
	// client of each attempt (the web's and the worker's differ)
	byWorker := map[string]bool{}
	for _, m := range regexp.MustCompile(`unidade (\d+) de \S+: concluída`).FindAllStringSubmatch(wout.String(), -1) {
		byWorker[m[1]] = true
	}
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var clients, completed int
	if err := conn.QueryRow(context.Background(), `SELECT count(DISTINCT attempted_by[array_length(attempted_by, 1)]), count(*) FROM river_job
		WHERE kind = 'remessa_unidade' AND state = 'completed'`).Scan(&clients, &completed); err != nil {
		t.Fatal(err)
	}
	t.Logf("units finished by the worker: %d of %d; River clients that finished units: %d", len(byWorker), completed, clients)
	if completed != rows/batch || len(byWorker) == 0 || len(byWorker) == rows/batch || clients != 2 {
		t.Errorf("the units were not shared: %d completed, the worker finished %d, by %d clients\nworker:\n%s", completed, len(byWorker), clients, wout.String())
	}
}

// TestWebClusterCancelResume: Cancelar on a cluster run cancels its
// units (the run ends cancelled with rows still pending, the units
// counted as given up), and Retomar enqueues them again: the run ends
// done with every row issued exactly once.
func TestWebClusterCancelResume(t *testing.T) {
	t.Parallel()
	const rows, batch = 400, 50
	dsn := pgtest.DSN(t)
	rn, cl := clusterSandbox(t)
	crashSetFaults(t, rn.URL, `{"all":{},"routes":{"PUT /v2/lotecobv/:id":{"latency":"800ms","jitter":"200ms"}}}`)
	srv := startClusterServer(t, dsn, 1)
	admin := login(t, srv, "admin", testAdminPassword)
	acc := clusterAccount(t, admin, rn)
	sheet, job := clusterCobv("C", rows, batch, rn.PixKey)
	runPath := clusterConfirm(t, admin, acc, sheet, job, rows)
	id, _ := strconv.ParseInt(strings.TrimPrefix(runPath, "/execucoes/"), 10, 64)
	crashWatchProgress(t, admin, runPath+"/eventos", func(ev RunEvent) bool {
		return ev.Finished || (ev.Progress.Cluster != nil && ev.Progress.Cluster.Completed >= 1)
	})
	if r := admin.postForm(runPath+"/cancelar", nil); r.Status != http.StatusOK {
		t.Fatalf("cancel: %d %s", r.Status, crashSnippet(r.Body))
	}
	rec := waitRun(t, srv, id, time.Minute)
	var p Progress
	json.Unmarshal([]byte(rec.Progress), &p)
	if rec.Status != "cancelled" || p.Cluster == nil || p.Cluster.Failed == 0 || p.Cluster.Completed == p.Cluster.Units {
		t.Fatalf("after Cancelar: %s %q, units %+v", rec.Status, rec.Message, p.Cluster)
	}
	issued := len(countCobv(t, cl))
	t.Logf("cancelled with %d of %d units done, %d cobv issued", p.Cluster.Completed, p.Cluster.Units, issued)
	if issued >= rows {
		t.Fatalf("%d cobv issued before the cancel took effect: nothing was left to cancel", issued)
	}
	if r := admin.postForm(runPath+"/retomar", nil); r.Status != http.StatusOK {
		t.Fatalf("resume: %d %s", r.Status, crashSnippet(r.Body))
	}
	rec = waitRun(t, srv, id, 2*time.Minute)
	if rec.Status != "done" {
		t.Fatalf("after Retomar: %s %q", rec.Status, rec.Message)
	}
	json.Unmarshal([]byte(rec.Progress), &p)
	if p.Cluster == nil || p.Cluster.Completed != rows/batch || p.Cluster.Failed != 0 || p.Cluster.Units != rows/batch {
		t.Errorf("units after Retomar: %+v", p.Cluster)
	}
	res, err := results.Load(filepath.Join(rec.Dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkOnce(t, cl, res, rows)
}
