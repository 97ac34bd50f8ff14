package web

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"remessa/api"
	"remessa/pipeline/run"
)

// newCarnetDraft uploads the school's sheet as carnets and returns the
// remessa's base path (/remessas/N) after the columns step.
func newCarnetDraft(t *testing.T, c *client, sheet []byte) string {
	t.Helper()
	r := c.postMultipart("/remessas", url.Values{"kind": {"carnets"}, "account": {"1"}},
		upload{Field: "planilha", Name: "Alunos 2027.xlsx", Data: sheet})
	if r.Status != http.StatusOK || !strings.HasSuffix(r.URL.Path, "/colunas") {
		t.Fatalf("upload: %d at %s", r.Status, r.URL.Path)
	}
	base := strings.TrimSuffix(r.URL.Path, "/colunas")
	if r = c.postForm(base+"/colunas", nil); r.Status != http.StatusOK {
		t.Fatalf("columns: %d", r.Status)
	}
	return base
}

// TestJobDownloadRunsWithRemessaRun: the job.yaml the settings page gives,
// beside the sheet under the name the user uploaded, runs with the CLI's
// engine (run.Run, what `remessa run` calls) unchanged.
func TestJobDownloadRunsWithRemessaRun(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := login(t, srv, "admin", testAdminPassword)
	sheet := readSample(t, "../samples/escola/alunos.xlsx")
	base := newCarnetDraft(t, c, sheet)
	r := c.postForm(base+"/configuracao", url.Values{"name": {"Mensalidades"}, "repeats": {"3"}, "due": {"dia 5 do próximo mês"},
		"fine": {"2%"}, "interest": {"0,033%"}, "discount_type": {"percentage"}, "discount_value": {"5%"}, "discount_days": {"5"},
		"message": {"Após o vencimento, multa de 2%."}, "on_invalid": {"stop"}})
	if !strings.HasSuffix(r.URL.Path, "/validacao") {
		t.Fatalf("settings refused: %s", r.Body)
	}
	r = c.get(base + "/job.yaml")
	if r.Status != http.StatusOK || !strings.Contains(r.Body, "file: Alunos 2027.xlsx") {
		t.Fatalf("job.yaml (%d) should read the sheet by the user's name:\n%s", r.Status, r.Body)
	}
	dir := t.TempDir()
	jobPath := filepath.Join(dir, "job.yaml")
	os.WriteFile(jobPath, []byte(r.Body), 0o644)
	os.WriteFile(filepath.Join(dir, "Alunos 2027.xlsx"), sheet, 0o644)
	out, err := run.Run(context.Background(), jobPath, run.Options{RunsDir: filepath.Join(dir, "out"), SandboxDir: filepath.Join(dir, "sb")})
	if err != nil {
		t.Fatalf("remessa run on the downloaded job: %v", err)
	}
	if out.ExitCode() != 0 || out.Results.Totals.Issued.Rows != 40 {
		t.Fatalf("run: exit %d, %d issued", out.ExitCode(), out.Results.Totals.Issued.Rows)
	}
	res, err := out.LoadResults()
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range res.Rows {
		if len(row.Parcels) != 3 {
			t.Fatalf("row %d has %d parcels, want the form's 3", row.SourceRow, len(row.Parcels))
		}
	}
}

// TestSettingsErrorsAtTheirFields: the job loader's messages come back next
// to the field they are about, with the typed value kept.
func TestSettingsErrorsAtTheirFields(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := login(t, srv, "admin", testAdminPassword)
	base := newCarnetDraft(t, c, readSample(t, "../samples/escola/alunos.xlsx"))
	r := c.postForm(base+"/configuracao", url.Values{"name": {"X"}, "repeats": {"13"}, "fine": {"25%"}, "due": {"dia 40 do mês"}, "on_invalid": {"stop"}})
	if r.Status != http.StatusBadRequest || !strings.HasSuffix(r.URL.Path, "/configuracao") {
		t.Fatalf("bad settings: %d at %s", r.Status, r.URL.Path)
	}
	for _, field := range []string{"repeats", "fine", "due"} {
		re := regexp.MustCompile(`(?s)name="` + field + `"[^>]*>.{0,200}?class="field-error"`)
		if !re.MatchString(r.Body) {
			t.Errorf("no message next to field %s", field)
		}
	}
	if !strings.Contains(r.Body, `name="repeats" value="13"`) {
		t.Errorf("the typed value 13 was not kept")
	}
}

