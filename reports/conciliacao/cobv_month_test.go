package conciliacao_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"remessa/pipeline/run"
	"remessa/pipeline/run/runtest"
	"remessa/pipeline/status"
	"remessa/reports/conciliacao"
	"remessa/sandbox/control"
)

// half rounds num/den half up (the test's own arithmetic, per the spec:
// each component rounded to the cent on its own).
func half(num, den int64) int64 { return (2*num + den) / (2 * den) }

// TestReconciliationCobvMonth: 100 of the association's cobv (the first
// 100 rows of samples/mensal: multa 2 %, juros 1 % a.m., R$ 10,00 off
// until 5 days before the due date). 70 % pay today, early, with the
// discount; then the clock moves to 15 days after the due date and 10 %
// pay late, with multa and juros from the first business day on or after
// the due date. As of that day the rest is overdue 15 days. Every total is
// computed here from the rows' values, not by the code under test.
func TestReconciliationCobvMonth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	work := t.TempDir()
	runtest.Copy(t, "../../samples/mensal", work, "cobv.yaml")
	raw, err := os.ReadFile("../../samples/mensal/pagadores.csv")
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(raw, []byte("\n"))
	if err := os.WriteFile(filepath.Join(work, "pagadores.csv"), bytes.Join(lines[:101], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	is := runtest.Issue(t, work, "cobv.yaml")
	rn, out := is.Sandbox, is.Outcome
	ctl := &control.Client{BaseURL: rn.URL}
	rows := out.Results.Rows
	if len(rows) != 100 {
		t.Fatalf("%d rows issued, want 100", len(rows))
	}
	due, err := time.Parse("2006-01-02", rows[0].DueDate)
	if err != nil {
		t.Fatal(err)
	}
	if clk, _ := ctl.Clock(ctx); clk.Today > due.AddDate(0, 0, -5).Format("2006-01-02") {
		t.Fatalf("the sample's due date (%s) should be more than 5 days away: its job says \"dia 10 do próximo mês\"", due.Format("2006-01-02"))
	}
	var issued, received, fine, discount, overdue int64
	var onTime, late, unpaid int
	for i, r := range rows {
		issued += r.AmountCents
		if i%10 < 7 {
			if _, err := ctl.PayPix(ctx, r.Txid, ""); err != nil {
				t.Fatalf("pay %s: %v", r.Txid, err)
			}
			received += r.AmountCents - 1000 // R$ 10,00 off, paid more than 5 days early
			discount += 1000
			onTime++
		}
	}
	asOf := due.AddDate(0, 0, 15)
	// a due date on a weekend or holiday rolls to the next business day
	// (real-service.md 2.2): juros run from that day (10/01/2027 is a
	// Sunday: 14 days to 25/01, not 15)
	lateDays := int64(asOf.Sub(businessDay(due)).Hours() / 24)
	if _, err := ctl.Advance(ctx, control.AdvanceRequest{To: asOf.Format("2006-01-02")}); err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		switch {
		case i%10 == 7:
			if _, err := ctl.PayPix(ctx, r.Txid, ""); err != nil {
				t.Fatalf("pay late %s: %v", r.Txid, err)
			}
			// multa 2 % of the original; juros 1 % a month over the days
			// late of 30 (15 days: 0,5 %)
			m, j := half(r.AmountCents*2, 100), half(r.AmountCents*1*lateDays, 100*30)
			received += r.AmountCents + m + j
			fine += m + j
			late++
		case i%10 > 7:
			overdue += r.AmountCents
			unpaid++
		}
	}
	if _, err := status.Sync(ctx, out.Dir, status.Options{Run: run.Options{Embedded: rn}, Now: func() time.Time { return asOf.Add(15 * time.Hour) }}); err != nil {
		t.Fatal(err)
	}
	_, r, err := conciliacao.WriteRun(ctx, out.Dir, asOf, "pt")
	if err != nil {
		t.Fatal(err)
	}
	tot := r.Totals
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"charges", int64(tot.Charges), int64(len(rows))},
		{"issued", tot.Expected, issued},
		{"received", tot.Received, received},
		{"fine and interest", tot.FineInterest, fine},
		{"discount", tot.Discount, discount},
		{"overdue", tot.Overdue, overdue},
		{"not yet due", tot.Open, 0},
		{"overdue 1-30 days", r.Aging[conciliacao.Bucket30].Overdue, overdue},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.name, c.got, c.want)
		}
	}
	if !r.Reconcile.OK {
		t.Errorf("does not reconcile: %v", r.Reconcile.Problems)
	}
	if onTime != 70 || late != 10 || unpaid != 20 {
		t.Errorf("%d on time, %d late, %d unpaid; the scenario is 70, 10 and 20", onTime, late, unpaid)
	}
}
