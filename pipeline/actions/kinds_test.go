package actions_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"remessa/pipeline/actions"
	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/pipeline/run/runtest"
	"remessa/pipeline/status"
	"remessa/rules"
	"remessa/sandbox"
	"remessa/sandbox/control"
)

// issueBoletos gives the test its own copy of samples/boletos (25 slips)
// on its own embedded sandbox.
func issueBoletos(t *testing.T) (string, *sandbox.Running, *results.Results) {
	t.Helper()
	is := boletos.Issue(t)
	return is.Dir, is.Sandbox, is.Results
}

// issueCobv issues n due-date Pix charges (keys P00…) on a shared embedded
// sandbox.
func issueCobv(t *testing.T, n int) (string, *sandbox.Running, *results.Results) {
	t.Helper()
	is := runtest.Cobv(t, n)
	return is.Dir, is.Sandbox, is.Results
}

func skipsWith(p *actions.Plan, reason string) int {
	n := 0
	for _, s := range p.Skipped {
		if s.Reason == reason {
			n++
		}
	}
	return n
}

// runTwice runs an action job, checks it did what it planned, and runs it
// again: the second run must plan nothing, send nothing, and report every
// charge the first one changed or skipped as not applicable.
func runTwice(t *testing.T, job string, opts actions.Options, wantDone int) (*actions.Outcome, *actions.Outcome) {
	t.Helper()
	ctx := context.Background()
	out, err := actions.Run(ctx, job, opts)
	if err != nil {
		t.Fatal(err)
	}
	if out.Done != wantDone || out.ExitCode() != 0 || calls(t, out.Dir) != wantDone {
		t.Fatalf("%s: %d done (want %d), exit %d, %d calls: %+v", filepath.Base(job), out.Done, wantDone, out.ExitCode(), calls(t, out.Dir), out.Items)
	}
	again, err := actions.Run(ctx, job, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Plan.Items) != 0 || again.Done != 0 || calls(t, again.Dir) != 0 {
		t.Errorf("%s again: %d items, %d done, %d calls; want none: %+v", filepath.Base(job), len(again.Plan.Items), again.Done, calls(t, again.Dir), again.Plan.Items)
	}
	if len(again.Plan.Skipped) != out.Plan.Charges+len(out.Plan.Skipped) {
		t.Errorf("%s again: %d skipped, want %d: %+v", filepath.Base(job), len(again.Plan.Skipped), out.Plan.Charges+len(out.Plan.Skipped), again.Plan.Skipped)
	}
	return out, again
}

func reasonPrefix(t *testing.T, o *actions.Outcome, prefix string) {
	t.Helper()
	for _, s := range o.Plan.Skipped {
		if !strings.HasPrefix(s.Reason, prefix) {
			t.Errorf("%s: %q, want %q…", s.RowKey, s.Reason, prefix)
		}
	}
}

