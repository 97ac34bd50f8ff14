package conciliacao_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"remessa/pipeline/actions"
	"remessa/pipeline/run"
	"remessa/pipeline/status"
	"remessa/reports/conciliacao"
	"remessa/sandbox/control"
)

// easter is Easter Sunday of year y (the anonymous Gregorian algorithm).
func easter(y int) time.Time {
	a, b, c := y%19, y/100, y%100
	d, e := b/4, b%4
	f := (b + 8) / 25
	g := (b - f + 1) / 3
	h := (19*a + b - d - g + 15) % 30
	i, k := c/4, c%4
	l := (32 + 2*e + 2*i - h - k) % 7
	m := (a + 11*h + 22*l) / 451
	month := (h + l - 7*m + 114) / 31
	day := (h+l-7*m+114)%31 + 1
	return time.Date(y, time.Month(month), day, 0, 0, 0, 0, time.UTC)
}

// businessDay moves a date off weekends and national bank holidays (the
// test's own calendar: fixed holidays, and Carnival, Good Friday and
// Corpus Christi from Easter).
func businessDay(d time.Time) time.Time {
	for {
		e := easter(d.Year())
		hol := map[string]bool{}
		for _, md := range []string{"01-01", "04-21", "05-01", "09-07", "10-12", "11-02", "11-15", "11-20", "12-25"} {
			hol[fmt.Sprintf("%d-%s", d.Year(), md)] = true
		}
		for _, off := range []int{-48, -47, -2, 60} {
			hol[e.AddDate(0, 0, off).Format("2006-01-02")] = true
		}
		if d.Weekday() != time.Saturday && d.Weekday() != time.Sunday && !hol[d.Format("2006-01-02")] {
			return d
		}
		d = d.AddDate(0, 0, 1)
	}
}

func day(s string) time.Time {
	t, _ := time.Parse("2006-01-02", s)
	return t
}

