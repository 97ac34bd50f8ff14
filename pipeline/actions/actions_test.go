package actions_test

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"remessa/api"
	"remessa/pipeline/actions"
	"remessa/pipeline/journal"
	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/pipeline/run/runtest"
	"remessa/pipeline/status"
	"remessa/reports/conciliacao"
	"remessa/rules"
	"remessa/sandbox"
	"remessa/sandbox/control"
)

var noEnv = func(string) (string, bool) { return "", false }

// The runs the tests share, issued once per test binary (TestMain removes
// them): the school's carnets (40 × 12) and samples/boletos (25 slips).
// Each test works on its own copy of the run and of the sandbox's data.
var (
	escola  = runtest.ShareSample("../../samples/escola", "carnes.yaml", "alunos.xlsx")
	boletos = runtest.ShareSample("../../samples/boletos", "boletos.yaml", "clientes.csv")
)

// issueEscola gives the test its own copy of the school's carnets on its
// own embedded sandbox and returns the run folder, the sandbox and the
// results.
func issueEscola(t *testing.T) (string, *sandbox.Running, *results.Results) {
	t.Helper()
	is := escola.Issue(t)
	return is.Dir, is.Sandbox, is.Results
}

func client(t *testing.T, rn *sandbox.Running) *api.Client { return runtest.Client(t, rn) }