func slipDue(t *testing.T, rn *sandbox.Running, id int64) (string, string) {
	t.Helper()
	ch, err := client(t, rn).GetCharge(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	due := ""
	if ch.Payment != nil && ch.Payment.BankingBillet != nil {
		due = ch.Payment.BankingBillet.ExpireAt
	}
	return ch.Status, due
}

// TestSlipActions: on samples/boletos, cancel two slips by key (a paid one
// in the filter is not applicable), move one due date 7 days, settle one,
// resend one to another address; each job run again sends nothing.
func TestSlipActions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, rn, res := issueBoletos(t)
	opts := actions.Options{Run: run.Options{Embedded: rn, Getenv: noEnv}}
	ctl := &control.Client{BaseURL: rn.URL}
	r := res.Rows
	if len(r) < 6 || len(r[0].ChargeIDs) != 1 {
		t.Fatalf("issued %d rows: %+v", len(r), r[0])
	}
	id := func(i int) int64 { return r[i].ChargeIDs[0] }
	if _, err := ctl.PayCharge(ctx, id(2), control.PayRequest{}, rn.PayeeCode); err != nil {
		t.Fatal(err)
	}

	// cancel
	job := writeJob(t, src, fmt.Sprintf("filter: {keys: [%s, %s, %s]}\naction:\n  cancel: {}\n", r[0].Key, r[1].Key, r[2].Key))
	out, again := runTwice(t, job, opts, 2)
	if skipsWith(again.Plan, "não se aplica: já cancelada") != 2 || skipsWith(again.Plan, "não se aplica: já paga") != 1 {
		t.Errorf("cancel again: %+v", again.Plan.Skipped)
	}
	p := out.Plan
	if len(p.Items) != 2 || p.Charges != 2 || p.Cents != r[0].AmountCents+r[1].AmountCents || p.Calls["PUT /v1/charge/:id/cancel"] != 2 {
		t.Errorf("cancel plan: %+v", p)
	}
	for i, it := range p.Items {
		want := fmt.Sprintf("boleto %d de %s (venc. %s): cancelada, %s", id(i), r[i].Key, brDate(r[i].DueDate), rules.FormatBRL(r[i].AmountCents))
		if it.Target != actions.TargetCharge || it.ChargeID != id(i) || it.Text != want {
			t.Errorf("cancel item %d: %q (%s %d), want %q", i, it.Text, it.Target, it.ChargeID, want)
		}
	}
	if len(p.Skipped) != 1 || p.Skipped[0].RowKey != r[2].Key || p.Skipped[0].Reason != "não se aplica: já paga" {
		t.Errorf("cancel skips: %+v", p.Skipped)
	}
	for i := 0; i < 3; i++ {
		want := map[bool]string{true: "canceled", false: "paid"}[i < 2]
		if st, _ := slipDue(t, rn, id(i)); st != want {
			t.Errorf("slip %s: %s, want %s", r[i].Key, st, want)
		}
	}

	// change_due_date {days: 7}
	_, due := slipDue(t, rn, id(3))
	d, _ := rules.ParseISODate(due)
	newDue := rules.FormatISODate(d.AddDate(0, 0, 7))
	out, again = runTwice(t, writeJob(t, src, fmt.Sprintf("filter: {keys: [%s]}\naction:\n  change_due_date: {days: 7}\n", r[3].Key)), opts, 1)
	reasonPrefix(t, again, "não se aplica: já feito pela ação "+out.ID)
	if it := out.Plan.Items[0]; it.Target != actions.TargetCharge || it.Charges[0].NewDue != newDue || out.Plan.Calls["PUT /v1/charge/:id/billet"] != 1 {
		t.Errorf("due date item: %+v", it)
	}
	if st, got := slipDue(t, rn, id(3)); st != "waiting" || got != newDue {
		t.Errorf("slip %s: %s due %s, want waiting due %s", r[3].Key, st, got, newDue)
	}

	// settle
	out, again = runTwice(t, writeJob(t, src, fmt.Sprintf("filter: {keys: [%s]}\naction:\n  settle: {}\n", r[4].Key)), opts, 1)
	reasonPrefix(t, again, "não se aplica: já paga")
	if out.Plan.Calls["PUT /v1/charge/:id/settle"] != 1 {
		t.Errorf("settle calls: %v", out.Plan.Calls)
	}
	if st, _ := slipDue(t, rn, id(4)); st != "settled" {
		t.Errorf("slip %s: %s, want settled", r[4].Key, st)
	}

	// resend to another address
	out, again = runTwice(t, writeJob(t, src, fmt.Sprintf("filter: {keys: [%s]}\naction:\n  resend: {email: secretaria@example.com}\n", r[5].Key)), opts, 1)
	reasonPrefix(t, again, "não se aplica: já feito pela ação "+out.ID)
	if it := out.Items[0]; it.Email != "secretaria@example.com" || it.State != actions.StateDone || out.Plan.Calls["POST /v1/charge/:id/billet/resend"] != 1 {
		t.Errorf("resend: %+v", it)
	}
	ch, err := client(t, rn).GetCharge(ctx, id(5))
	if err != nil {
		t.Fatal(err)
	}
	if n := historyCount(ch.History, "Boleto reenviado para secretaria@example.com"); n != 1 {
		t.Errorf("slip %s: resent %d times, want once: %+v", r[5].Key, n, ch.History)
	}

	// the ledger holds every effect
	l, err := status.OpenLedger(src)
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := l.Charges(ctx)
	l.Close()
	byKey := map[string]status.Charge{}
	for _, c := range cs {
		byKey[c.RowKey] = c
	}
	for i, want := range []string{status.StateCancelled, status.StateCancelled, status.StatePaid, status.StateOpen, status.StateSettled, status.StateOpen} {
		if c := byKey[r[i].Key]; c.State != want {
			t.Errorf("ledger %s: %s, want %s", r[i].Key, c.State, want)
		}
	}
	if c := byKey[r[3].Key]; c.Due != newDue {
		t.Errorf("ledger %s due %s, want %s", r[3].Key, c.Due, newDue)
	}
}

