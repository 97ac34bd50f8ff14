package conciliacao_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"remessa/api"
	"remessa/pipeline/actions"
	"remessa/pipeline/run"
	"remessa/pipeline/run/runtest"
	"remessa/pipeline/status"
	"remessa/reports/conciliacao"
	"remessa/rules"
	"remessa/sandbox/control"
)

// The month tests: a sample issued, the sandbox's clock stepped forward
// with payments between the steps, `remessa status` (status.Sync and the
// reconciliation, as of the service's day) after each step, and every
// total, month, aging bucket and who-owes line compared with the test's
// own model of what it did; each incremental sync equals a full one.

// charge is the test's model of one charge: its value and due date, and
// what the test did to it.
type charge struct {
	row, parcel int
	key         string // the row's key
	value       int64
	due         time.Time
	paid        int64 // 0: not paid
	paidOn      time.Time
	disc, fi    int64 // what the test's arithmetic says the terms gave on paidOn
	refunded    int64
	settled     bool
	cancelled   bool
}

// want is what the test expects of a reconciliation as of a day.
type want struct {
	tot        conciliacao.Amounts
	aging      map[string]int64 // unpaid cents by bucket
	shortAging map[string]int64
	months     map[string]int64 // issued cents by due month
	owes       map[string]int64 // total owed by row key
}

// bucketOf is the test's own aging: days after the due date.
func bucketOf(days int) string {
	switch {
	case days <= 0:
		return conciliacao.BucketNotDue
	case days <= 30:
		return conciliacao.Bucket30
	case days <= 60:
		return conciliacao.Bucket60
	case days <= 90:
		return conciliacao.Bucket90
	}
	return conciliacao.BucketOver90
}

func daysFrom(a, b time.Time) int { return int(b.Sub(a).Hours() / 24) }

// expect sums the model as of asOf; fiToday is the fine and interest an
// unpaid charge's terms ask on asOf (the test's arithmetic).
func expect(cs []*charge, asOf time.Time, fiToday func(c *charge, on time.Time) int64) want {
	w := want{aging: map[string]int64{}, shortAging: map[string]int64{}, months: map[string]int64{}, owes: map[string]int64{}}
	t := &w.tot
	for _, c := range cs {
		t.Charges++
		t.Expected += c.value
		w.months[c.due.Format("2006-01")] += c.value
		days := daysFrom(c.due, asOf)
		switch {
		case c.settled:
			t.Received += c.value
		case c.paid > 0:
			t.Received += c.paid - c.refunded
			t.Refunded += c.refunded
			disc, owed := c.disc, c.value-c.disc+c.fi
			if c.paid < owed && disc > 0 { // a short payment earns no discount
				disc, owed = 0, c.value+c.fi
			}
			t.Discount += disc
			t.FineInterest += c.fi
			if c.paid < owed {
				t.Short += owed - c.paid
				w.shortAging[bucketOf(days)] += owed - c.paid
				w.owes[c.key] += owed - c.paid
			} else {
				t.Over += c.paid - owed
			}
		case c.cancelled:
			t.Cancelled += c.value
		case days > 0:
			t.Overdue += c.value
			w.aging[bucketOf(days)] += c.value
			w.owes[c.key] += c.value + fiToday(c, asOf)
		default:
			t.Open += c.value
			w.aging[conciliacao.BucketNotDue] += c.value
		}
	}
	return w
}

