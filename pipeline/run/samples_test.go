package run_test

import (
	"context"
	"path/filepath"
	"testing"

	"remessa/pipeline/results"
	"remessa/pipeline/run"
)

// TestSamplesRunClean runs every sample job on the embedded sandbox: each
// one issues every row (exit 0), with totals that reconcile.
func TestSamplesRunClean(t *testing.T) {
	jobs, _ := filepath.Glob("../../samples/*/*.yaml")
	if len(jobs) < 5 {
		t.Fatalf("found %d sample jobs, want at least 5: %v", len(jobs), jobs)
	}
	for _, job := range jobs {
		t.Run(filepath.Base(filepath.Dir(job))+"/"+filepath.Base(job), func(t *testing.T) {
			runs := t.TempDir()
			out, err := run.Run(context.Background(), job, run.Options{RunsDir: runs})
			if err != nil {
				t.Fatal(err)
			}
			res := loadResults(t, out.Dir)
			if out.ExitCode() != 0 || !res.Run.Complete || res.Totals.In.Rows == 0 || res.Totals.Issued.Rows != res.Totals.In.Rows {
				for _, r := range res.Rows {
					if r.Outcome != results.Issued {
						t.Errorf("row %d (%s): %s %+v", r.SourceRow, r.Key, r.Outcome, r.Problems)
						break
					}
				}
				t.Fatalf("exit %d, complete %v, totals %+v, stop %v", out.ExitCode(), res.Run.Complete, res.Totals, out.Stop)
			}
		})
	}
}
