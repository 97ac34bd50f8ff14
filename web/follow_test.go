package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"remessa/pipeline/remind"
	"remessa/pipeline/results"
	"remessa/pipeline/run/runtest"
	"remessa/sandbox/control"
)

// followJob is a school's job uploaded with its sheet: two families, a
// carnet of two R$ 250,00 parcels each (due 03/03/2027 and 03/04/2027)
// and a régua of two steps on the service's own e-mail: 3 days before and
// on the due date (quiet hours and weekdays by default).
const followJob = `version: 1
name: Mensalidades com régua
service: embedded
input:
  file: alunos.csv
  key: Matrícula
  columns:
    name: Responsável
    value: Mensalidade
issue:
  carnets:
    repeats: 2
    first_due: 2027-03-03
    items:
      - name: "Mensalidade {{ .Aluno }}"
        value: "{{ .Mensalidade }}"
    fine: 2%
    interest_per_day: 0,033%
reminders:
  steps:
    - {at: -3d, channel: service}
    - {at: 0d, channel: service}
`

func followSheet() string {
	rows := []string{"\ufeffMatrícula;Aluno;Responsável;CPF;E-mail;Mensalidade"}
	for i, n := range []string{"Ana", "Bruno"} {
		rows = append(rows, fmt.Sprintf("A%d;%s Souza;Responsável %s;%s;a%d@example.com;250,00", i+1, n, n, runtest.CPF(fmt.Sprintf("98765432%d", i)), i+1))
	}
	return strings.Join(rows, "\r\n") + "\r\n"
}

