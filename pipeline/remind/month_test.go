package remind_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"remessa/internal/metrics"
	"remessa/internal/smtptest"
	"remessa/pipeline/remind"
	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/pipeline/run/runtest"
	"remessa/sandbox/control"
)

// The school's month: four families, a carnet of two R$ 300,00 parcels
// each (due 03/03/2027 and 03/04/2027, fine 2 %, interest 0,033 % a day),
// and a régua of four steps: -3d and 0d by the service's resend, +2d and
// +9d by the school's own e-mail. The sandbox clock is stepped day by day
// from 01/03/2027 to 01/04/2027 at 10:00 (and once at 07:00, inside the
// quiet hours); families pay along the way.

const monthJob = `version: 1
name: Mensalidades do mês
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
    - {at: +2d, channel: smtp}
    - {at: +9d, channel: smtp}
  quiet_hours: {from: "08:00", to: "20:00", weekends: true}
  smtp:
    host: 127.0.0.1
    port: ${SMTP_PORT:2525}
    username: ${SMTP_USER:x}
    password: ${SMTP_PASS:x}
    from: "Escola Aquarela <cobranca@escola.example.com>"
    ca_file: ${SMTP_CA:ca.pem}
  message:
    subject: "{{ .Chave }} parcela {{ .Parcela }}: {{ .Valor }} ({{ .DiasAtraso }} dias)"
`

func monthSheet() string {
	rows := []string{"\ufeffMatrícula;Aluno;Responsável;CPF;E-mail;Mensalidade"}
	for i, n := range []string{"Ana", "Bruno", "Carla", "Davi"} {
		rows = append(rows, fmt.Sprintf("A%d;%s Lima;Responsável %s;%s;a%d@example.com;300,00", i+1, n, n, runtest.CPF(fmt.Sprintf("12345678%d", i)), i+1))
	}
	return strings.Join(rows, "\r\n") + "\r\n"
}

type month struct {
	dir, base, pixBase string
	ctl                *control.Client
	res                *results.Results
	env                map[string]string
}

func (m *month) getenv(k string) (string, bool) { v, ok := m.env[k]; return v, ok }

func (m *month) opts() remind.Options {
	// no Now: the pass decides by the service's clock, read from the
	// Date of the sandbox's answers
	return remind.Options{Run: run.Options{BaseURL: m.base, PixBaseURL: m.pixBase, Getenv: m.getenv}}
}

func (m *month) to(t *testing.T, instant string) {
	t.Helper()
	if _, err := m.ctl.Advance(context.Background(), control.AdvanceRequest{To: instant}); err != nil {
		t.Fatalf("clock to %s: %v", instant, err)
	}
}

func (m *month) pass(t *testing.T) *remind.Report {
	t.Helper()
	out, err := remind.RunsDir(context.Background(), m.dir, m.opts())
	if err != nil || len(out) != 1 || out[0].Err != "" {
		t.Fatalf("pass: %v %+v", err, out)
	}
	return out[0].Report
}

func (m *month) pay(t *testing.T, row, parcel int) {
	t.Helper()
	if _, err := m.ctl.PayParcel(context.Background(), m.res.Rows[row].CarnetID, parcel, control.PayRequest{}, ""); err != nil {
		t.Fatalf("pay A%d parcel %d: %v", row+1, parcel, err)
	}
}

func newMonth(t *testing.T, mb *smtptest.Server) *month {
	t.Helper()
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "mes.yaml"), []byte(monthJob), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "alunos.csv"), []byte(monthSheet()), 0o644); err != nil {
		t.Fatal(err)
	}
	rn, err := run.StartEmbedded(filepath.Join(work, "sb"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rn.Close() })
	m := &month{base: rn.URL, pixBase: rn.PixURL, ctl: &control.Client{BaseURL: rn.URL}, env: mb.Env()}
	m.to(t, "2027-03-01T09:00:00-03:00")
	out, err := run.Run(context.Background(), filepath.Join(work, "mes.yaml"), run.Options{Embedded: rn, RunsDir: filepath.Join(work, "out"), Getenv: m.getenv})
	if err != nil || out.ExitCode() != 0 {
		t.Fatalf("issue: %v", err)
	}
	if m.res, err = out.LoadResults(); err != nil {
		t.Fatal(err)
	}
	m.dir = filepath.Join(work, "out")
	return m
}

