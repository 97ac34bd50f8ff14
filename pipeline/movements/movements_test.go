package movements_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"remessa/api"
	"remessa/internal/cnabtest"
	"remessa/pipeline"
	"remessa/pipeline/actions"
	"remessa/pipeline/movements"
	"remessa/pipeline/retorno"
	"remessa/pipeline/run"
	"remessa/pipeline/run/runtest"
	"remessa/pipeline/status"
	"remessa/sandbox/control"
)

func write(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// remessa writes a CNAB 240 file and its job (slips, on_invalid: skip).
func remessa(t *testing.T, work, name string, nsa int, ts []cnabtest.Title240) string {
	t.Helper()
	write(t, work, name+".REM", cnabtest.File240(nsa, ts, "\r\n"))
	return write(t, work, name+".yaml", "version: 1\ninput: {file: "+name+".REM}\non_invalid: skip\n")
}

func title(key string, mov int, cents int64, due string) cnabtest.Title240 {
	t := cnabtest.OkTitle(key, cents)
	t.Mov, t.Due = mov, due
	return t
}

type slip struct{ status, due string }

// chargeIDs is each issued row's slip, by key, from the run's results.
func chargeIDs(t *testing.T, out *run.Outcome) map[string]int64 {
	t.Helper()
	res, err := out.LoadResults()
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	for _, r := range res.Rows {
		if len(r.ChargeIDs) == 1 {
			ids[r.Key] = r.ChargeIDs[0]
		}
	}
	return ids
}

func slips(t *testing.T, cl *api.Client, ids map[string]int64) map[string]slip {
	t.Helper()
	out := map[string]slip{}
	for key, id := range ids {
		ch, err := cl.GetCharge(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		s := slip{status: ch.Status}
		if ch.Payment != nil && ch.Payment.BankingBillet != nil {
			s.due = ch.Payment.BankingBillet.ExpireAt
		}
		out[key] = s
	}
	return out
}

func byKey(rec *movements.Record) map[string]movements.TitleOutcome {
	m := map[string]movements.TitleOutcome{}
	for _, t := range rec.Titles {
		m[t.Key+"/"+t.Code] = t
	}
	return m
}

// TestMovements issues a remessa of entries, then reads a second remessa
// that mixes them: 02 baixa and 06 vencimento on titles of the first run
// (carried out as action jobs on it), an 06 that would bring a date
// forward (not applicable), 04 abatimento on a slip and 31 (refused with
// the reason), a key no run issued, a protest instruction (refused by the
// issuance at its positions) and a new entry. The same file again is
// refused by the runs index; another file with an NSA already imported is
// refused unless --again.
func TestMovements(t *testing.T) {
	ctx := context.Background()
	work := t.TempDir()
	rn, err := run.StartEmbedded(filepath.Join(work, "sb"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rn.Close() })
	ropts := run.Options{Embedded: rn, RunsDir: filepath.Join(work, "out"), Getenv: runtest.NoEnv}
	var first []cnabtest.Title240
	for _, k := range []string{"A1", "A2", "A3", "A4", "A5", "A6"} {
		first = append(first, title(k, 1, 10000, "10022027"))
	}
	out1, rec1, err := movements.Run(ctx, remessa(t, work, "COB1", 1, first), ropts, actions.Options{})
	if err != nil || out1.ExitCode() != 0 || rec1 != nil {
		t.Fatalf("first remessa: %v, record %+v", err, rec1)
	}
	if out1.Results.Totals.Issued.Rows != 6 {
		t.Fatalf("first remessa issued %d", out1.Results.Totals.Issued.Rows)
	}
	// A6 is paid before the second remessa asks for its baixa
	cl := runtest.Client(t, rn)
	ids := chargeIDs(t, out1)
	if _, err := (&control.Client{BaseURL: rn.URL}).PayCharge(ctx, ids["A6"], control.PayRequest{}, rn.PayeeCode); err != nil {
		t.Fatal(err)
	}

	second := []cnabtest.Title240{
		title("A1", 2, 10000, "10022027"),
		title("A2", 2, 10000, "10022027"),
		title("A3", 6, 10000, "10032027"), // line 7
		title("A4", 6, 10000, "10012027"), // earlier than 10/02/2027
		title("A5", 4, 10000, "10022027"),
		title("A6", 2, 10000, "10022027"),
		title("ZZ", 2, 10000, "10022027"),
		title("A1", 9, 10000, "10022027"), // protesto: line 17
		title("B1", 1, 25000, "15032027"),
		title("A2", 31, 10000, "10022027"),
	}
	second[4].Abat = 1500
	job2 := remessa(t, work, "COB2", 2, second)

	j2, err := pipeline.Load(job2, pipeline.LoadOptions{Getenv: runtest.NoEnv})
	if err != nil {
		t.Fatal(err)
	}
	p, err := movements.Scan(ctx, j2, ropts.RunsDir, "")
	if err != nil {
		t.Fatal(err)
	}
	if p.Titles != 8 || len(p.Groups) != 2 || len(p.Refused) != 3 {
		t.Fatalf("plan: %d titles, %d groups, %d refused: %+v", p.Titles, len(p.Groups), len(p.Refused), p)
	}
	if g := p.Groups[0]; g.Code != "02" || g.Kind != actions.Cancel || g.RunID != out1.RunID || len(g.Titles) != 3 {
		t.Errorf("group 02: %+v", g)
	}
	if g := p.Groups[1]; g.Code != "06" || g.Kind != actions.ChangeDueDate || len(g.Titles) != 2 || g.Titles[0].Due != "2027-03-10" || g.Titles[0].Line != 7 {
		t.Errorf("group 06: %+v", g)
	}
	var text strings.Builder
	p.WriteText(&text)
	for _, want := range []string{
		"02 pedido de baixa: 3 título(s) da execução " + out1.RunID,
		"linha 7: A3 → novo vencimento 10/03/2027",
		"linha 11, posições 16–17, título A5, movimento 04: movimento 04 (concessão de abatimento): o serviço não tem abatimento para boletos e carnês",
		"título ZZ, movimento 02: nenhuma execução desta pasta emitiu o título ZZ no serviço embedded",
		"título A2, movimento 31: movimento 31 (alteração de outros dados): o arquivo não diz quais dados mudaram",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("plan text lacks %q:\n%s", want, text.String())
		}
	}

	out2, rec, err := movements.Run(ctx, job2, ropts, actions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// the entry B1 issued; the protest refused by the issuance
	if tt := out2.Results.Totals; tt.Issued.Rows != 1 || tt.Refused.Rows != 1 {
		t.Errorf("second remessa: %d issued, %d refused", tt.Issued.Rows, tt.Refused.Rows)
	}
	res2, err := out2.LoadResults()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res2.Rows {
		if r.Key == "A1" && (len(r.Problems) != 1 || r.Problems[0].Code != "cnab_movimento" || r.SourceRow != 17 ||
			!strings.Contains(r.Problems[0].Message, "movimento 09 (protestar): o serviço não tem esta instrução")) {
			t.Errorf("protest row: %+v", r)
		}
	}
	want := map[string][2]string{
		"A1/02": {movements.Done, ""}, "A2/02": {movements.Done, ""},
		"A6/02": {movements.Skipped, "não se aplica: já paga"},
		"ZZ/02": {movements.Refused, "nenhuma execução desta pasta emitiu o título ZZ"},
		"A3/06": {movements.Done, ""},
		"A4/06": {movements.Skipped, "não se aplica: a nova data 10/01/2027 é anterior ao vencimento atual"},
		"A5/04": {movements.Refused, "movimento 04 (concessão de abatimento)"},
		"A2/31": {movements.Refused, "movimento 31"},
	}
	got := byKey(rec)
	if len(rec.Titles) != len(want) || !rec.Complete || rec.ExitCode() != 1 {
		t.Errorf("record: %d titles, complete %v, exit %d", len(rec.Titles), rec.Complete, rec.ExitCode())
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok || g.State != w[0] || !strings.HasPrefix(g.Reason, w[1]) && w[1] != "" {
			t.Errorf("%s: %+v, want %v", k, g, w)
		}
	}
	s := slips(t, cl, ids)
	wantSlips := map[string]slip{"A1": {"canceled", "2027-02-10"}, "A2": {"canceled", "2027-02-10"}, "A3": {"waiting", "2027-03-10"},
		"A4": {"waiting", "2027-02-10"}, "A5": {"waiting", "2027-02-10"}, "A6": {"paid", "2027-02-10"}}
	for k, w := range wantSlips {
		if s[k] != w {
			t.Errorf("slip %s: %+v, want %+v", k, s[k], w)
		}
	}
	// the record is on disk, and resuming a complete record sends nothing
	again, err := movements.Resume(ctx, out2.Dir, actions.Options{Run: ropts})
	if err != nil || len(again.Titles) != len(want) || !again.Complete {
		t.Fatalf("resume: %v %+v", err, again)
	}

	// the same file again: refused by the runs index, nothing moves
	if _, _, err := movements.Run(ctx, job2, ropts, actions.Options{}); !errors.As(err, new(*run.DuplicateError)) {
		t.Fatalf("same file again: %v", err)
	}
	// another file with NSA 2 for the same account
	third := []cnabtest.Title240{title("C1", 1, 5000, "10022027")}
	job3 := remessa(t, work, "COB3", 2, third)
	_, _, err = movements.Run(ctx, job3, ropts, actions.Options{})
	var ne *run.NSAError
	if !errors.As(err, &ne) || ne.NSA != 2 || ne.Earlier.RunID != out2.RunID ||
		!strings.Contains(err.Error(), "número sequencial (NSA) 2 no header, já importado para a mesma conta (banco 341, empresa 12345678000195, convênio CONVENIO123, agência 1234, conta 56789) na execução "+out2.RunID) {
		t.Fatalf("NSA again: %v", err)
	}
	o := ropts
	o.Again = true
	if out3, _, err := movements.Run(ctx, job3, o, actions.Options{}); err != nil || out3.Results.Totals.Issued.Rows != 1 {
		t.Fatalf("--again: %v", err)
	}
}

// TestMovementsAbatimentoCobv issues a CNAB remessa as cobv (K1 R$ 150,00;
// K2 R$ 80,00 with an abatimento of R$ 5,00), then a second remessa with
// 04 on K1 (abatimento R$ 12,34), 05 on K2, and 04 without a value on K1's
// neighbour K3: the first two are carried out as abatimento actions on
// the first run (PATCH valor.abatimento), the third is refused with the
// reason; the service then asks K1 150,00 − 12,34 = 137,66 and K2 its
// 80,00; the retorno says 12 and 13.
func TestMovementsAbatimentoCobv(t *testing.T) {
	ctx := context.Background()
	work := t.TempDir()
	rn, err := run.StartEmbedded(filepath.Join(work, "sb"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rn.Close() })
	ropts := run.Options{Embedded: rn, RunsDir: filepath.Join(work, "out"), Getenv: runtest.NoEnv}
	cobvJob := func(name string, nsa int, ts []cnabtest.Title240) string {
		write(t, work, name+".REM", cnabtest.File240(nsa, ts, "\r\n"))
		return write(t, work, name+".yaml", "version: 1\ninput: {file: "+name+".REM}\non_invalid: skip\nissue:\n  cobv:\n    chave: financeiro@example.com\n")
	}
	first := []cnabtest.Title240{title("K1", 1, 15000, "10022027"), title("K2", 1, 8000, "10022027"), title("K3", 1, 5000, "10022027")}
	first[1].Abat = 500
	out1, _, err := movements.Run(ctx, cobvJob("PIX1", 1, first), ropts, actions.Options{})
	if err != nil || out1.ExitCode() != 0 || out1.Results.Totals.Issued.Rows != 3 {
		t.Fatalf("first remessa: %v %+v", err, out1)
	}
	res1, err := out1.LoadResults()
	if err != nil {
		t.Fatal(err)
	}
	txid := map[string]string{}
	for _, r := range res1.Rows {
		txid[r.Key] = r.Txid
	}

	second := []cnabtest.Title240{title("K1", 4, 15000, "10022027"), title("K2", 5, 8000, "10022027"), title("K3", 4, 5000, "10022027")}
	second[0].Abat = 1234
	job2 := cobvJob("PIX2", 2, second)
	j2, err := pipeline.Load(job2, pipeline.LoadOptions{Getenv: runtest.NoEnv})
	if err != nil {
		t.Fatal(err)
	}
	p, err := movements.Scan(ctx, j2, ropts.RunsDir, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Groups) != 2 || p.Groups[0].Kind != actions.Abatimento || p.Groups[0].Titles[0].Rebate != 1234 ||
		p.Groups[1].Code != "05" || len(p.Refused) != 1 || p.Refused[0].Key != "K3" {
		t.Fatalf("plan: %+v", p)
	}
	var text strings.Builder
	p.WriteText(&text)
	for _, want := range []string{"K1 (R$ 150,00) → abatimento de R$ 12,34", "K2 (R$ 80,00) → cancelar o abatimento",
		"título K3, movimento 04: movimento 04 (concessão de abatimento) sem valor de abatimento"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("plan text lacks %q:\n%s", want, text.String())
		}
	}
	_, rec, err := movements.Run(ctx, job2, ropts, actions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := byKey(rec)
	if got["K1/04"].State != movements.Done || got["K2/05"].State != movements.Done || got["K3/04"].State != movements.Refused || rec.ExitCode() != 1 {
		t.Fatalf("record: %+v", rec.Titles)
	}
	cl := runtest.Client(t, rn)
	for key, want := range map[string]string{"K1": "12.34", "K2": "", "K3": ""} {
		cb, err := cl.GetCobV(ctx, txid[key])
		if err != nil {
			t.Fatal(err)
		}
		have := ""
		if cb.Valor.Abatimento != nil {
			have = cb.Valor.Abatimento.ValorPerc
		}
		if have != want {
			t.Errorf("%s: abatimento %q, want %q", key, have, want)
		}
	}
	ctl := &control.Client{BaseURL: rn.URL}
	if paid, err := ctl.PayPix(ctx, txid["K1"], ""); err != nil || paid.Valor != "137.66" {
		t.Fatalf("K1 paid %+v (%v), want 137.66", paid, err)
	}
	if paid, err := ctl.PayPix(ctx, txid["K2"], ""); err != nil || paid.Valor != "80.00" {
		t.Fatalf("K2 paid %+v (%v), want 80.00", paid, err)
	}
	r, err := retorno.Write(ctx, out1.Dir, retorno.Options{Sync: true, Status: status.Options{Run: ropts}})
	if err != nil {
		t.Fatal(err)
	}
	lq := r.ByEvent[retorno.EventLiquidacao]
	if !r.Check.OK || r.ByEvent[retorno.EventAbatimento].Count != 1 || r.ByEvent[retorno.EventAbatimentoCancelado].Count != 1 ||
		lq.Count != 2 || lq.Paid != 13766+8000 {
		t.Fatalf("retorno: %+v", r.ByEvent)
	}
}