func brDate(iso string) string {
	d, err := rules.ParseISODate(iso)
	if err != nil {
		return iso
	}
	return d.Format("02/01/2006")
}

// TestCobvActions: 20 cobv; cancel 3 by key (a paid one in the filter is
// left alone and reported as already paid), move 2 due dates, and the
// ledger agrees with a status sync afterwards.
func TestCobvActions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, rn, res := issueCobv(t, 20)
	opts := actions.Options{Run: run.Options{Embedded: rn, Getenv: noEnv}}
	ctl := &control.Client{BaseURL: rn.URL}
	cl := client(t, rn)
	r := res.Rows
	if len(r) != 20 {
		t.Fatalf("issued %d rows", len(r))
	}
	if _, err := ctl.PayPix(ctx, r[3].Txid, ""); err != nil {
		t.Fatal(err)
	}

	// cancel P00-P02, and P03 which is paid
	job := writeJob(t, src, fmt.Sprintf("filter: {keys: [%s, %s, %s, %s]}\naction:\n  cancel: {}\n", r[0].Key, r[1].Key, r[2].Key, r[3].Key))
	out, again := runTwice(t, job, opts, 3)
	if skipsWith(again.Plan, "não se aplica: já cancelada") != 3 || skipsWith(again.Plan, "não se aplica: já paga") != 1 {
		t.Errorf("cancel again: %+v", again.Plan.Skipped)
	}
	p := out.Plan
	if len(p.Items) != 3 || p.Calls["PATCH /v2/cobv/:txid"] != 3 || p.Cents != r[0].AmountCents+r[1].AmountCents+r[2].AmountCents {
		t.Errorf("cancel plan: %+v", p)
	}
	for i, it := range p.Items {
		if it.Target != actions.TargetCobv || it.Txid != r[i].Txid {
			t.Errorf("cancel item %d: %+v", i, it)
		}
	}
	if len(p.Skipped) != 1 || p.Skipped[0].RowKey != r[3].Key || p.Skipped[0].Reason != "não se aplica: já paga" {
		t.Errorf("cancel skips: %+v", p.Skipped)
	}
	for i := 0; i < 4; i++ {
		cb, err := cl.GetCobV(ctx, r[i].Txid)
		if err != nil {
			t.Fatal(err)
		}
		want := map[bool]string{true: "REMOVIDA_PELO_USUARIO_RECEBEDOR", false: "CONCLUIDA"}[i < 3]
		if cb.Status != want {
			t.Errorf("cobv %s: %s, want %s", r[i].Key, cb.Status, want)
		}
	}

	// change_due_date {date: ...} for P04 and P05
	newDue := rules.FormatISODate(rules.Today(time.Now()).AddDate(0, 0, 45))
	out, again = runTwice(t, writeJob(t, src, fmt.Sprintf("filter: {keys: [%s, %s]}\naction:\n  change_due_date: {date: %s}\n", r[4].Key, r[5].Key, newDue)), opts, 2)
	reasonPrefix(t, again, "não se aplica: já vence em "+brDate(newDue))
	if out.Plan.Calls["PATCH /v2/cobv/:txid"] != 2 {
		t.Errorf("due date calls: %v", out.Plan.Calls)
	}
	for i := 4; i < 7; i++ {
		cb, err := cl.GetCobV(ctx, r[i].Txid)
		if err != nil {
			t.Fatal(err)
		}
		want := r[i].DueDate
		if i < 6 {
			want = newDue
		}
		if cb.Calendario.DataDeVencimento != want || cb.Status != "ATIVA" {
			t.Errorf("cobv %s: %s due %s, want ATIVA due %s", r[i].Key, cb.Status, cb.Calendario.DataDeVencimento, want)
		}
	}

	// the ledger as the actions left it, then as a full sync sees it
	read := func() map[string]status.Charge {
		l, err := status.OpenLedger(src)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		cs, err := l.Charges(ctx)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]status.Charge{}
		for _, c := range cs {
			m[c.RowKey] = c
		}
		return m
	}
	check := func(when string, m map[string]status.Charge) {
		t.Helper()
		if len(m) != 20 {
			t.Errorf("%s: %d charges in the ledger", when, len(m))
		}
		for i, row := range r {
			c := m[row.Key]
			wantState, wantDue := status.StateOpen, row.DueDate
			switch {
			case i < 3:
				wantState = status.StateCancelled
			case i == 3:
				wantState = status.StatePaid
			case i < 6:
				wantDue = newDue
			}
			if c.State != wantState || c.Due != wantDue {
				t.Errorf("%s: %s is %s due %s, want %s due %s", when, row.Key, c.State, c.Due, wantState, wantDue)
			}
		}
	}
	before := read()
	check("after the actions", before)
	s, err := status.Sync(ctx, src, status.Options{Run: opts.Run})
	if err != nil {
		t.Fatal(err)
	}
	if s.Cancel.Count != 3 || s.Received.Count != 1 || s.Received.Cents != r[3].AmountCents || s.Open.Count != 16 {
		t.Errorf("sync: %+v", s)
	}
	after := read()
	check("after a sync", after)
	for k, c := range before {
		a := after[k]
		if a.State != c.State || a.Due != c.Due || a.Status != c.Status || a.PaidCents != c.PaidCents {
			t.Errorf("%s: actions left %+v, the sync %+v", k, c, a)
		}
	}
}