// TestEscolaCycleToTheCent is the school's year in the making, end to
// end on the embedded sandbox: 40 carnets of 12; 150 parcels paid (the
// first parcel of all 40 early with the 5 % discount, the second of 30
// ten days late with 2 % and 0,033 % a day, the third of the other 38
// the day before its due date, 42 later parcels early at face value), 3
// settled by hand, 2 carnets cancelled and 5 due dates moved by action
// jobs, the clock 90 days ahead (at least past the third due date), then `status`: every total of the
// reconciliation equals the test's own sums, to the cent.
func TestEscolaCycleToTheCent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, rn, ctl, _, res, _ := issueEscola(t)
	rows := res.Rows
	payee := ""
	type key struct{ row, parcel int }
	paid := map[key]int64{}
	var discount, fine int64
	pay := func(r, n int, value *int64) {
		t.Helper()
		if _, err := ctl.PayParcel(ctx, rows[r].CarnetID, n, control.PayRequest{Value: value}, payee); err != nil {
			t.Fatalf("pay row %d parcel %d: %v", r, n, err)
		}
	}
	// 1. today, the first parcel of every carnet, more than 5 days early:
	//    5 % off (half up)
	for r := range rows {
		v := rows[r].Parcels[0].ValueCents
		d := (v*5*2 + 100) / 200
		pay(r, 1, nil)
		paid[key{r, 1}] = v - d
		discount += d
	}
	// 2. action jobs: cancel carnets 38 and 39 (their open parcels), move
	//    parcels 8-12 of carnet 37 by 5 days, settle parcel 12 of 0-2
	opts := actions.Options{Run: run.Options{Embedded: rn, Getenv: func(string) (string, bool) { return "", false }}}
	act := func(body string) {
		t.Helper()
		p := filepath.Join(t.TempDir(), "acao.yaml")
		os.WriteFile(p, []byte("version: 1\nname: acao\nfrom_run: "+dir+"\n"+body), 0o644)
		out, err := actions.Run(ctx, p, opts)
		if err != nil {
			t.Fatalf("action %q: %v", body, err)
		}
		if out.ExitCode() != 0 {
			t.Fatalf("action %q ended %d", body, out.ExitCode())
		}
	}
	act(fmt.Sprintf("filter: {keys: [%s, %s]}\naction:\n  cancel: {}\n", rows[38].Key, rows[39].Key))
	act(fmt.Sprintf("filter: {keys: [%s], parcels: [8, 9, 10, 11, 12]}\naction:\n  change_due_date: {days: 5}\n", rows[37].Key))
	act(fmt.Sprintf("filter: {keys: [%s, %s, %s], parcels: [12]}\naction:\n  settle: {}\n", rows[0].Key, rows[1].Key, rows[2].Key))
	// 3. ten days after the second parcel's due date, 30 pay it late:
	//    2 % fine and 0,033 % a day from the first business day on or
	//    after the due date
	due2 := day(rows[0].Parcels[1].DueDate)
	payDay := due2.AddDate(0, 0, 10)
	if _, err := ctl.Advance(ctx, control.AdvanceRequest{To: payDay.Format("2006-01-02")}); err != nil {
		t.Fatal(err)
	}
	late := int64(payDay.Sub(businessDay(due2)).Hours() / 24)
	for r := 0; r < 30; r++ {
		v := rows[r].Parcels[1].ValueCents
		f := (v*200*2 + 10000) / 20000
		i := (v*33*late*2 + 100000) / 200000
		pay(r, 2, nil)
		paid[key{r, 2}] = v + f + i
		fine += f + i
	}
	// 4. the day before the third parcel's due date: rows 0-37 pay it at
	//    its value; and 42 later parcels are paid early at face value
	due3 := day(rows[0].Parcels[2].DueDate)
	if _, err := ctl.Advance(ctx, control.AdvanceRequest{To: due3.AddDate(0, 0, -1).Format("2006-01-02")}); err != nil {
		t.Fatal(err)
	}
	for r := 0; r < 38; r++ {
		pay(r, 3, nil)
		paid[key{r, 3}] = rows[r].Parcels[2].ValueCents
		v := rows[r].Parcels[3].ValueCents
		pay(r, 4, &v)
		paid[key{r, 4}] = v
	}
	for r := 0; r < 4; r++ {
		v := rows[r].Parcels[4].ValueCents
		pay(r, 5, &v)
		paid[key{r, 5}] = v
	}
	if len(paid) != 150 {
		t.Fatalf("the test paid %d parcels, meant 150", len(paid))
	}
	// 5. 90 days after the issue, or the day after the third parcel's due
	//    date when that is later: the first due date is the 10th of next
	//    month, so in a month's first days 90 days do not reach the third
	//    (on 02/12/2026 they end on 02/03/2027, the third is due 10/03)
	asOf := day(time.Now().In(time.FixedZone("BRT", -3*3600)).Format("2006-01-02")).AddDate(0, 0, 90)
	if asOf.Before(due3) {
		asOf = due3.AddDate(0, 0, 1)
	}
	if _, err := ctl.Advance(ctx, control.AdvanceRequest{To: asOf.Format("2006-01-02")}); err != nil {
		t.Fatal(err)
	}
	if _, err := status.Sync(ctx, dir, status.Options{Run: run.Options{Embedded: rn}, Now: func() time.Time { return asOf.Add(15 * time.Hour) }}); err != nil {
		t.Fatal(err)
	}
	// the test's own sums
	var issued, received, cancelled, overdue, open int64
	agingWant := map[string]int64{}
	for r, row := range rows {
		for _, p := range row.Parcels {
			issued += p.ValueCents
			k := key{r, p.Number}
			if v, ok := paid[k]; ok {
				received += v
				continue
			}
			if r < 3 && p.Number == 12 {
				received += p.ValueCents // settled by hand
				continue
			}
			if r >= 38 {
				cancelled += p.ValueCents
				continue
			}
			due := day(p.DueDate)
			if r == 37 && p.Number >= 8 {
				due = due.AddDate(0, 0, 5)
			}
			days := int(asOf.Sub(due).Hours() / 24)
			switch {
			case days <= 0:
				open += p.ValueCents
				agingWant[conciliacao.BucketNotDue] += p.ValueCents
			case days <= 30:
				overdue += p.ValueCents
				agingWant[conciliacao.Bucket30] += p.ValueCents
			case days <= 60:
				overdue += p.ValueCents
				agingWant[conciliacao.Bucket60] += p.ValueCents
			case days <= 90:
				overdue += p.ValueCents
				agingWant[conciliacao.Bucket90] += p.ValueCents
			default:
				overdue += p.ValueCents
				agingWant[conciliacao.BucketOver90] += p.ValueCents
			}
		}
	}
	_, r, err := conciliacao.WriteRun(ctx, dir, asOf, "pt")
	if err != nil {
		t.Fatal(err)
	}
	tot := r.Totals
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"charges", int64(tot.Charges), 480},
		{"issued", tot.Expected, issued},
		{"received", tot.Received, received},
		{"fine and interest", tot.FineInterest, fine},
		{"discount", tot.Discount, discount},
		{"cancelled", tot.Cancelled, cancelled},
		{"overdue", tot.Overdue, overdue},
		{"not yet due", tot.Open, open},
		{"refunded", tot.Refunded, 0},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.name, c.got, c.want)
		}
	}
	for b, want := range agingWant {
		if got := r.Aging[b].Open + r.Aging[b].Overdue; got != want {
			t.Errorf("aging %s: %d, want %d", b, got, want)
		}
	}
	if overdue == 0 || fine == 0 || discount == 0 || cancelled == 0 {
		t.Fatalf("the scenario left a total untested: overdue %d, fine %d, discount %d, cancelled %d", overdue, fine, discount, cancelled)
	}
	if !r.Reconcile.OK {
		t.Errorf("does not reconcile: %v", r.Reconcile.Problems)
	}
}
