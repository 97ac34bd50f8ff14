package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"remessa/internal/smtptest"
	"remessa/pipeline"
	"remessa/pipeline/remind"
	"remessa/pipeline/results"
	"remessa/sandbox/control"
)

// startServerIn starts the desk on the data folder dir; stop closes it
// (once; the test's end closes it otherwise).
func startServerIn(t *testing.T, dir string) (*Server, func()) {
	t.Helper()
	srv, err := New(context.Background(), Config{Addr: "127.0.0.1:0", DataDir: dir, AdminPassword: testAdminPassword})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		srv.Close()
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() { once.Do(func() { srv.Close() }) }
	t.Cleanup(stop)
	return srv, stop
}

// startEscolaRun uploads the school's sheet through c as 40 carnets of 12
// parcels, the first due on due ("2027-03-10", "dia 10 do próximo mês"),
// fine 2 % and interest 0,033 % a day, confirms the run and returns its
// page's path.
func startEscolaRun(t *testing.T, c *client, due string) string {
	t.Helper()
	return startEscolaRunOf(t, c, due, 12)
}

// startEscolaRunOf is startEscolaRun with carnets of parcels parcels.
func startEscolaRunOf(t *testing.T, c *client, due string, parcels int) string {
	t.Helper()
	base := newCarnetDraft(t, c, readSample(t, "../samples/escola/alunos.xlsx"))
	r := c.postForm(base+"/configuracao", url.Values{"name": {"Mensalidades 2027"}, "repeats": {strconv.Itoa(parcels)}, "due": {due},
		"fine": {"2%"}, "interest": {"0,033%"}, "on_invalid": {"stop"}})
	if r.Status != http.StatusOK || !strings.HasSuffix(r.URL.Path, "/validacao") {
		t.Fatalf("settings: %d at %s: %s", r.Status, r.URL.Path, snippet(r.Body, "erro"))
	}
	r = c.postForm(base+"/executar", nil)
	if r.Status != http.StatusOK || !strings.HasPrefix(r.URL.Path, "/execucoes/") {
		t.Fatalf("confirm: %d at %s", r.Status, r.URL.Path)
	}
	return r.URL.Path
}

// escolaRunDue issues the school's carnets (startEscolaRun) and returns
// the finished run and its results.
func escolaRunDue(t *testing.T, srv *Server, c *client, due string) (*runRecord, *results.Results) {
	t.Helper()
	return escolaRunOf(t, srv, c, due, 12)
}