func writeJob(t *testing.T, src, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "acao.yaml")
	if err := os.WriteFile(p, []byte(fmt.Sprintf("version: 1\nname: teste\nfrom_run: %s\n%s", src, body)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func calls(t *testing.T, dir string) int {
	jn, err := journal.Open(filepath.Join(dir, journal.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer jn.Close()
	cs, err := jn.Calls(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return len(cs)
}

// TestCancelTwoCarnets: an action job cancels two carnets; the paid
// parcels stay paid, the plan names exactly the open parcels and their
// amount, the ledger and the reconciliation count them cancelled, and the
// same job again finds nothing to do and sends nothing.
func TestCancelTwoCarnets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, rn, res := issueEscola(t)
	ctl := &control.Client{BaseURL: rn.URL}
	a, b := res.Rows[0], res.Rows[1]
	for _, x := range []struct {
		carnet int64
		n      int
	}{{a.CarnetID, 1}, {a.CarnetID, 2}, {b.CarnetID, 1}} {
		if _, err := ctl.PayParcel(ctx, x.carnet, x.n, control.PayRequest{}, rn.PayeeCode); err != nil {
			t.Fatal(err)
		}
	}
	job := writeJob(t, src, fmt.Sprintf("filter: {status: [waiting, unpaid], keys: [%s, %s]}\naction:\n  cancel: {}\n", a.Key, b.Key))
	opts := actions.Options{Run: run.Options{Embedded: rn, Getenv: noEnv}}
	out, err := actions.Run(ctx, job, opts)
	if err != nil {
		t.Fatal(err)
	}
	p := out.Plan
	if len(p.Items) != 2 || p.Charges != 21 {
		t.Fatalf("plan: %d items, %d charges, want 2 and 21 (10 + 11 open parcels)", len(p.Items), p.Charges)
	}
	var want int64
	for i, row := range []results.Row{a, b} {
		it := p.Items[i]
		paid := 2 - i
		var cents int64
		for _, pc := range row.Parcels[paid:] {
			cents += pc.ValueCents
		}
		want += cents
		if it.Target != actions.TargetCarnet || it.CarnetID != row.CarnetID || len(it.Charges) != 12-paid || it.Cents != cents {
			t.Errorf("item %d: %+v", i, it)
		}
		for k, ch := range it.Charges {
			if ch.Parcel != paid+k+1 || ch.ChargeID != row.Parcels[paid+k].ChargeID {
				t.Errorf("item %d names parcel %d (charge %d), want parcel %d", i, ch.Parcel, ch.ChargeID, paid+k+1)
			}
		}
		wantText := fmt.Sprintf("carnê %d de %s: %d parcelas em aberto canceladas, %s", row.CarnetID, row.Key, 12-paid, rules.FormatBRL(cents))
		if it.Text != wantText {
			t.Errorf("plan line %q, want %q", it.Text, wantText)
		}
	}
	if p.Cents != want {
		t.Errorf("plan total %d, want %d", p.Cents, want)
	}
	if out.Done != 2 || out.ExitCode() != 0 {
		t.Fatalf("outcome: %+v", out)
	}
	cl := client(t, rn)
	for i, row := range []results.Row{a, b} {
		cn, err := cl.GetCarnet(ctx, row.CarnetID)
		if err != nil {
			t.Fatal(err)
		}
		for k, pc := range cn.Charges {
			wantSt := "canceled"
			if k < 2-i {
				wantSt = "paid"
			}
			if pc.Status != wantSt {
				t.Errorf("carnet %d parcel %d: %s, want %s", row.CarnetID, k+1, pc.Status, wantSt)
			}
		}
	}
	// the ledger, then the reconciliation
	l, err := status.OpenLedger(src)
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := l.Charges(ctx)
	l.Close()
	var n int
	var cents int64
	for _, c := range cs {
		if c.State == status.StateCancelled {
			n++
			cents += c.ValueCents
		}
	}
	if n != 21 || cents != want {
		t.Errorf("ledger: %d cancelled (%d cents), want 21 (%d)", n, cents, want)
	}
	rec, err := conciliacao.FromRun(ctx, src, rules.Today(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Totals.Cancelled != want {
		t.Errorf("reconciliation: cancelled %d cents, want %d", rec.Totals.Cancelled, want)
	}
	// again: nothing left to do, nothing sent
	again, err := actions.Run(ctx, job, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Plan.Items) != 0 || again.Done != 0 || calls(t, again.Dir) != 0 {
		t.Errorf("second run: %d items, %d done, %d calls; want none", len(again.Plan.Items), again.Done, calls(t, again.Dir))
	}
	// without the status filter, the paid and cancelled parcels are reported as not applicable
	job2 := writeJob(t, src, fmt.Sprintf("filter: {keys: [%s]}\naction:\n  cancel: {}\n", a.Key))
	third, err := actions.Run(ctx, job2, opts)
	if err != nil {
		t.Fatal(err)
	}
	var paidSkips, cancelSkips int
	for _, s := range third.Plan.Skipped {
		switch s.Reason {
		case "não se aplica: já paga":
			paidSkips++
		case "não se aplica: já cancelada":
			cancelSkips++
		}
	}
	if len(third.Plan.Items) != 0 || paidSkips != 2 || cancelSkips != 10 || calls(t, third.Dir) != 0 {
		t.Errorf("third run: %d items, %d paid and %d cancelled skips, %d calls", len(third.Plan.Items), paidSkips, cancelSkips, calls(t, third.Dir))
	}
}

// TestChangeDueDateSettleSecondCopy: five parcels get new due dates, three
// are settled, and second copies come one PDF per key plus a zip.
func TestChangeDueDateSettleSecondCopy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, rn, res := issueEscola(t)
	cl := client(t, rn)
	opts := actions.Options{Run: run.Options{Embedded: rn, Getenv: noEnv}}

	// change_due_date: parcels 8-12 of row 2, five days later
	r2 := res.Rows[2]
	out, err := actions.Run(ctx, writeJob(t, src, fmt.Sprintf("filter: {keys: [%s], parcels: [8, 9, 10, 11, 12]}\naction:\n  change_due_date: {days: 5}\n", r2.Key)), opts)
	if err != nil {
		t.Fatal(err)
	}
	if out.Done != 1 || out.Plan.Charges != 5 || out.Plan.Items[0].Target != actions.TargetParcels {
		t.Fatalf("due date: %+v", out.Plan)
	}
	cn, err := cl.GetCarnet(ctx, r2.CarnetID)
	if err != nil {
		t.Fatal(err)
	}
	for k, pc := range cn.Charges {
		want := r2.Parcels[k].DueDate
		if k >= 7 {
			d, _ := rules.ParseISODate(want)
			want = rules.FormatISODate(d.AddDate(0, 0, 5))
		}
		if pc.ExpireAt != want {
			t.Errorf("parcel %d due %s, want %s", k+1, pc.ExpireAt, want)
		}
	}
	l, _ := status.OpenLedger(src)
	cs, _ := l.Charges(ctx)
	l.Close()
	moved := 0
	for _, c := range cs {
		if c.RowIndex == r2.Index && c.Parcel >= 8 && c.Due != r2.Parcels[c.Parcel-1].DueDate {
			moved++
		}
	}
	if moved != 5 {
		t.Errorf("the ledger shows %d new due dates, want 5", moved)
	}
	again, err := actions.Run(ctx, writeJob(t, src, fmt.Sprintf("filter: {keys: [%s], parcels: [8, 9, 10, 11, 12]}\naction:\n  change_due_date: {date: %s}\n", r2.Key, cn.Charges[7].ExpireAt)), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Plan.Items) > 0 && calls(t, again.Dir) > 1 {
		t.Errorf("moving to a date already set: %d calls", calls(t, again.Dir))
	}

	// settle parcels 1-3 of row 3
	r3 := res.Rows[3]
	job := writeJob(t, src, fmt.Sprintf("filter: {keys: [%s], parcels: [1, 2, 3]}\naction:\n  settle: {}\n", r3.Key))
	out, err = actions.Run(ctx, job, opts)
	if err != nil {
		t.Fatal(err)
	}
	if out.Done != 3 || len(out.Plan.Items) != 3 {
		t.Fatalf("settle: %d done of %d items", out.Done, len(out.Plan.Items))
	}
	cn, _ = cl.GetCarnet(ctx, r3.CarnetID)
	for k, pc := range cn.Charges {
		want := "waiting"
		if k < 3 {
			want = "settled"
		}
		if pc.Status != want {
			t.Errorf("row 3 parcel %d: %s, want %s", k+1, pc.Status, want)
		}
	}
	out, err = actions.Run(ctx, job, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Plan.Items) != 0 || calls(t, out.Dir) != 0 {
		t.Errorf("settle again: %d items, %d calls", len(out.Plan.Items), calls(t, out.Dir))
	}

	// second copies of rows 4 and 5
	keys := []string{res.Rows[4].Key, res.Rows[5].Key}
	out, err = actions.Run(ctx, writeJob(t, src, fmt.Sprintf("filter: {keys: [%s]}\naction:\n  second_copy: {dir: vias}\n", strings.Join(keys, ", "))), opts)
	if err != nil {
		t.Fatal(err)
	}
	if out.Done != 2 || out.Zip == "" {
		t.Fatalf("second copy: %+v", out)
	}
	for i, k := range keys {
		p := filepath.Join(out.Dir, "vias", k, fmt.Sprintf("carne-%d.pdf", res.Rows[4+i].CarnetID))
		b, err := os.ReadFile(p)
		if err != nil || !bytes.HasPrefix(b, []byte("%PDF")) {
			t.Errorf("%s: %v (%.8q)", p, err, b)
		}
	}
	zr, err := zip.OpenReader(filepath.Join(out.Dir, out.Zip))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	if len(zr.File) != 2 {
		t.Errorf("zip has %d files, want 2", len(zr.File))
	}
}

// TestLoadErrors: the loader's strict checks with line and column.
func TestLoadErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "a.yaml")
	os.WriteFile(p, []byte("version: 1\nfrom_run: nada\nissue: {carnets: {repeats: 2}}\naction:\n  cancel: {}\n  settle: {}\nfilter: {stauts: [waiting]}\n"), 0o644)
	_, err := actions.Load(p, actions.LoadOptions{Getenv: noEnv})
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{":2:11: nada não é a pasta de uma execução", ":3:1: um job tem issue", ":5:3: action deve ter só um", ":7:10: chave desconhecida \"stauts\""} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing %q in:\n%s", want, msg)
		}
	}
	if !actions.IsActionJob(p) {
		t.Error("IsActionJob is false")
	}
}

func TestSchema(t *testing.T) {
	t.Parallel()
	s := actions.Schema("en")
	props := s["properties"].(map[string]any)
	for _, k := range []string{"from_run", "filter", "action", "input"} {
		if props[k] == nil {
			t.Errorf("schema lacks %s", k)
		}
	}
	if props["action"].(map[string]any)["maxProperties"] != 1 {
		t.Error("action is not exactly one")
	}
}