// statusStep runs `remessa status` as of the service's day asOf: an
// incremental sync and the reconciliation, compared with w; then a full
// sync, which must change nothing and give the same reconciliation.
func statusStep(t *testing.T, name, dir string, rn *run.Options, asOf time.Time, w want) *conciliacao.Reconciliation {
	t.Helper()
	ctx := context.Background()
	sum, err := status.Sync(ctx, dir, status.Options{Run: *rn})
	if err != nil {
		t.Fatalf("%s: status: %v", name, err)
	}
	if got := sum.Today(); !got.Equal(asOf) {
		t.Fatalf("%s: the sync's day is %s, the service's %s", name, got.Format("2006-01-02"), asOf.Format("2006-01-02"))
	}
	_, r, err := conciliacao.WriteRun(ctx, dir, sum.Today(), "pt")
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !r.Reconcile.OK {
		t.Errorf("%s: does not reconcile: %v", name, r.Reconcile.Problems)
	}
	if r.Totals != w.tot {
		t.Errorf("%s: totals\n got %+v\nwant %+v", name, r.Totals, w.tot)
	}
	for b, c := range w.aging {
		if got := r.Aging[b].Open + r.Aging[b].Overdue; got != c {
			t.Errorf("%s: aging %s: %d, want %d", name, b, got, c)
		}
	}
	if len(r.Aging) != len(w.aging) {
		t.Errorf("%s: %d aging buckets, want %d", name, len(r.Aging), len(w.aging))
	}
	for b, c := range w.shortAging {
		if r.ShortAging[b] != c {
			t.Errorf("%s: paid short %s: %d, want %d", name, b, r.ShortAging[b], c)
		}
	}
	for m, c := range w.months {
		if r.ByMonth[m].Expected != c {
			t.Errorf("%s: month %s issued %d, want %d", name, m, r.ByMonth[m].Expected, c)
		}
	}
	if len(r.WhoOwes) != len(w.owes) {
		t.Errorf("%s: %d payers owe, want %d", name, len(r.WhoOwes), len(w.owes))
	}
	for i, d := range r.WhoOwes {
		if d.Total != w.owes[d.Key] {
			t.Errorf("%s: %s owes %d, want %d", name, d.Key, d.Total, w.owes[d.Key])
		}
		if i > 0 && d.Total > r.WhoOwes[i-1].Total {
			t.Errorf("%s: who owes is not sorted by amount at %d", name, i)
		}
	}
	full, err := status.Sync(ctx, dir, status.Options{Run: *rn, Full: true})
	if err != nil {
		t.Fatalf("%s: status --full: %v", name, err)
	}
	if full.Changed != 0 {
		t.Errorf("%s: a full sync after the incremental one changed %d charges", name, full.Changed)
	}
	_, rf, err := conciliacao.WriteRun(ctx, dir, full.Today(), "pt")
	if err != nil {
		t.Fatal(err)
	}
	if rf.Totals != r.Totals || len(rf.WhoOwes) != len(r.WhoOwes) {
		t.Errorf("%s: the full sync's reconciliation %+v differs from the incremental one's %+v", name, rf.Totals, r.Totals)
	}
	return r
}

