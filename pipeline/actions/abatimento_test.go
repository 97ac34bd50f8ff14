package actions_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"remessa/pipeline/actions"
	"remessa/pipeline/retorno"
	"remessa/pipeline/run"
	"remessa/pipeline/run/runtest"
	"remessa/pipeline/status"
	"remessa/sandbox/control"
)

// issueCobvRebate issues three cobv, Q0 R$ 150,00, Q1 R$ 80,00 and Q2
// R$ 50,00, each with an abatimento of R$ 5,00, on an embedded sandbox.
func issueCobvRebate(t *testing.T) *runtest.Issued {
	t.Helper()
	work := t.TempDir()
	files := map[string]string{
		"pix.csv": "Código;Nome;CPF;Valor\nQ0;Ana;" + runtest.CPF("100000001") + ";150,00\nQ1;Bia;" + runtest.CPF("100000002") + ";80,00\nQ2;Caio;" +
			runtest.CPF("100000003") + ";50,00\n",
		"cobv.yaml": "version: 1\nname: Pix com abatimento\ninput: {file: pix.csv, key: Código}\n" +
			"issue:\n  cobv:\n    due: +20d\n    chave: financeiro@example.com\n    solicitacao: \"Mensalidade {{ .Código }}\"\n" +
			"    abatimento: {modalidade: 1, valor: \"R$ 5,00\"}\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(work, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return runtest.Issue(t, work, "cobv.yaml")
}

// TestAbatimentoCobv: an abatimento job grants Q0 R$ 12,34 instead of its
// R$ 5,00 (PATCH valor.abatimento; the service then asks 150,00 − 12,34 =
// 137,66, which the sandbox's Pix pays and the reconciliation takes as paid
// in full), leaves Q1 alone (it already has R$ 5,00, as issued) and Q2
// (R$ 50,00 is not below its value), and sends nothing when run again; a
// second job cancels Q1's abatimento (the service asks 80,00 again). The
// ledger records both changes, and the retorno says them: 12 with 12,34,
// 13 with the 5,00 cancelled, and each payment's 06 with its abatimento.
func TestAbatimentoCobv(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	is := issueCobvRebate(t)
	src, rn := is.Dir, is.Sandbox
	opts := actions.Options{Run: run.Options{Embedded: rn, Getenv: noEnv}}
	cl := client(t, rn)
	ctl := &control.Client{BaseURL: rn.URL}
	txid := map[string]string{}
	for _, r := range is.Results.Rows {
		txid[r.Key] = r.Txid
	}
	if len(txid) != 3 {
		t.Fatalf("issued %d rows", len(txid))
	}

	out, again := runTwice(t, writeJob(t, src, "action:\n  abatimento: {by_key: {Q0: 1234, Q1: 500, Q2: 5000}}\n"), opts, 1)
	p := out.Plan
	if len(p.Items) != 1 || p.Items[0].RowKey != "Q0" || p.Calls["PATCH /v2/cobv/:txid"] != 1 ||
		p.Items[0].Charges[0].RebateBefore != 500 || p.Items[0].Charges[0].NewRebate != 1234 {
		t.Fatalf("plan: %+v", p.Items)
	}
	if !strings.Contains(p.Items[0].Text, "abatimento R$ 5,00 → abatimento R$ 12,34, a pagar R$ 137,66") {
		t.Errorf("plan text: %q", p.Items[0].Text)
	}
	skips := map[string]string{}
	for _, s := range p.Skipped {
		skips[s.RowKey] = s.Reason
	}
	if skips["Q1"] != "não se aplica: já tem abatimento de R$ 5,00" || skips["Q2"] != "não se aplica: o abatimento de R$ 50,00 não é menor que o valor da cobrança, R$ 50,00" {
		t.Errorf("skips: %q", skips)
	}
	if skipsWith(again.Plan, "não se aplica: já tem abatimento de R$ 12,34") != 1 {
		t.Errorf("again: %+v", again.Plan.Skipped)
	}
	cb, err := cl.GetCobV(ctx, txid["Q0"])
	if err != nil {
		t.Fatal(err)
	}
	if a := cb.Valor.Abatimento; a == nil || a.Modalidade != 1 || a.ValorPerc != "12.34" || cb.Valor.Original != "150.00" {
		t.Fatalf("Q0 after the action: %+v %+v", cb.Valor, a)
	}
	paid, err := ctl.PayPix(ctx, txid["Q0"], "")
	if err != nil {
		t.Fatal(err)
	}
	if paid.Valor != "137.66" { // 150,00 − 12,34
		t.Fatalf("the service charged %s for Q0, want 137.66", paid.Valor)
	}

	// 05 as the movements send it: remove: true on Q1
	runTwice(t, writeJob(t, src, "filter: {keys: [Q1]}\naction:\n  abatimento: {remove: true}\n"), opts, 1)
	cb, err = cl.GetCobV(ctx, txid["Q1"])
	if err != nil {
		t.Fatal(err)
	}
	if cb.Valor.Abatimento != nil {
		t.Fatalf("Q1 keeps its abatimento: %+v", cb.Valor.Abatimento)
	}
	if paid, err = ctl.PayPix(ctx, txid["Q1"], ""); err != nil || paid.Valor != "80.00" {
		t.Fatalf("the service charged %+v for Q1, want 80.00 (%v)", paid, err)
	}

	sum, err := status.Sync(ctx, src, status.Options{Run: opts.Run})
	if err != nil {
		t.Fatal(err)
	}
	// remessa status: two cobv with their abatimento changed, now 12,34 and none
	if sum.Rebate != (status.Tally{Count: 2, Cents: 1234}) || sum.Received.Cents != 13766+8000 {
		t.Errorf("status: rebate %+v, received %+v", sum.Rebate, sum.Received)
	}
	l, err := status.OpenLedger(src)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := l.Charges(ctx)
	l.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		want := map[string]struct {
			set   bool
			cents int64
			paid  int64
		}{"Q0": {true, 1234, 13766}, "Q1": {true, 0, 8000}, "Q2": {false, 0, 0}}[c.RowKey]
		if c.RebateSet != want.set || c.RebateCents != want.cents || c.PaidCents != want.paid {
			t.Errorf("ledger %s: rebate %v %d, paid %d; want %v %d, paid %d", c.RowKey, c.RebateSet, c.RebateCents, c.PaidCents, want.set, want.cents, want.paid)
		}
	}

	r, err := retorno.Write(ctx, src, retorno.Options{Layout: retorno.Layout240})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Check.OK || r.ByEvent[retorno.EventAbatimento].Count != 1 || r.ByEvent[retorno.EventAbatimentoCancelado].Count != 1 ||
		r.ByEvent[retorno.EventLiquidacao].Paid != 13766+8000 {
		t.Fatalf("retorno: %+v", r)
	}
	b, err := os.ReadFile(r.Path)
	if err != nil {
		t.Fatal(err)
	}
	// each U segment's movement (16–17), abatimento (48–62) and valor
	// pago (78–92), in the order of the titles
	var us []string
	for _, ln := range strings.Split(string(b), "\r\n") {
		if len(ln) == 240 && ln[13] == 'U' {
			us = append(us, ln[15:17]+" "+ln[47:62]+" "+ln[77:92])
		}
	}
	want := []string{
		"02 000000000000000 000000000000000", // Q0 entrada
		"12 000000000001234 000000000000000", // Q0 abatimento concedido, 12,34
		"06 000000000001234 000000000013766", // Q0 paid 137,66 with 12,34 off
		"02 000000000000000 000000000000000", // Q1 entrada
		"13 000000000000500 000000000000000", // Q1 abatimento of 5,00 cancelled
		"06 000000000000000 000000000008000", // Q1 paid 80,00
		"02 000000000000000 000000000000000", // Q2 entrada
	}
	if strings.Join(us, "\n") != strings.Join(want, "\n") {
		t.Errorf("retorno's U segments:\n%s\nwant\n%s", strings.Join(us, "\n"), strings.Join(want, "\n"))
	}
}

// TestLoadAbatimentoErrors: an abatimento job must say one of cents,
// by_key or remove, and a value above zero, each refused on its line.
func TestLoadAbatimentoErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for body, want := range map[string]string{
		"  abatimento: {cents: -5}\n":                "cents -5: o abatimento é um valor em centavos acima de zero (para cancelar, remove: true)",
		"  abatimento: {cents: 100, remove: true}\n": "abatimento deve ter cents (centavos), by_key (centavos por chave) ou remove: true, um dos três",
		"  abatimento: {by_key: {A1: 0}}\n":          "A1: 0: o abatimento é um valor em centavos acima de zero",
		"  abatimento: {}\n":                         "abatimento deve ter cents",
	} {
		p := filepath.Join(dir, "a.yaml")
		os.WriteFile(p, []byte("version: 1\nfrom_run: nada\nfilter: {keys: [A1]}\naction:\n"+body), 0o644)
		_, err := actions.Load(p, actions.LoadOptions{Getenv: noEnv})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), ":5:") {
			t.Errorf("%s: %v, want %q at line 5", strings.TrimSpace(body), err, want)
		}
	}
}
