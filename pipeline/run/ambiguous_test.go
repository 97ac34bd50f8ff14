package run_test

import (
	"context"
	"testing"

	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/sandbox"
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
