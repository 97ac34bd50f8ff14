package run_test

import (
	"context"
	"testing"
	"time"

	"remessa/pipeline/run"
	"remessa/sandbox"
	"remessa/sandbox/clock"
)

// TestRunOnAServiceClockAhead: the service's clock 40 days ahead of this
// machine's (a sandbox moved forward). The service dates the charges it
// creates by its own clock, so the listings that find what a run created
// (the cobv batch's GET /v2/cobv; a slip's GET /v1/charges goes by the
// same window) must look at
// the service's days: every row is issued, none is "missing from the
// listing".
func TestRunOnAServiceClockAhead(t *testing.T) {
	// (cobv only: a slip due by this machine's calendar is in the past of
	// a service 40 days ahead, and denied as it should be)
	for _, kind := range []string{"cobv"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			rn := startSandbox(t, sandbox.Memory, nil)
			rn.Server.Clock().(*clock.Adjustable).Advance(40 * 24 * time.Hour)
			ps := payersOn(4, 71, rn.PixKey)
			job := writeJob(t, dir, kind, ps, "service: sandbox")
			out, err := run.Run(context.Background(), job, run.Options{BaseURL: rn.URL, Getenv: remoteEnv})
			if err != nil {
				t.Fatal(err)
			}
			res := loadResults(t, out.Dir)
			if out.ExitCode() != 0 || res.Totals.Issued.Rows != 4 {
				t.Fatalf("exit %d, totals %+v, stop %v", out.ExitCode(), res.Totals, out.Stop)
			}
		})
	}
}