// escolaRunOf is escolaRunDue with carnets of parcels parcels.
func escolaRunOf(t *testing.T, srv *Server, c *client, due string, parcels int) (*runRecord, *results.Results) {
	t.Helper()
	var id int64
	fmt.Sscanf(strings.TrimPrefix(startEscolaRunOf(t, c, due, parcels), "/execucoes/"), "%d", &id)
	rec := waitRun(t, srv, id, 120*time.Second)
	if rec.Status != "done" {
		t.Fatalf("run ended %s: %s", rec.Status, rec.Message)
	}
	res, err := results.Load(filepath.Join(rec.Dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	return rec, res
}

// TestDeskMonthOfReminders is the school's month in the desk: the admin
// sets the desk's régua (3 days before and on the due date by the
// service's e-mail, 2 and 9 days after by the desk's own SMTP, weekdays
// 08:00-20:00) and its mail server (the test's, STARTTLS and a password);
// the school's 40 carnets are issued with parcel 1 due on Wednesday
// 10/03/2027 and parcel 2 on 10/04 (two parcels, not the year's twelve: a
// later parcel's first step, 07/04 for parcel 2, is after the month, so
// no pass reaches a third), and the sandbox clock is stepped day by day
// from 05/03 to 04/04 at 10:00, a pass of the desk's follow job each day,
// while families pay. The pass of the due date runs in a `remessa web`
// process that is killed (SIGKILL) right after its fourth resend went
// out and started again. The resends the sandbox recorded and the e-mails the SMTP server
// received are exactly the test's lists: none to a family that had paid,
// none twice, none on a weekend.
func TestDeskMonthOfReminders(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a month of passes and a desk process killed; skipped with -short")
	}
	ctx := context.Background()
	data := t.TempDir()
	mb := smtptest.Start(t)
	srv, stop := startServerIn(t, data)
	c := login(t, srv, "admin", testAdminPassword)
	if r := c.postForm("/admin/regua/smtp", deskSMTPForm(mb)); r.Status != http.StatusOK || strings.Contains(r.Body, `class="field-error"`) {
		t.Fatalf("SMTP: %d\n%s", r.Status, snippet(r.Body, "smtp"))
	}
	if r := c.postForm("/admin/regua/mensagem", url.Values{"assunto": {"{{ .Chave }} parcela {{ .Parcela }}: {{ .Valor }} ({{ .DiasAtraso }} dias)"},
		"texto": {pipeline.DefaultReminderBody}}); r.Status != http.StatusOK || strings.Contains(r.Body, `class="field-error"`) {
		t.Fatalf("message: %d\n%s", r.Status, snippet(r.Body, "mensagem"))
	}
	if r := c.postForm("/admin/regua", reguaForm4()); r.Status != http.StatusOK || strings.Contains(r.Body, `class="field-error"`) {
		t.Fatalf("régua: %d\n%s", r.Status, snippet(r.Body, "padrao"))
	}
	rec, res := escolaRunOf(t, srv, c, "2027-03-10", 2)
	id, runDir := rec.ID, rec.Dir
	if got := res.Rows[0].Parcels[0].DueDate + " " + res.Rows[0].Parcels[1].DueDate; got != "2027-03-10 2027-04-10" {
		t.Fatalf("parcels due %s, want 2027-03-10 2027-04-10", got)
	}

	var ctl *control.Client
	var payee string
	connect := func() {
		rn, err := srv.embedded()
		if err != nil {
			t.Fatal(err)
		}
		ctl, payee = sandboxControl(t, rn.URL), rn.PayeeCode
	}
	connect()
	to := func(instant string) {
		t.Helper()
		if _, err := ctl.Advance(ctx, control.AdvanceRequest{To: instant}); err != nil {
			t.Fatalf("clock to %s: %v", instant, err)
		}
	}
	pay := func(rows ...int) {
		t.Helper()
		for _, i := range rows {
			if _, err := ctl.PayParcel(ctx, res.Rows[i].CarnetID, 1, control.PayRequest{}, payee); err != nil {
				t.Fatalf("pay row %d: %v", i, err)
			}
		}
	}
	follow := func(day string) {
		t.Helper()
		w := &followRunWorker{s: srv}
		if err := w.Work(ctx, &river.Job[FollowRunArgs]{JobRow: &rivertype.JobRow{}, Args: FollowRunArgs{Run: id}}); err != nil {
			t.Fatalf("%s: follow: %v", day, err)
		}
	}
	span := func(a, b int) []int {
		var out []int
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
		return out
	}
	day := func(d time.Time) string { return d.Format("2006-01-02") }

	// 05/03 to 09/03, in this process: thirty families pay on the 5th; the
	// 3-days-before step (Sunday 07/03) waits for Monday's window
	for d := time.Date(2027, 3, 5, 0, 0, 0, 0, time.UTC); d.Before(time.Date(2027, 3, 10, 0, 0, 0, 0, time.UTC)); d = d.AddDate(0, 0, 1) {
		to(day(d) + "T10:00:00-03:00")
		if day(d) == "2027-03-05" {
			pay(span(0, 29)...)
		}
		follow(day(d))
	}
	// 10/03, the due date: row 30 pays; the pass runs in a desk process
	// killed right after its fourth resend
	to("2027-03-10T10:00:00-03:00")
	pay(30)
	stop()
	bin := crashBuildRemessa(t)
	pwFile := filepath.Join(t.TempDir(), "senha-admin")
	if err := os.WriteFile(pwFile, []byte(testAdminPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := crashStartWebWith(t, bin, data, pwFile, []string{"REMESSA_CRASH_AT=remind-sent:4"}, "--sync-every", "1s")
	select {
	case <-p.done:
	case <-time.After(time.Until(testDeadline(t))):
		t.Fatalf("the desk was not killed in its pass; stderr:\n%s", p.log())
	}
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the desk ended %v, want killed by SIGKILL; stderr:\n%s", p.cmd.ProcessState, p.log())
	}
	hist := func() []remind.Send {
		t.Helper()
		h, err := remind.ReadHistory(ctx, runDir)
		if err != nil {
			t.Logf("history: %v", err)
		}
		return h
	}
	onDay := func(h []remind.Send, offset int) (n, sending int) {
		for _, s := range h {
			if s.Offset == offset {
				n++
				if s.State == remind.StateSending {
					sending++
				}
			}
		}
		return
	}
	if n, sending := onDay(hist(), 0); n != 4 || sending != 1 {
		t.Fatalf("after the kill: %d sends of the due date journaled (%d left sending), want 4 (1)", n, sending)
	}
	// started again: the periodic job's next tick runs the pass again
	p = crashStartWebWith(t, bin, data, pwFile, nil, "--sync-every", "1s")
	deadline := testDeadline(t)
	for {
		if n, sending := onDay(hist(), 0); n == 9 && sending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pass of the due date did not end after the restart: %+v\nstderr:\n%s", hist(), p.log())
		}
		time.Sleep(300 * time.Millisecond)
	}
	p.stop(t)

	// 11/03 to 04/04, in this process again
	srv, _ = startServerIn(t, data)
	connect()
	for d := time.Date(2027, 3, 11, 0, 0, 0, 0, time.UTC); !d.After(time.Date(2027, 4, 4, 0, 0, 0, 0, time.UTC)); d = d.AddDate(0, 0, 1) {
		to(day(d) + "T10:00:00-03:00")
		switch day(d) {
		case "2027-03-11":
			pay(31, 32, 33, 34) // after the due date's resend, before +2d
		case "2027-03-15":
			pay(35, 36) // after the +2d e-mail
		}
		follow(day(d))
	}

	wantResends := []string{
		// Monday 08/03: 3 days before (Sunday 07/03) for the ten who had not paid
		"parcel debora.30@example.com parcela 1 em 08/03",
		"parcel lucia.31@example.com parcela 1 em 08/03",
		"parcel maria.32@example.com parcela 1 em 08/03",
		"parcel marcia.33@example.com parcela 1 em 08/03",
		"parcel lucia.34@example.com parcela 1 em 08/03",
		"parcel antonio.35@example.com parcela 1 em 08/03",
		"parcel maria.36@example.com parcela 1 em 08/03",
		"parcel rogerio.37@example.com parcela 1 em 08/03",
		"parcel debora.38@example.com parcela 1 em 08/03",
		"parcel antonio.39@example.com parcela 1 em 08/03",
		// 10/03, the due date (row 30 paid that morning), across the kill
		"parcel lucia.31@example.com parcela 1 em 10/03",
		"parcel maria.32@example.com parcela 1 em 10/03",
		"parcel marcia.33@example.com parcela 1 em 10/03",
		"parcel lucia.34@example.com parcela 1 em 10/03",
		"parcel antonio.35@example.com parcela 1 em 10/03",
		"parcel maria.36@example.com parcela 1 em 10/03",
		"parcel rogerio.37@example.com parcela 1 em 10/03",
		"parcel debora.38@example.com parcela 1 em 10/03",
		"parcel antonio.39@example.com parcela 1 em 10/03",
	}
	// 12/03, 2 days late: value + 2 % fine + 2 days of 0,033 %:
	//   980,00 + 19,60 + 0,6468 (0,65) = 1.000,25
	//   1.350,00 + 27,00 + 0,891 (0,89) = 1.377,89
	//   920,50 + 18,41 + 0,60753 (0,61) = 939,52
	// 19/03, 9 days late (rows 35 and 36 paid on 15/03):
	//   1.350,00 + 27,00 + 4,0095 (4,01) = 1.381,01
	//   920,50 + 18,41 + 2,733885 (2,73) = 941,64
	wantMails := []string{
		"antonio.35@example.com 2027-036 parcela 1: R$ 1.000,25 (2 dias)",
		"antonio.39@example.com 2027-040 parcela 1: R$ 939,52 (2 dias)",
		"antonio.39@example.com 2027-040 parcela 1: R$ 941,64 (9 dias)",
		"debora.38@example.com 2027-039 parcela 1: R$ 1.377,89 (2 dias)",
		"debora.38@example.com 2027-039 parcela 1: R$ 1.381,01 (9 dias)",
		"maria.36@example.com 2027-037 parcela 1: R$ 1.377,89 (2 dias)",
		"rogerio.37@example.com 2027-038 parcela 1: R$ 1.377,89 (2 dias)",
		"rogerio.37@example.com 2027-038 parcela 1: R$ 1.381,01 (9 dias)",
	}
	if got := sandboxResends(t, ctl); strings.Join(got, "\n") != strings.Join(wantResends, "\n") {
		t.Errorf("resends recorded by the sandbox:\ngot:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(wantResends, "\n  "))
	}
	if got := mb.List(); strings.Join(got, "\n") != strings.Join(wantMails, "\n") {
		t.Errorf("e-mails received by the SMTP server:\ngot:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(wantMails, "\n  "))
	}
	// the resend whose answer the kill lost is reported uncertain
	var uncertain []string
	for _, s := range hist() {
		if s.State == remind.StateUncertain {
			uncertain = append(uncertain, fmt.Sprintf("%s %d %s", s.RowKey, s.Offset, s.Channel))
		}
	}
	if strings.Join(uncertain, ",") != "2027-035 0 service" {
		t.Errorf("uncertain sends: %q, want the fourth of the due date's pass (2027-035)", uncertain)
	}
	for _, m := range mb.All() {
		if strings.Contains(m.Body, smtptest.Password) {
			t.Errorf("an e-mail carries the SMTP password")
		}
	}
	if strings.Contains(p.log(), smtptest.Password) {
		t.Errorf("the desk's log carries the SMTP password")
	}
}