// TestEscolaMonthBySteps: the school's 40 carnets (2 % fine, 0,033 % a day,
// 5 % off until 5 days before the first due date). On the issue day (the
// 28/11 of the issue's scenario): parcel 1 paid early with the discount,
// paid R$ 100,00 short, settled by hand, a carnet cancelled by an action
// job. The day before the first due date: paid on time, and paid R$ 10,00
// over. Then the clock steps to the day after the first due date (+13 d
// from 28/11), +18 (+30 d) and +83 (+95 d): paid late (fine and interest),
// paid late at the face value only (short by the fine and interest), a
// second parcel paid early, another late.
func TestEscolaMonthBySteps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, rn, ctl, cl, res, _ := issueEscola(t)
	opts := run.Options{Embedded: rn}
	rows := res.Rows
	clk, err := ctl.Clock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d0 := day(clk.Today)
	due1 := day(rows[0].Parcels[0].DueDate)
	until := due1.AddDate(0, 0, -5)
	if !d0.Before(until) {
		t.Fatalf("the issue day %s should be before the discount's last day %s (\"dia 10 do próximo mês\")", d0.Format("2006-01-02"), until.Format("2006-01-02"))
	}
	var cs []*charge
	byKey := map[[2]int]*charge{}
	for r, row := range rows {
		for _, p := range row.Parcels {
			c := &charge{row: r, parcel: p.Number, key: row.Key, value: p.ValueCents, due: day(p.DueDate)}
			cs = append(cs, c)
			byKey[[2]int{r, p.Number}] = c
		}
	}
	// the test's arithmetic of the terms: 5 % off (half up) for parcel 1
	// paid on or before until; after the adjusted due date 2 % fine and
	// 0,033 % a day from it
	fi := func(c *charge, on time.Time) int64 {
		bd := businessDay(c.due)
		if !on.After(bd) {
			return 0
		}
		return (c.value*200*2+10000)/20000 + (c.value*33*int64(daysFrom(bd, on))*2+100000)/200000
	}
	pay := func(r, n int, value *int64, on time.Time) {
		t.Helper()
		c := byKey[[2]int{r, n}]
		pr, err := ctl.PayParcel(ctx, rows[r].CarnetID, n, control.PayRequest{Value: value}, "")
		if err != nil {
			t.Fatalf("pay row %d parcel %d: %v", r, n, err)
		}
		c.paid, c.paidOn, c.fi = pr.Value, on, fi(c, on)
		if n == 1 && !on.After(until) {
			c.disc = (c.value*500*2 + 10000) / 20000
		}
		want := c.value - c.disc + c.fi
		if value != nil {
			want = *value
		}
		if c.paid != want {
			t.Fatalf("row %d parcel %d: the sandbox took %d, the test's arithmetic says %d", r, n, c.paid, want)
		}
	}
	advance := func(to time.Time) {
		t.Helper()
		if _, err := ctl.Advance(ctx, control.AdvanceRequest{To: to.Format("2006-01-02")}); err != nil {
			t.Fatal(err)
		}
	}
	v := func(x int64) *int64 { return &x }

	// issue day: early with the discount, R$ 100,00 short, settled, cancelled
	pay(0, 1, nil, d0)
	pay(1, 1, v(10000), d0)
	if err := cl.SettleParcel(ctx, rows[3].CarnetID, 1); err != nil {
		t.Fatal(err)
	}
	byKey[[2]int{3, 1}].settled = true
	job := filepath.Join(t.TempDir(), "cancela.yaml")
	os.WriteFile(job, []byte(fmt.Sprintf("version: 1\nname: cancela\nfrom_run: %s\nfilter: {keys: [%s]}\naction:\n  cancel: {}\n", dir, rows[4].Key)), 0o644)
	if out, err := actions.Run(ctx, job, actions.Options{Run: run.Options{Embedded: rn, Getenv: runtest.NoEnv}}); err != nil || out.ExitCode() != 0 {
		t.Fatalf("cancel action: %v", err)
	}
	for _, p := range rows[4].Parcels {
		byKey[[2]int{4, p.Number}].cancelled = true
	}
	statusStep(t, "issue day", dir, &opts, d0, expect(cs, d0, fi))

	// the day before the first due date: on time, and R$ 10,00 over
	dA := due1.AddDate(0, 0, -1)
	advance(dA)
	pay(5, 1, nil, dA)
	pay(6, 1, v(rows[6].Parcels[0].ValueCents+1000), dA)
	statusStep(t, "on time", dir, &opts, dA, expect(cs, dA, fi))

	// +13 d: late with fine and interest, and late at the face value only
	d1 := due1.AddDate(0, 0, 1)
	advance(d1)
	pay(7, 1, nil, d1)
	pay(8, 1, v(rows[8].Parcels[0].ValueCents), d1)
	statusStep(t, "+13 d", dir, &opts, d1, expect(cs, d1, fi))

	// +30 d: another late, and a second parcel early at its value
	d2 := due1.AddDate(0, 0, 18)
	advance(d2)
	pay(9, 1, nil, d2)
	pay(10, 2, nil, d2)
	statusStep(t, "+30 d", dir, &opts, d2, expect(cs, d2, fi))

	// +95 d: a second parcel late; every first parcel still unpaid is
	// 61–90 days late
	d3 := due1.AddDate(0, 0, 83)
	advance(d3)
	pay(11, 2, nil, d3)
	w := expect(cs, d3, fi)
	if w.tot.Short == 0 || w.tot.Over == 0 || w.tot.Discount == 0 || w.tot.FineInterest == 0 || w.tot.Cancelled == 0 || w.aging[conciliacao.Bucket90] == 0 {
		t.Fatalf("the scenario left something untested: %+v %v", w.tot, w.aging)
	}
	r := statusStep(t, "+95 d", dir, &opts, d3, w)
	// row 1 paid R$ 100,00 of parcel 1 early: no discount earned, short
	// by the rest; its later parcels are overdue too
	c := byKey[[2]int{1, 1}]
	for _, l := range r.WhoOwes {
		if l.Key == rows[1].Key && (l.Short != c.value-10000 || l.Email != "joao.1@example.com" || l.Phone == "") {
			t.Errorf("who owes, %s: %+v; want paid short %d and the contact", l.Key, l, c.value-10000)
		}
	}
}

