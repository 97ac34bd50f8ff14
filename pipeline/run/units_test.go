package run_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"remessa/pipeline/run"
	"remessa/pipeline/run/runtest"
)

// TestUnitsOneAtATime: a run stopped early is finished by its units of
// work (cobv batches; slips by rows), each done alone, last first, by an
// executor that reads only its unit from the journal: every row is issued
// and the service holds exactly one charge per row. Slips go by units of
// 50 rows here (500 in a run): three units, the last one short, are what
// the test proves, and 1,203 slips under -race took 18 s for nothing more.
func TestUnitsOneAtATime(t *testing.T) {
	ctx := context.Background()
	defer run.SetPostUnitRows(50)()
	dir := t.TempDir()
	rn, err := run.StartEmbedded(filepath.Join(dir, "sb"))
	if err != nil {
		t.Fatal(err)
	}
	defer rn.Close()
	cl := runtest.Client(t, rn)
	for _, c := range []struct {
		kind  string
		rows  int
		units int
	}{{"boletos", 123, 3}, {"cobv", 35, 4}} {
		t.Run(c.kind, func(t *testing.T) {
			work := filepath.Join(dir, c.kind)
			if err := os.MkdirAll(work, 0o755); err != nil {
				t.Fatal(err)
			}
			job := writeJob(t, work, c.kind, payersOn(c.rows, 61, "financeiro@units.example.com"), "")
			// the first run stops early: after one slip; at the quota
			// of one call a route for the batches
			opts := run.Options{Embedded: rn, RunsDir: filepath.Join(work, "runs"), Getenv: runtest.NoEnv, Quiet: true, StopAfter: 1, Concurrency: 8}
			if c.kind == "cobv" {
				opts.StopAfter, opts.Quota = 0, 1
			}
			first, err := run.Run(ctx, job, opts)
			if err != nil || first.ExitCode() != 3 || first.Results.Totals.Pending.Rows == 0 {
				t.Fatalf("first run: %v, totals %+v", err, first.Results.Totals)
			}
			if n, err := run.WorkUnits(ctx, first.Dir); err != nil || n != c.units {
				t.Fatalf("%d units (%v), want %d", n, err, c.units)
			}
			opts.StopAfter, opts.Quota = 0, 0
			out, err := run.ResumeByUnits(ctx, first.Dir, opts)
			if err != nil || out.ExitCode() != 0 || out.Results.Totals.Issued.Rows != c.rows {
				t.Fatalf("by units: %v, totals %+v", err, out.Results.Totals)
			}
			res, err := out.LoadResults()
			if err != nil {
				t.Fatal(err)
			}
			if c.kind == "cobv" {
				for _, r := range res.Rows {
					if r.Txid == "" || r.PixCopiaECola == "" || r.BatchID == "" {
						t.Fatalf("row %d: %+v", r.Index, r)
					}
				}
				return
			}
			seen := map[string]int{}
			for _, ch := range listCharges(t, cl, "billet") {
				if ch.CustomID != nil {
					seen[*ch.CustomID]++
				}
			}
			for _, r := range res.Rows {
				if seen[r.CustomID] != 1 {
					t.Fatalf("row %d (%s): %d charges", r.Index, r.CustomID, seen[r.CustomID])
				}
			}
		})
	}
}
