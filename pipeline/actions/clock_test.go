package actions_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"remessa/pipeline/actions"
	"remessa/pipeline/run"
	"remessa/pipeline/run/runtest"
	"remessa/pipeline/status"
	"remessa/rules"
	"remessa/sandbox/control"
)

// TestPlanCountsByTheServiceClock: the sandbox's clock 11 days past the
// first parcels' due date (some 23 days ahead of this machine): a job that
// cancels what is overdue ("vencida") finds the 40 first parcels overdue
// by the service's day (none would be by this machine's), says that day
// and warns that the clocks differ; the cancellations it applies are
// recorded in the ledger at the service's time.
func TestPlanCountsByTheServiceClock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, rn, res := issueEscola(t)
	// no 30 s client timeout: moving the clock 23 days expires the 40
	// first parcels and delivers what is due, which takes longer than
	// that on a loaded machine while the package's other tests run (the
	// test's -timeout bounds it)
	ctl := &control.Client{BaseURL: rn.URL, HTTP: &http.Client{}}
	due1, err := rules.ParseISODate(res.Rows[0].Parcels[0].DueDate)
	if err != nil {
		t.Fatal(err)
	}
	payDay := due1.AddDate(0, 0, 11)
	if _, err := ctl.Advance(ctx, control.AdvanceRequest{To: payDay.Format("2006-01-02")}); err != nil {
		t.Fatal(err)
	}
	job := writeJob(t, src, "filter: {status: [vencida]}\naction:\n  cancel: {}\n")
	opts := actions.Options{Run: run.Options{Embedded: rn, Getenv: noEnv}}
	_, p, err := actions.Prepare(ctx, job, opts)
	if err != nil {
		t.Fatal(err)
	}
	// the 40 monthly fees add up to R$ 42.327,75
	if p.Charges != 40 || p.Cents != 4232775 {
		t.Errorf("plan: %d charges of %d cents; want the 40 first parcels, 4232775", p.Charges, p.Cents)
	}
	if p.Today != payDay.Format("2006-01-02") {
		t.Errorf("the plan counted from %s, want the service's day %s", p.Today, payDay.Format("2006-01-02"))
	}
	if !strings.Contains(p.ClockNote, "relógio do serviço ("+payDay.Format("02/01/2006")) || !strings.Contains(p.ClockNote, "à frente do") {
		t.Errorf("clock note %q", p.ClockNote)
	}
	var text strings.Builder
	p.WriteText(&text)
	if !strings.Contains(text.String(), p.ClockNote) {
		t.Errorf("the plan's text does not carry the clock warning:\n%s", text.String())
	}
	out, err := actions.Run(ctx, job, opts)
	if err != nil || out.ExitCode() != 0 || out.Done != 40 {
		t.Fatalf("run: %+v %v", out, err)
	}
	n := 0
	for _, c := range runtest.Ledger(t, src) {
		if c.Parcel != 1 {
			continue
		}
		n++
		if c.State != status.StateCancelled || !strings.HasPrefix(c.UpdatedAt, payDay.Format("2006-01-02")) && !strings.HasPrefix(c.UpdatedAt, payDay.AddDate(0, 0, 1).Format("2006-01-02")) {
			t.Errorf("parcel 1 of %s: %s at %s; want cancelled, seen on the service's day %s (UTC)", c.RowKey, c.State, c.UpdatedAt, payDay.Format("2006-01-02"))
			break
		}
	}
	if n != 40 {
		t.Errorf("%d first parcels in the ledger, want 40", n)
	}
}