// sandboxResends is the embedded sandbox's record of resends as
// "route email parcel N em dd/mm" lines (São Paulo's day).
func sandboxResends(t *testing.T, ctl *control.Client) []string {
	t.Helper()
	rs, err := ctl.Resends(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, r := range rs {
		at, _ := time.Parse(time.RFC3339, r.At)
		out = append(out, fmt.Sprintf("%s %s parcela %d em %s", r.Route, r.Email, r.Parcel, at.In(time.FixedZone("BRT", -3*3600)).Format("02/01")))
	}
	return out
}

// TestFollowRegua: a run issued from the desk with a job whose régua has
// two steps; the desk's follow job (the work functions River runs) syncs
// the run and runs the régua: nothing before a step is due; when the
// sandbox clock reaches 3 days before the first due date, exactly the
// family that had not paid is reminded, and a second pass sends nothing
// more. The periodic job queues one sync per run with open charges, never
// two of one run. The run page shows the history, in a real browser at
// 1280 and 390 px.
func TestFollowRegua(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	ctx := context.Background()
	rn, err := srv.embedded()
	if err != nil {
		t.Fatal(err)
	}
	ctl := sandboxControl(t, rn.URL)
	to := func(instant string) {
		t.Helper()
		if _, err := ctl.Advance(ctx, control.AdvanceRequest{To: instant}); err != nil {
			t.Fatalf("clock to %s: %v", instant, err)
		}
	}
	to("2027-02-22T09:00:00-03:00") // a Monday

	c := login(t, srv, "admin", testAdminPassword)
	r := c.postMultipart("/remessas", url.Values{"kind": {"carnets"}, "account": {"1"}},
		upload{Field: "planilha", Name: "alunos.csv", Data: []byte(followSheet())},
		upload{Field: "job", Name: "job.yaml", Data: []byte(followJob)})
	if r.Status != http.StatusOK || !strings.HasSuffix(r.URL.Path, "/validacao") {
		t.Fatalf("upload: %d at %s: %s", r.Status, r.URL.Path, r.Body)
	}
	base := strings.TrimSuffix(r.URL.Path, "/validacao")
	if r = c.get(base + "/plano"); r.Status != http.StatusOK || !strings.Contains(r.Body, `data-count="accepted">2<`) {
		t.Fatalf("plan: %d %s", r.Status, r.Body)
	}
	if r = c.postForm(base+"/executar", nil); r.Status != http.StatusOK || !strings.HasPrefix(r.URL.Path, "/execucoes/") {
		t.Fatalf("confirm: %d at %s: %s", r.Status, r.URL.Path, r.Body)
	}
	rec := waitRun(t, srv, 1, 90*time.Second)
	if rec.Status != "done" {
		t.Fatalf("run ended %s: %s", rec.Status, rec.Message)
	}
	res, err := results.Load(filepath.Join(rec.Dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}

	follow := func() {
		t.Helper()
		w := &followRunWorker{s: srv}
		if err := w.Work(ctx, &river.Job[FollowRunArgs]{JobRow: &rivertype.JobRow{}, Args: FollowRunArgs{Run: rec.ID}}); err != nil {
			t.Fatalf("follow run %d: %v", rec.ID, err)
		}
	}
	// 22/02: no step is due yet (the first is 28/02); the ledger is synced
	follow()
	if got := sandboxResends(t, ctl); len(got) != 0 {
		t.Fatalf("resends before any step was due: %q", got)
	}
	if r = c.get("/execucoes/1"); !strings.Contains(r.Body, `id="lembretes"`) || !strings.Contains(r.Body, "Nenhum lembrete enviado ainda.") ||
		!strings.Contains(r.Body, "3 dias antes · e-mail do serviço<") {
		t.Fatalf("the run page should show the régua and no reminder yet:\n%s", r.Body)
	}

	// 01/03 (Monday), 10:00: A1 paid parcel 1 the day before; A2 is reminded
	to("2027-02-28T15:00:00-03:00")
	if _, err := ctl.PayParcel(ctx, res.Rows[0].CarnetID, 1, control.PayRequest{}, rn.PayeeCode); err != nil {
		t.Fatal(err)
	}
	to("2027-03-01T10:00:00-03:00")
	follow()
	want := []string{"parcel a2@example.com parcela 1 em 01/03"}
	if got := sandboxResends(t, ctl); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("resends after the first pass:\n got %q\nwant %q", got, want)
	}
	follow()
	if got := sandboxResends(t, ctl); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("a second pass sent more:\n got %q\nwant %q", got, want)
	}
	hist, err := remind.ReadHistory(ctx, rec.Dir)
	if err != nil || len(hist) != 1 || hist[0].RowKey != "A2" || hist[0].Parcel != 1 || hist[0].State != remind.StateSent || hist[0].AmountCents != 25000 {
		t.Fatalf("history: %v %+v", err, hist)
	}

	// the periodic job queues one follow job per run with open charges and
	// never a second of a run whose job is still waiting
	pending, err := srv.river.Insert(ctx, FollowRunArgs{Run: rec.ID, Boot: srv.boot}, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&followWorker{s: srv}).Work(ctx, &river.Job[FollowArgs]{JobRow: &rivertype.JobRow{}}); err != nil {
		t.Fatal(err)
	}
	if n, err := srv.queueFollows(ctx); err != nil || n != 0 {
		t.Fatalf("with a follow job of run 1 waiting, the tick queued %d (%v), want 0", n, err)
	}
	if _, err := srv.river.JobDelete(ctx, pending.Job.ID); err != nil {
		t.Fatal(err)
	}
	if n, err := srv.queueFollows(ctx); err != nil || n != 1 {
		t.Fatalf("the tick queued %d (%v), want 1", n, err)
	}
	// River works it: a third pass, nothing more sent
	deadline := testDeadline(t)
	for {
		l, err := srv.river.JobList(ctx, river.NewJobListParams().Kinds(FollowRunArgs{}.Kind()).States(rivertype.JobStateCompleted))
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Jobs) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the queued follow job did not complete")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got := sandboxResends(t, ctl); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the queued pass sent more:\n got %q\nwant %q", got, want)
	}

	// the run page, in a browser
	bctx := newBrowser(t)
	errs := browserErrors(t, bctx)
	browserAcceptLanguage(t, bctx, "pt-BR,pt;q=0.9")
	browserLogin(t, bctx, srv, "admin", testAdminPassword)
	browserGo(t, bctx, srv.URL+"/execucoes/1#lembretes")
	text := browserText(t, bctx, "#lembretes")
	for _, s := range []string{"Lembretes de cobrança", "Lembretes enviados: 1.", "A2 parcela 1", "03/03/2027", "3 dias antes", "e-mail do serviço", "a2@example.com", "R$ 250,00", "enviado", "01/03/2027 10:00"} {
		if !strings.Contains(text, s) {
			t.Errorf("the reminders block lacks %q:\n%s", s, text)
		}
	}
	if strings.Contains(text, "a1@example.com") {
		t.Errorf("the reminders block shows A1, who had paid:\n%s", text)
	}
	browserBothWidths(t, bctx, "lembretes")
	browserCheckConsole(t, errs)
}