// TestUploadRefusals: what is not a sheet is refused with a page saying
// why (400), and nothing of it stays.
func TestUploadRefusals(t *testing.T) {
	t.Parallel()
	srv, err := New(context.Background(), Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), AdminPassword: testAdminPassword, MaxUpload: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	defer srv.Close()
	c := login(t, srv, "admin", testAdminPassword)
	cases := []struct {
		name, file string
		data       []byte
		want       string
	}{
		{"binary", "planilha.csv", append([]byte("Nome;CPF\n"), 0, 1, 2, 3, 0xff, 0), "conteúdo binário"},
		{"old xls", "planilha.xls", []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1, 0, 0}, "Excel antigo"},
		{"pdf", "planilha.xlsx", []byte("%PDF-1.4\n..."), "PDF"},
		{"empty", "planilha.csv", nil, "vazio"},
		{"too big", "planilha.csv", bytes.Repeat([]byte("a;b\n"), 40<<10), "limite"},
		{"zip that is no workbook", "planilha.xlsx", []byte("PK\x03\x04garbage"), ""},
	}
	for _, tc := range cases {
		r := c.postMultipart("/remessas", url.Values{"kind": {"boletos"}, "account": {"1"}}, upload{Field: "planilha", Name: tc.file, Data: tc.data})
		if tc.want != "" {
			if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, tc.want) {
				t.Errorf("%s: %d, page should say %q", tc.name, r.Status, tc.want)
			}
			continue
		}
		// a broken workbook is taken as an upload and its problem shown on the columns page
		if r.Status >= 500 || !strings.Contains(r.Body, `class="error"`) {
			t.Errorf("%s: %d without an error message", tc.name, r.Status)
		}
	}
	var n int
	srv.db.QueryRow(`SELECT count(*) FROM drafts`).Scan(&n)
	if n != 1 {
		t.Errorf("%d remessas kept, want only the broken workbook's", n)
	}
	if r := c.postMultipart("/remessas", url.Values{"kind": {"nada"}, "account": {"1"}}, upload{Field: "planilha", Name: "a.csv", Data: []byte("a;b\n1;2\n")}); r.Status != http.StatusBadRequest {
		t.Errorf("unknown kind: %d", r.Status)
	}
	if r := c.postMultipart("/remessas", url.Values{"kind": {"cobv"}, "account": {"99"}}, upload{Field: "planilha", Name: "a.csv", Data: []byte("a;b\n1;2\n")}); r.Status != http.StatusBadRequest {
		t.Errorf("unknown account: %d", r.Status)
	}
}

