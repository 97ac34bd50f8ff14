package conciliacao_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"remessa/api"
	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/pipeline/run/runtest"
	"remessa/pipeline/status"
	"remessa/reports/conciliacao"
	"remessa/rules"
	"remessa/sandbox"
	"remessa/sandbox/control"
)

// escola is the school's carnets (40 × 12), issued once per test binary;
// each test works on its own copy of the run and of the sandbox's data.
var escola = runtest.ShareSample("../../samples/escola", "carnes.yaml", "alunos.xlsx")

// issueEscola gives the test its own copy of the school's carnets on its
// own embedded sandbox and returns the run folder, the sandbox, its control
// and API clients, the results, and a status sync of the run.
func issueEscola(t *testing.T) (string, *sandbox.Running, *control.Client, *api.Client, *results.Results, func() error) {
	t.Helper()
	is := escola.Issue(t)
	sync := func() error {
		_, err := status.Sync(context.Background(), is.Dir, status.Options{Run: run.Options{Embedded: is.Sandbox}})
		return err
	}
	return is.Dir, is.Sandbox, &control.Client{BaseURL: is.Sandbox.URL}, runtest.Client(t, is.Sandbox), is.Results, sync
}

// TestReconciliationToTheCent: 40 carnets × 12; the test pays parcel 1 of
// rows 0–19 at its face value more than 5 days early (the terms gave 5 %
// off: each paid the discount over), parcel 2 of rows 0–4 after the
// discount window with R$ 7,35 more (paid over: it was not late), settles
// parcel 3 of rows 5–7 by hand, cancels rows 8 and 9's carnets, then
// looks 90 days ahead. Every total is the sum of what the test did,
// computed here from the parcels' values and due dates.
func TestReconciliationToTheCent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, _, ctl, cl, res, sync := issueEscola(t)
	payee := ""
	var paid, discount, over, settled, cancelled int64
	for i := 0; i < 20; i++ {
		p := res.Rows[i].Parcels[0]
		v := p.ValueCents
		if _, err := ctl.PayParcel(ctx, res.Rows[i].CarnetID, 1, control.PayRequest{Value: &v}, payee); err != nil {
			t.Fatal(err)
		}
		paid += v
		d := (v*5*2 + 100) / 200 // 5 % half up
		discount += d
		over += d
	}
	// four days before the first due date: the window (until 5 days
	// before) has closed, the second parcel is not due
	due1, _ := time.Parse("2006-01-02", res.Rows[0].Parcels[0].DueDate)
	if _, err := ctl.Advance(ctx, control.AdvanceRequest{To: due1.AddDate(0, 0, -4).Format("2006-01-02")}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		p := res.Rows[i].Parcels[1]
		v := p.ValueCents + 735
		if _, err := ctl.PayParcel(ctx, res.Rows[i].CarnetID, 2, control.PayRequest{Value: &v}, payee); err != nil {
			t.Fatal(err)
		}
		paid += v
		over += 735
	}
	for i := 5; i < 8; i++ {
		if err := cl.SettleParcel(ctx, res.Rows[i].CarnetID, 3); err != nil {
			t.Fatal(err)
		}
		settled += res.Rows[i].Parcels[2].ValueCents
	}
	paidKeys := map[[2]int]bool{}
	for i := 0; i < 20; i++ {
		paidKeys[[2]int{i, 1}] = true
	}
	for i := 0; i < 5; i++ {
		paidKeys[[2]int{i, 2}] = true
	}
	for i := 5; i < 8; i++ {
		paidKeys[[2]int{i, 3}] = true
	}
	for i := 8; i < 10; i++ {
		if err := cl.CancelCarnet(ctx, res.Rows[i].CarnetID); err != nil {
			t.Fatal(err)
		}
		for _, p := range res.Rows[i].Parcels {
			if !paidKeys[[2]int{i, p.Number}] { // a paid parcel stays paid
				cancelled += p.ValueCents
			}
		}
	}
	if err := sync(); err != nil {
		t.Fatal(err)
	}
	// 90 days ahead: what is unpaid and due before then is overdue
	today := time.Now().In(time.FixedZone("BRT", -3*3600)).AddDate(0, 0, 90)
	today = time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, time.UTC)
	var issued, open, overdue int64
	aging := map[string]int64{}
	for i, row := range res.Rows {
		for _, p := range row.Parcels {
			issued += p.ValueCents
			if paidKeys[[2]int{i, p.Number}] || i == 8 || i == 9 {
				continue
			}
			due, _ := time.Parse("2006-01-02", p.DueDate)
			days := int(today.Sub(due).Hours() / 24)
			switch {
			case days <= 0:
				open += p.ValueCents
				aging["a_vencer"] += p.ValueCents
			case days <= 30:
				overdue += p.ValueCents
				aging["vencido_1_30"] += p.ValueCents
			case days <= 60:
				overdue += p.ValueCents
				aging["vencido_31_60"] += p.ValueCents
			case days <= 90:
				overdue += p.ValueCents
				aging["vencido_61_90"] += p.ValueCents
			default:
				overdue += p.ValueCents
				aging["vencido_mais_90"] += p.ValueCents
			}
		}
	}
	r, err := conciliacao.FromRun(ctx, dir, today)
	if err != nil {
		t.Fatal(err)
	}
	tot := r.Totals
	checks := []struct {
		name      string
		got, want int64
	}{
		{"issued", tot.Expected, issued},
		{"received", tot.Received, paid + settled},
		{"fine and interest", tot.FineInterest, 0},
		{"discount", tot.Discount, discount},
		{"paid over", tot.Over, over},
		{"paid short", tot.Short, 0},
		{"cancelled", tot.Cancelled, cancelled},
		{"open", tot.Open, open},
		{"overdue", tot.Overdue, overdue},
		{"refunded", tot.Refunded, 0},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %d cents, want %d", c.name, c.got, c.want)
		}
	}
	if tot.Charges != 480 {
		t.Errorf("%d charges, want 480", tot.Charges)
	}
	for k, want := range aging {
		if got := r.Aging[k].Open + r.Aging[k].Overdue; got != want {
			t.Errorf("aging %s: %d, want %d", k, got, want)
		}
	}
	if overdue == 0 {
		t.Fatal("the scenario has nothing overdue; the aging went untested")
	}
	if !r.Reconcile.OK {
		t.Fatalf("the reconciliation does not close: %v", r.Reconcile.Problems)
	}
	// written streaming from the ledger, the same totals, and the files
	files, sr, err := conciliacao.WriteRun(ctx, dir, today, "pt")
	if err != nil || len(files) != 5 {
		t.Fatalf("write: %v %v", files, err)
	}
	if sr.Totals != r.Totals || !sr.Reconcile.OK || sr.Lines != nil {
		t.Fatalf("streamed totals %+v (check %v) differ from the in-memory ones %+v", sr.Totals, sr.Reconcile, r.Totals)
	}
	x, err := excelize.OpenFile(filepath.Join(dir, "conciliacao.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	rows, _ := x.GetRows("Cobranças")
	if len(rows) != 481 {
		t.Errorf("the xlsx has %d charge rows, want 480 and the header", len(rows)-1)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "conciliacao.csv"))
	cr := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(raw, []byte("\uFEFF"))))
	cr.Comma = ';'
	recs, err := cr.ReadAll()
	if err != nil || len(recs) != 481 {
		t.Fatalf("csv: %d records, %v", len(recs), err)
	}
	html, _ := os.ReadFile(filepath.Join(dir, "conciliacao.html"))
	if !strings.Contains(string(html), "Totais conferem ao centavo") || !strings.Contains(string(html), "<svg") {
		t.Errorf("the html lacks the check or the charts")
	}
}

