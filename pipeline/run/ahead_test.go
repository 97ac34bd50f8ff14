package run_test

import (
	"context"
	"path/filepath"
	"testing"

	"remessa/pipeline/journal"
	"remessa/pipeline/run"
	"remessa/sandbox"
)

// TestStopWithdrawsIntentsAhead: a run of slips stopped after a few
// POSTs, with intents journaled ahead of their calls, leaves no call
// intended and no row sending: what was journaled ahead and not sent is
// withdrawn, its row pending. Its resume sends every other row once and
// looks nothing up (GET /v1/charges): no row was left in doubt.
func TestStopWithdrawsIntentsAhead(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	rn := startSandbox(t, sandbox.Memory, nil)
	const rows = 40
	job := writeJob(t, dir, "boletos", payers(rows, 61), "service: sandbox")
	opts := run.Options{BaseURL: rn.URL, Getenv: remoteEnv, Concurrency: 4, StopAfter: 6, Quota: 100000}
	out, err := run.Run(ctx, job, opts)
	if err != nil || out.Stop == nil {
		t.Fatalf("run: %v stop %v", err, out.Stop)
	}
	j, err := journal.Open(filepath.Join(out.Dir, journal.FileName))
	if err != nil {
		t.Fatal(err)
	}
	calls, err := j.Calls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	posts := 0
	for _, c := range calls {
		if c.State != journal.CallOK {
			t.Errorf("call %d %s %s left %s", c.Seq, c.Route, c.Target, c.State)
		}
		posts++
	}
	counts, err := j.StateCounts(ctx)
	j.Close()
	if err != nil {
		t.Fatal(err)
	}
	if counts[journal.RowIssued] != posts || counts[journal.RowPending] != rows-posts || counts[journal.RowSending] != 0 {
		t.Fatalf("after the stop: %d calls, rows %v", posts, counts)
	}
	if posts < 6 || posts >= rows {
		t.Fatalf("%d POSTs before the stop after 6", posts)
	}
	opts.StopAfter = 0
	out, err = run.Resume(ctx, out.Dir, opts)
	if err != nil || out.ExitCode() != 0 || out.Results.Totals.Issued.Rows != rows {
		t.Fatalf("resume: %v exit %d totals %+v", err, out.ExitCode(), out.Results.Totals)
	}
	j, err = journal.Open(filepath.Join(out.Dir, journal.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	cc, err := j.CallCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cc["POST /v1/charge/one-step"][journal.CallOK] != rows || len(cc["GET /v1/charges"]) != 0 {
		t.Fatalf("calls after the resume: %v", cc)
	}
}