// TestInputKeysSheet: input: {file, key} selects rows by a sheet of keys;
// a key the run does not have is reported, not a crash.
func TestInputKeysSheet(t *testing.T) {
	t.Parallel()
	src, rn, res := issueBoletos(t)
	opts := actions.Options{Run: run.Options{Embedded: rn, Getenv: noEnv}}
	r := res.Rows
	job := writeJob(t, src, "input: {file: chaves.csv, key: Código}\naction:\n  cancel: {}\n")
	os.WriteFile(filepath.Join(filepath.Dir(job), "chaves.csv"), []byte(fmt.Sprintf("Código;Motivo\n%s;saiu\n%s;saiu\nZ-999;não existe\n", r[7].Key, r[8].Key)), 0o644)
	var progress strings.Builder
	opts.Progress = &progress
	out, err := actions.Run(context.Background(), job, opts)
	if err != nil {
		t.Fatal(err)
	}
	p := out.Plan
	if len(p.Items) != 2 || p.Items[0].RowKey != r[7].Key || p.Items[1].RowKey != r[8].Key || out.Done != 2 || out.ExitCode() != 0 {
		t.Fatalf("plan %+v, outcome %+v", p.Items, out)
	}
	if len(p.UnknownKeys) != 1 || p.UnknownKeys[0] != "Z-999" {
		t.Errorf("unknown keys: %v", p.UnknownKeys)
	}
	if !strings.Contains(progress.String(), "Chaves que não estão na execução (1): Z-999") {
		t.Errorf("the plan does not name the unknown key:\n%s", progress.String())
	}
	rep, err := os.ReadFile(filepath.Join(out.Dir, "relatorio.txt"))
	if err != nil || !strings.Contains(string(rep), "Z-999") {
		t.Errorf("relatorio.txt does not name the unknown key (%v):\n%s", err, rep)
	}
	for i := 0; i < len(r); i++ {
		st, _ := slipDue(t, rn, r[i].ChargeIDs[0])
		want := map[bool]string{true: "canceled", false: "waiting"}[i == 7 || i == 8]
		if st != want {
			t.Errorf("slip %s: %s, want %s", r[i].Key, st, want)
		}
	}
	// a column the sheet does not have
	bad := writeJob(t, src, "input: {file: chaves.csv, key: Matrícula}\naction:\n  cancel: {}\n")
	os.WriteFile(filepath.Join(filepath.Dir(bad), "chaves.csv"), []byte("Código\nB-001\n"), 0o644)
	_, err = actions.Run(context.Background(), bad, opts)
	if err == nil || !strings.Contains(err.Error(), "coluna \"Matrícula\" não encontrada") {
		t.Errorf("missing column: %v", err)
	}
}