// TestMensalMonthBySteps: the association's cobv (samples/mensal: multa 2
// %, juros 1 % a month, R$ 10,00 off until 5 days before the due date,
// payable 30 days after it), 20 of its payers. On the issue day: paid
// early with the discount, a partial Pix of R$ 100,00, one paid and given
// back in full (devolução), one removed by an action job. Then the clock
// steps to the day after the due date (+13 d from 28/11): paid late with
// multa and juros; +18 (+30 d): late again, and one paid R$ 5,00 over;
// +83 (+95 d): past the 30 days nothing is payable, and the unpaid are
// 61–90 days late with multa and juros by their terms.
func TestMensalMonthBySteps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	work := t.TempDir()
	runtest.Copy(t, "../../samples/mensal", work, "cobv.yaml")
	raw, err := os.ReadFile("../../samples/mensal/pagadores.csv")
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(raw, []byte("\n"))
	if err := os.WriteFile(filepath.Join(work, "pagadores.csv"), bytes.Join(lines[:21], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	is := runtest.Issue(t, work, "cobv.yaml")
	rn, dir, rows := is.Sandbox, is.Dir, is.Results.Rows
	opts := run.Options{Embedded: rn}
	ctl := &control.Client{BaseURL: rn.URL}
	cl := runtest.Client(t, rn)
	if len(rows) != 20 {
		t.Fatalf("%d rows issued, want 20", len(rows))
	}
	clk, err := ctl.Clock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d0 := day(clk.Today)
	due := day(rows[0].DueDate)
	if !d0.Before(due.AddDate(0, 0, -5)) {
		t.Fatalf("the issue day %s should be more than 5 days before the due date %s", d0.Format("2006-01-02"), due.Format("2006-01-02"))
	}
	var cs []*charge
	for i, r := range rows {
		cs = append(cs, &charge{row: i, key: r.Key, value: r.AmountCents, due: day(r.DueDate)})
	}
	// the test's arithmetic of the terms: R$ 10,00 off until due − 5;
	// after the adjusted due date multa 2 % and juros 1 % a month (30
	// days) for the calendar days after it
	fi := func(c *charge, on time.Time) int64 {
		bd := businessDay(c.due)
		if !on.After(bd) {
			return 0
		}
		return half(c.value*2, 100) + half(c.value*int64(daysFrom(bd, on)), 100*30)
	}
	pay := func(i int, valor string, on time.Time) control.PixPayResult {
		t.Helper()
		c := cs[i]
		pr, err := ctl.PayPix(ctx, rows[i].Txid, valor)
		if err != nil {
			t.Fatalf("pay %s: %v", rows[i].Key, err)
		}
		c.paid, c.paidOn, c.fi = 0, on, fi(c, on)
		if !on.After(c.due.AddDate(0, 0, -5)) {
			c.disc = 1000
		}
		want := c.value - c.disc + c.fi
		if valor != "" {
			want, _ = rules.ParsePixAmount(valor)
		}
		c.paid, _ = rules.ParsePixAmount(pr.Valor)
		if c.paid != want {
			t.Fatalf("%s: the sandbox took %d, the test's arithmetic says %d", rows[i].Key, c.paid, want)
		}
		return pr
	}
	advance := func(to time.Time) {
		t.Helper()
		if _, err := ctl.Advance(ctx, control.AdvanceRequest{To: to.Format("2006-01-02")}); err != nil {
			t.Fatal(err)
		}
	}

	// issue day: early, partial, refunded, removed by an action
	pay(0, "", d0)
	pay(1, "100.00", d0)
	pr := pay(2, "", d0)
	if _, err := cl.PutDevolucao(ctx, pr.EndToEndID, "dev1", api.DevolucaoRequest{Valor: rules.FormatPixAmount(cs[2].paid)}); err != nil {
		t.Fatal(err)
	}
	cs[2].refunded = cs[2].paid
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if d, err := cl.GetDevolucao(ctx, pr.EndToEndID, "dev1"); err == nil && d.Status == "DEVOLVIDO" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the devolução is still not DEVOLVIDO")
		}
	}
	job := filepath.Join(t.TempDir(), "remove.yaml")
	os.WriteFile(job, []byte(fmt.Sprintf("version: 1\nname: remove\nfrom_run: %s\nfilter: {keys: [%s]}\naction:\n  cancel: {}\n", dir, rows[3].Key)), 0o644)
	if out, err := actions.Run(ctx, job, actions.Options{Run: run.Options{Embedded: rn, Getenv: runtest.NoEnv}}); err != nil || out.ExitCode() != 0 {
		t.Fatalf("remove action: %v", err)
	}
	cs[3].cancelled = true
	statusStep(t, "issue day", dir, &opts, d0, expect(cs, d0, fi))

	// +13 d: late by a day, with multa and juros
	d1 := due.AddDate(0, 0, 1)
	advance(d1)
	pay(4, "", d1)
	statusStep(t, "+13 d", dir, &opts, d1, expect(cs, d1, fi))

	// +30 d: late again, and R$ 5,00 over what was owed
	d2 := due.AddDate(0, 0, 18)
	advance(d2)
	pay(5, "", d2)
	c6 := cs[6]
	pay(6, rules.FormatPixAmount(c6.value+fi(c6, d2)+500), d2)
	statusStep(t, "+30 d", dir, &opts, d2, expect(cs, d2, fi))

	// +95 d: past validadeAposVencimento nothing is payable any more
	d3 := due.AddDate(0, 0, 83)
	advance(d3)
	if _, err := ctl.PayPix(ctx, rows[7].Txid, ""); err == nil {
		t.Errorf("a cobv 83 days past its due date (validade 30) was paid")
	}
	w := expect(cs, d3, fi)
	if w.tot.Short == 0 || w.tot.Over == 0 || w.tot.Discount == 0 || w.tot.FineInterest == 0 || w.tot.Cancelled == 0 || w.tot.Refunded == 0 || w.aging[conciliacao.Bucket90] == 0 {
		t.Fatalf("the scenario left something untested: %+v %v", w.tot, w.aging)
	}
	r := statusStep(t, "+95 d", dir, &opts, d3, w)
	// the partial Pix: R$ 100,00 early, no discount earned, short by the rest
	for _, l := range r.WhoOwes {
		if l.Key == rows[1].Key && (l.Short != cs[1].value-10000 || l.Email == "") {
			t.Errorf("who owes, %s: %+v; want paid short %d and the e-mail", l.Key, l, cs[1].value-10000)
		}
	}
}
