package run_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/sandbox"
	"remessa/sandbox/clock"
	"remessa/sandbox/faults"
)

// TestAmbiguousNeverGuessed: every carnet POST is processed but its
// connection dropped, and the lookup by custom_id fails too. The rows are
// reported ambiguous (not resent, not assumed); once the service answers
// again, resume adopts the carnets that exist — exactly one per row.
func TestAmbiguousNeverGuessed(t *testing.T) {
	dir := t.TempDir()
	one := 1.0
	rn := startSandbox(t, sandbox.Memory, func(c *sandbox.Config) {
		c.Faults = faults.Config{Routes: map[string]faults.Override{
			"POST /v1/carnet": {Drop: &one},
			"GET /v1/charges": {P500: &one},
		}}
	})
	ps := payers(3, 12)
	job := writeJob(t, dir, "carnets", ps, "service: sandbox")
	ctx := context.Background()
	opts := run.Options{BaseURL: rn.URL, Getenv: remoteEnv, SettleDelay: -1}
	out, err := run.Run(ctx, job, opts)
	if err != nil {
		t.Fatal(err)
	}
	res := loadResults(t, out.Dir)
	if res.Totals.Ambiguous.Rows != len(ps) || out.ExitCode() != 1 || res.Run.Complete {
		t.Fatalf("want every row ambiguous, exit 1: totals %+v exit %d", res.Totals, out.ExitCode())
	}
	for _, r := range res.Rows {
		if r.Outcome != results.Ambiguous || len(r.Problems) == 0 || r.Problems[0].Code != "resultado_incerto" {
			t.Errorf("row %s: %s %+v", r.Key, r.Outcome, r.Problems)
		}
	}
	// the carnets do exist (the drops came after processing): one each
	cl := client(t, rn, testClientID, testClientSecret)
	if err := rn.Server.Faults().SetConfig(faults.Config{}); err != nil {
		t.Fatal(err)
	}
	assertOneCarnetEach(t, cl, out.RunID, ps, 3)
	out2, err := run.Resume(ctx, out.Dir, opts)
	if err != nil || out2.ExitCode() != 0 {
		t.Fatalf("resume: %v exit %d", err, out2.ExitCode())
	}
	res = loadResults(t, out.Dir)
	if res.Totals.Issued.Rows != len(ps) || !res.Run.Complete || res.Rows[0].CarnetID == 0 || len(res.Rows[0].Parcels) != 3 {
		t.Fatalf("after resume: %+v %+v", res.Totals, res.Rows[0])
	}
	assertOneCarnetEach(t, cl, out.RunID, ps, 3) // adopted, not sent again
}

// TestAmbiguousNotAdoptedFromEarlierRun: a job with its own custom_id
// template ("boleto-{{ .Código }}") gives the same custom_id in every run.
// When a later run (--again, an hour on) cannot read its POST answers, the
// lookup by custom_id finds the earlier run's slips too; it must adopt the
// slip it created itself, never the earlier run's, or the payer would not
// be charged this time while the report says issued.
func TestAmbiguousNotAdoptedFromEarlierRun(t *testing.T) {
	dir := t.TempDir()
	rn := startSandbox(t, sandbox.Memory, nil)
	ps := payers(3, 31)
	job := writeJob(t, dir, "boletos", ps, "service: sandbox")
	body, err := readFile(job)
	if err != nil {
		t.Fatal(err)
	}
	body = strings.Replace(body, "    due: +15d\n", "    due: +15d\n    custom_id: \"boleto-{{ .Código }}\"\n", 1)
	writeFileT(t, job, body)
	ctx := context.Background()
	opts := run.Options{BaseURL: rn.URL, Getenv: remoteEnv, SettleDelay: -1}
	out1, err := run.Run(ctx, job, opts)
	if err != nil || out1.ExitCode() != 0 {
		t.Fatalf("first run: %v exit %d", err, out1.ExitCode())
	}
	first := map[int64]bool{}
	for _, r := range loadResults(t, out1.Dir).Rows {
		first[r.ChargeIDs[0]] = true
	}

	one := 1.0
	if err := rn.Server.Faults().SetConfig(faults.Config{Routes: map[string]faults.Override{
		"POST /v1/charge/one-step": {Drop: &one}}}); err != nil {
		t.Fatal(err)
	}
	// an hour on, for the service and for the run
	rn.Server.Clock().(*clock.Adjustable).Advance(time.Hour)
	later := time.Now().Add(time.Hour)
	opts.Again, opts.Now = true, func() time.Time { return later }
	out2, err := run.Run(ctx, job, opts)
	if err != nil || out2.ExitCode() != 0 {
		t.Fatalf("second run: %v exit %d", err, out2.ExitCode())
	}
	for _, r := range loadResults(t, out2.Dir).Rows {
		if r.Outcome != results.Issued || len(r.ChargeIDs) != 1 || first[r.ChargeIDs[0]] {
			t.Errorf("row %s: %s %v adopted the first run's slip (first run: %v)", r.Key, r.Outcome, r.ChargeIDs, first)
		}
	}
	cl := client(t, rn, testClientID, testClientSecret)
	if n := len(listCharges(t, cl, "billet")); n != 2*len(ps) {
		t.Fatalf("sandbox has %d slips, want %d (one per row per run)", n, 2*len(ps))
	}
}
