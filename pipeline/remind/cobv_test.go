package remind_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"remessa/internal/smtptest"
	"remessa/pipeline/remind"
	"remessa/pipeline/run"
	"remessa/pipeline/run/runtest"
	"remessa/sandbox/control"
)

// cobvJob is one due-date Pix charge of R$ 200,00 due 03/03/2027 (a
// Wednesday) with a multa of 2 % and juros of 1 % a month (calendar days),
// and a régua of one step: the school's own e-mail 5 days after the due
// date.
const cobvJob = `version: 1
name: Cobv com régua
service: embedded
input:
  file: pagadores.csv
  key: Código
issue:
  cobv:
    due: 2027-03-03
    validade_apos_vencimento: 30
    chave: financeiro@example.com
    multa: {modalidade: 2, valor: 2%}
    juros: {modalidade: 3, valor: 1%}
reminders:
  steps:
    - {at: +5d, channel: smtp}
  smtp:
    host: 127.0.0.1
    port: ${SMTP_PORT}
    username: ${SMTP_USER}
    password: ${SMTP_PASS}
    from: "Associação <cobranca@associacao.example.com>"
    ca_file: ${SMTP_CA}
  message:
    subject: "{{ .Chave }}: {{ .Valor }} (original {{ .ValorOriginal }}, {{ .DiasAtraso }} dias)"
`

// TestLateCobvOwedToday: the e-mail of a late cobv says what the payer
// owes today by the charge's terms (rules.CobvAmountDue), not its face
// value: 5 days late, R$ 200,00 + multa 2 % (R$ 4,00) + juros 1 % a month
// for 5 days (200,00 × 1 % × 5 / 30 = 0,333… → R$ 0,33) = R$ 204,33.
func TestLateCobvOwedToday(t *testing.T) {
	mb := smtptest.Start(t)
	work := t.TempDir()
	sheet := "Código;Nome;CPF;E-mail;Valor\r\nP1;Paula Reis;" + runtest.CPF("111444777") + ";paula@example.com;200,00\r\n"
	for name, text := range map[string]string{"cobv.yaml": cobvJob, "pagadores.csv": sheet} {
		if err := os.WriteFile(filepath.Join(work, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rn, err := run.StartEmbedded(filepath.Join(work, "sb"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rn.Close() })
	env := mb.Env()
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	ctl := &control.Client{BaseURL: rn.URL}
	ctx := context.Background()
	out, err := run.Run(ctx, filepath.Join(work, "cobv.yaml"), run.Options{Embedded: rn, RunsDir: filepath.Join(work, "out"), Getenv: getenv})
	if err != nil || out.ExitCode() != 0 {
		if err == nil {
			res, _ := out.LoadResults()
			t.Fatalf("issue: exit %d, stop %v, totals %+v, rows %+v", out.ExitCode(), out.Stop, out.Results.Totals, res.Rows)
		}
		t.Fatalf("issue: %v", err)
	}
	if _, err := ctl.Advance(ctx, control.AdvanceRequest{To: "2027-03-08T10:00:00-03:00"}); err != nil {
		t.Fatal(err)
	}
	res, err := remind.RunsDir(ctx, filepath.Join(work, "out"), remind.Options{Run: run.Options{BaseURL: rn.URL, PixBaseURL: rn.PixURL, Getenv: getenv}})
	if err != nil || len(res) != 1 || res[0].Err != "" {
		t.Fatalf("pass: %v %+v", err, res)
	}
	if rep := res[0].Report; rep.Sent != 1 || len(rep.Items) != 1 || rep.Items[0].AmountCents != 20433 {
		t.Fatalf("the pass: %+v", rep)
	}
	want := []string{"paula@example.com P1: R$ 204,33 (original R$ 200,00, 5 dias)"}
	if got := mb.List(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("e-mails:\n got %q\nwant %q", got, want)
	}
	hist, err := remind.ReadHistory(ctx, res[0].Dir)
	if err != nil || len(hist) != 1 || hist[0].AmountCents != 20433 {
		t.Errorf("history: %v %+v", err, hist)
	}
}