// resendList is the sandbox's record as "email parcel date" lines.
func resendList(t *testing.T, m *month) []string {
	t.Helper()
	rs, err := m.ctl.Resends(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rs {
		at, _ := time.Parse(time.RFC3339, r.At)
		out = append(out, fmt.Sprintf("%s %s parcela %d em %s", r.Route, r.Email, r.Parcel, at.In(time.FixedZone("BRT", -3*3600)).Format("02/01")))
	}
	return out
}

func sameList(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\ngot:\n  %s\nwant:\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestMonthOfReminders steps a month day by day; the e-mails the sandbox
// was asked to resend and those the SMTP server received are exactly the
// test's lists: none to a family that had paid, none twice, none inside
// the quiet hours; the pass of the last day is killed (SIGKILL) right
// after its second resend went out and run again: the resend whose result
// was lost is reported uncertain and not repeated, the others go out once.
func TestMonthOfReminders(t *testing.T) {
	if testing.Short() {
		t.Skip("a month of passes; skipped with -short")
	}
	mb := smtptest.Start(t)
	m := newMonth(t, mb)
	serviceBefore, smtpBefore := reminderMetric(t, "service", "sent"), reminderMetric(t, "smtp", "sent")
	days := []string{}
	for d := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC); !d.After(time.Date(2027, 3, 30, 0, 0, 0, 0, time.UTC)); d = d.AddDate(0, 0, 1) {
		days = append(days, d.Format("2006-01-02"))
	}
	for _, day := range days {
		if day == "2027-03-12" {
			// 07:00 is inside the quiet hours: nothing goes out although +9d is due
			m.to(t, day+"T07:00:00-03:00")
			if rep := m.pass(t); rep.Sent != 0 || !strings.Contains(rep.Note, "fora da janela") {
				t.Errorf("a pass at 07:00 sent %d (note %q), want none", rep.Sent, rep.Note)
			}
		}
		m.to(t, day+"T10:00:00-03:00")
		switch day {
		case "2027-03-02":
			m.pay(t, 0, 1) // A1 pays before the due date
		case "2027-03-03":
			m.pay(t, 3, 1) // A4 pays on the due date, before the pass
		case "2027-03-07":
			m.pay(t, 2, 1) // A3 pays late, after the +2d e-mail
		}
		rep := m.pass(t)
		if testing.Verbose() {
			t.Logf("%s: %+v", day, rep)
		}
	}
	wantResends := []string{
		// 01/03: -3d of parcel 1 (due 03/03) for everyone
		"parcel a1@example.com parcela 1 em 01/03",
		"parcel a2@example.com parcela 1 em 01/03",
		"parcel a3@example.com parcela 1 em 01/03",
		"parcel a4@example.com parcela 1 em 01/03",
		// 03/03: 0d; A1 and A4 have paid
		"parcel a2@example.com parcela 1 em 03/03",
		"parcel a3@example.com parcela 1 em 03/03",
	}
	// +2d on 05/03 for A2 and A3: 300,00 + 2 % fine (6,00) + 2 days of
	// 0,033 % (0,198 → 0,20) = 306,20; +9d on 12/03 for A2 only (A3 paid
	// on 07/03): 300,00 + 6,00 + 9 × 0,099 = 0,891 → 0,89: 306,89
	wantMails := []string{
		"<a2@example.com> A2 parcela 1: R$ 306,20 (2 dias)",
		"<a3@example.com> A3 parcela 1: R$ 306,20 (2 dias)",
		"<a2@example.com> A2 parcela 1: R$ 306,89 (9 dias)",
	}
	sameList(t, "resends asked of the sandbox", resendList(t, m), wantResends)
	sameList(t, "e-mails received by the SMTP server", mb.List(), normalizeTo(wantMails))
	// the metric counts each message under the régua's channel name
	if got := reminderMetric(t, "service", "sent") - serviceBefore; got != 6 {
		t.Errorf("remessa_reminders_sent_total{channel=\"service\",outcome=\"sent\"} moved by %v, want 6", got)
	}
	if got := reminderMetric(t, "smtp", "sent") - smtpBefore; got != 3 {
		t.Errorf("remessa_reminders_sent_total{channel=\"smtp\",outcome=\"sent\"} moved by %v, want 3", got)
	}

	// 31/03: -3d of parcel 2 (due 03/04) for all four; the pass is killed
	// right after the second resend went out, before its result was kept
	m.to(t, "2027-03-31T10:00:00-03:00")
	code := childPass(t, m, "remind-sent:2")
	if code == 0 {
		t.Fatalf("the child pass was to be killed; it exited 0")
	}
	rep := m.pass(t)
	if rep.Recovered != 1 || rep.Sent != 2 {
		t.Errorf("after the crash: %d recovered as uncertain, %d sent; want 1 and 2", rep.Recovered, rep.Sent)
	}
	// and again: nothing more
	if rep := m.pass(t); rep.Sent+rep.Uncertain+rep.Skipped != 0 {
		t.Errorf("a pass after the crash's recovery did %+v, want nothing", rep)
	}
	wantResends = append(wantResends,
		"parcel a1@example.com parcela 2 em 31/03",
		"parcel a2@example.com parcela 2 em 31/03",
		"parcel a3@example.com parcela 2 em 31/03",
		"parcel a4@example.com parcela 2 em 31/03",
	)
	sameList(t, "resends after the crash", resendList(t, m), wantResends)
	sameList(t, "e-mails after the crash", mb.List(), normalizeTo(wantMails))

	// the history: A2's parcel 1 went through all four steps; A2's parcel
	// 2's resend of the crashed pass is uncertain
	runs, _ := remind.RunFolders(m.dir)
	hist, err := remind.ReadHistory(context.Background(), runs[0])
	if err != nil {
		t.Fatal(err)
	}
	var a2 []string
	for _, h := range hist {
		if h.RowKey == "A2" {
			a2 = append(a2, fmt.Sprintf("p%d %d %s %s", h.Parcel, h.Offset, h.Channel, h.State))
		}
	}
	sameList(t, "A2's history", a2, []string{"p1 -3 service sent", "p1 0 service sent", "p1 2 smtp sent", "p1 9 smtp sent", "p2 -3 service uncertain"})
	for _, r := range mb.All() {
		if strings.Contains(r.Body, smtptest.Password) {
			t.Errorf("an e-mail carries the SMTP password")
		}
	}
}

// reminderMetric is the value of remessa_reminders_sent_total with the
// labels channel and outcome (0 when never counted).
func reminderMetric(t *testing.T, channel, outcome string) float64 {
	t.Helper()
	mfs, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "remessa_reminders_sent_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			if l["channel"] == channel && l["outcome"] == outcome {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func normalizeTo(l []string) []string {
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = strings.NewReplacer("<", "", ">", "").Replace(s)
	}
	sort.Strings(out)
	return out
}

// childPass runs one pass in a child process (this test binary, see
// TestMain) with REMESSA_CRASH_AT set, and returns its exit code.
func childPass(t *testing.T, m *month, crashAt string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "REMIND_CHILD_DIR="+m.dir, "REMIND_CHILD_BASE="+m.base, "REMIND_CHILD_PIX="+m.pixBase, "REMESSA_CRASH_AT="+crashAt)
	for k, v := range m.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		t.Logf("child pass: %v\n%s", ee, out)
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

func TestMain(m *testing.M) {
	if dir := os.Getenv("REMIND_CHILD_DIR"); dir != "" {
		o := remind.Options{Run: run.Options{BaseURL: os.Getenv("REMIND_CHILD_BASE"), PixBaseURL: os.Getenv("REMIND_CHILD_PIX")}}
		out, err := remind.RunsDir(context.Background(), dir, o)
		if err != nil || len(out) != 1 || out[0].Err != "" {
			fmt.Fprintln(os.Stderr, "child pass:", err, out)
			os.Exit(5)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