// TestReconciliationCheckCatchesABrokenTotal: a total that no longer is
// the sum of its lines is caught, and the reports say so.
func TestReconciliationCheckCatchesABrokenTotal(t *testing.T) {
	t.Parallel()
	res := &results.Results{Run: results.RunInfo{ID: "r1", Kind: results.Boletos}}
	cs := []status.Charge{
		{Key: "charge:1", SourceRow: 2, ChargeID: 1, Due: "2027-01-10", ValueCents: 15000, State: status.StatePaid, Status: "paid", PaidCents: 15300, PaidAt: "2027-01-12T10:00:00-03:00", Method: status.MethodBoleto},
		{Key: "charge:2", SourceRow: 3, RowIndex: 1, ChargeID: 2, Due: "2027-01-10", ValueCents: 9990, State: status.StateOpen, Status: "unpaid"},
		{Key: "charge:3", SourceRow: 4, RowIndex: 2, ChargeID: 3, Due: "2027-03-10", ValueCents: 5000, State: status.StateCancelled, Status: "canceled"},
	}
	today := time.Date(2027, 2, 15, 0, 0, 0, 0, time.UTC)
	// the slips' terms: 2 % fine, no interest
	terms := map[int]*conciliacao.Terms{0: {Slip: rules.SlipTerms{Fine: 200}}, 1: {Slip: rules.SlipTerms{Fine: 200}}, 2: {Slip: rules.SlipTerms{Fine: 200}}}
	r := conciliacao.Build(res, cs, terms, "", today)
	// by hand: received 153,00 with 3,00 of fine (2 % of 150,00), paid 2
	// days late; 99,90 overdue 36 days (31–60); 50,00 cancelled
	if r.Totals.Received != 15300 || r.Totals.FineInterest != 300 || r.Totals.Overdue != 9990 || r.Totals.Cancelled != 5000 {
		t.Fatalf("totals %+v", r.Totals)
	}
	if r.Lines[0].DaysLate != 2 || r.Lines[1].DaysLate != 36 || r.Lines[1].Bucket != "vencido_31_60" {
		t.Fatalf("days late %d and %d, bucket %s", r.Lines[0].DaysLate, r.Lines[1].DaysLate, r.Lines[1].Bucket)
	}
	if !r.Reconcile.OK {
		t.Fatalf("a sound reconciliation fails its check: %v", r.Reconcile.Problems)
	}
	r.Totals.Received++
	if c := r.Check(); c.OK || !strings.Contains(strings.Join(c.Problems, ";"), "soma das linhas") {
		t.Fatalf("a total one cent off passes the check: %+v", c)
	}
	r.Totals.Received--
	m := r.ByMonth["2027-01"]
	m.Overdue -= 100
	r.ByMonth["2027-01"] = m
	if c := r.Check(); c.OK {
		t.Fatalf("a month one real off passes the check")
	}
	r.Reconcile = r.Check()
	dir := t.TempDir()
	if _, err := conciliacao.Write(dir, r, "pt"); err != nil {
		t.Fatal(err)
	}
	html, _ := os.ReadFile(filepath.Join(dir, "conciliacao.html"))
	if !strings.Contains(string(html), "Totais NÃO conferem") {
		t.Errorf("the html of a broken reconciliation does not say so")
	}
}