// TestCancelAndResume: a run cancelled from its page stops after the calls
// in flight, and resumed it ends with exactly one carnet per row.
func TestCancelAndResume(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := login(t, srv, "admin", testAdminPassword)
	base := newCarnetDraft(t, c, readSample(t, "../samples/escola/alunos.xlsx"))
	r := c.postForm(base+"/configuracao", url.Values{"name": {"Cancelável"}, "repeats": {"2"}, "due": {"dia 10 do próximo mês"}, "on_invalid": {"stop"}})
	if !strings.HasSuffix(r.URL.Path, "/validacao") {
		t.Fatalf("settings: %s", r.Body)
	}
	rn, err := srv.embedded()
	if err != nil {
		t.Fatal(err)
	}
	// 400 ms a carnet, 4 at a time: the run lasts about 4 s, so the
	// cancel lands in its middle even with other tests on the cores
	crashSetFaults(t, rn.URL, `{"all":{},"routes":{"POST /v1/carnet":{"latency":"400ms"}}}`)
	r = c.postForm(base+"/executar", nil)
	if !strings.HasPrefix(r.URL.Path, "/execucoes/") {
		t.Fatalf("confirm: %d at %s", r.Status, r.URL.Path)
	}
	runPath := r.URL.Path
	ev := crashWatchProgress(t, c, runPath+"/eventos", func(e RunEvent) bool { return e.Progress.Done >= 4 })
	if ev.Finished {
		t.Fatalf("the run ended before it could be cancelled")
	}
	c.postForm(runPath+"/cancelar", nil)
	rec := waitRun(t, srv, 1, 30*time.Second)
	if rec.Status != "cancelled" {
		t.Fatalf("after cancel: %s %s", rec.Status, rec.Message)
	}
	var p Progress
	jsonUnmarshal(rec.Progress, &p)
	if p.Done >= 40 {
		t.Fatalf("cancel came too late: %d of 40 done", p.Done)
	}
	crashSetFaults(t, rn.URL, `{"all":{}}`)
	if r := c.postForm(runPath+"/retomar", nil); r.Status != http.StatusOK {
		t.Fatalf("resume: %d", r.Status)
	}
	rec = waitRun(t, srv, 1, 60*time.Second)
	if rec.Status != "done" {
		t.Fatalf("after resume: %s %s", rec.Status, rec.Message)
	}
	cl, err := api.New(api.Config{BaseURL: rn.URL, PixBaseURL: rn.PixURL, ClientID: run.EmbeddedClientID, ClientSecret: run.EmbeddedClientSecret})
	if err != nil {
		t.Fatal(err)
	}
	// the sandbox holds two parcels per carnet, each once
	list, err := cl.ListCharges(context.Background(), api.ChargeListQuery{ChargeType: "carnet", BeginDate: time.Now().AddDate(0, 0, -1).Format("2006-01-02"),
		EndDate: time.Now().AddDate(0, 0, 1).Format("2006-01-02"), Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if got := list.Params.Pagination.Total; got != 80 && len(list.Data) != 80 {
		t.Fatalf("the sandbox holds %d charges (%d listed), want 80: 40 carnets of 2 parcels, none twice", got, len(list.Data))
	}
	tot, rows, n, err := readResultsPage(filepath.Join(rec.Dir, "results.json"), 0, 100)
	if err != nil || n != 40 || tot.Issued.Rows != 40 {
		t.Fatalf("results: %v, %d rows, %d issued", err, n, tot.Issued.Rows)
	}
	seen := map[int64]bool{}
	for _, row := range rows {
		if row.CarnetID == 0 || seen[row.CarnetID] {
			t.Fatalf("row %d: carnet %d missing or repeated", row.SourceRow, row.CarnetID)
		}
		seen[row.CarnetID] = true
	}
}

func jsonUnmarshal(s string, v any) { json.Unmarshal([]byte(s), v) }

// TestRunGoesOnAfterRestart: a server stopped cleanly in the middle of a
// run (Ctrl+C) stops it after the calls in flight; started again on the
// same folder, River takes the run up and it ends with one carnet per row.
func TestRunGoesOnAfterRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	start := func() *Server {
		srv, err := New(context.Background(), Config{Addr: "127.0.0.1:0", DataDir: dir, AdminPassword: testAdminPassword})
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		return srv
	}
	srv := start()
	c := login(t, srv, "admin", testAdminPassword)
	base := newCarnetDraft(t, c, readSample(t, "../samples/escola/alunos.xlsx"))
	c.postForm(base+"/configuracao", url.Values{"name": {"Reinício"}, "repeats": {"2"}, "due": {"dia 10 do próximo mês"}, "on_invalid": {"stop"}})
	rn, err := srv.embedded()
	if err != nil {
		t.Fatal(err)
	}
	// 400 ms a carnet, 4 at a time: the run lasts about 4 s, so the
	// server stops in its middle even with other tests on the cores
	crashSetFaults(t, rn.URL, `{"all":{},"routes":{"POST /v1/carnet":{"latency":"400ms"}}}`)
	r := c.postForm(base+"/executar", nil)
	runPath := r.URL.Path
	ev := crashWatchProgress(t, c, runPath+"/eventos", func(e RunEvent) bool { return e.Progress.Done >= 4 })
	if ev.Finished {
		t.Fatal("the run ended before the restart")
	}
	srv.Close()
	srv = start() // the sandbox starts again without the injected latency
	defer srv.Close()
	rec := waitRun(t, srv, 1, 90*time.Second)
	if rec.Status != "done" {
		t.Fatalf("after the restart: %s %s", rec.Status, rec.Message)
	}
	tot, _, n, err := readResultsPage(filepath.Join(rec.Dir, "results.json"), 0, 100)
	if err != nil || n != 40 || tot.Issued.Rows != 40 {
		t.Fatalf("results: %v, %d rows, %d issued", err, n, tot.Issued.Rows)
	}
	rn, err = srv.embedded()
	if err != nil {
		t.Fatal(err)
	}
	cl, err := api.New(api.Config{BaseURL: rn.URL, PixBaseURL: rn.PixURL, ClientID: run.EmbeddedClientID, ClientSecret: run.EmbeddedClientSecret})
	if err != nil {
		t.Fatal(err)
	}
	list, err := cl.ListCharges(context.Background(), api.ChargeListQuery{ChargeType: "carnet", BeginDate: time.Now().AddDate(0, 0, -1).Format("2006-01-02"),
		EndDate: time.Now().AddDate(0, 0, 1).Format("2006-01-02"), Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Data) != 80 {
		t.Fatalf("the sandbox holds %d parcels, want 80 (40 carnets of 2, none twice)", len(list.Data))
	}
}

// TestUploadJobWithSheet: a job.yaml uploaded with its sheet is used as it
// is (its input pointed at the upload) and the remessa goes straight to
// the check; a viewer reads the run that comes of it but prepares nothing.
func TestUploadJobWithSheet(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := login(t, srv, "admin", testAdminPassword)
	r := c.postMultipart("/remessas", url.Values{"kind": {"cobv"}, "account": {"1"}},
		upload{Field: "planilha", Name: "pagadores.csv", Data: readSample(t, "../samples/mensal/pagadores.csv")},
		upload{Field: "job", Name: "cobv.yaml", Data: readSample(t, "../samples/mensal/cobv.yaml")})
	if r.Status != http.StatusOK || !strings.HasSuffix(r.URL.Path, "/validacao") {
		t.Fatalf("upload with job: %d at %s", r.Status, r.URL.Path)
	}
	if !strings.Contains(r.Body, `data-count="rows">2500<`) {
		t.Fatalf("the sample's 2,500 rows were not checked")
	}
	base := strings.TrimSuffix(r.URL.Path, "/validacao")
	j := c.get(base + "/job.yaml")
	if !strings.Contains(j.Body, "file: pagadores.csv") || !strings.Contains(j.Body, "Mensalidade da associação") {
		t.Fatalf("the downloaded job is not the uploaded one over the user's sheet name:\n%s", j.Body)
	}
	r = c.postForm(base+"/executar", nil)
	if !strings.HasPrefix(r.URL.Path, "/execucoes/") {
		t.Fatalf("confirm: %d at %s", r.Status, r.URL.Path)
	}
	rec := waitRun(t, srv, 1, 90*time.Second)
	if rec.Status != "done" {
		t.Fatalf("run: %s %s", rec.Status, rec.Message)
	}
	if _, err := srv.createUser(context.Background(), "contador", "Contador", "senha-do-contador", RoleViewer); err != nil {
		t.Fatal(err)
	}
	v := login(t, srv, "contador", "senha-do-contador")
	for path, want := range map[string]int{"/": 200, r.URL.Path: 200, r.URL.Path + "/arquivos/results.json": 200,
		"/remessas/nova": 403, base + "/validacao": 403, "/admin/contas": 403} {
		if got := v.get(path).Status; got != want {
			t.Errorf("viewer GET %s: %d, want %d", path, got, want)
		}
	}
	if cd := v.get(r.URL.Path + "/arquivos/results.json").Header.Get("Content-Disposition"); !strings.Contains(cd, "Embutido-local-"+rec.RunID+"-results.json") {
		t.Errorf("a download's name should say its account and run: %q", cd)
	}
	if body := v.get("/").Body; strings.Contains(body, `href="/remessas/nova"`) {
		t.Errorf("the viewer's home offers Nova remessa")
	}
}
