package run_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"remessa/pipeline"
	"remessa/pipeline/run"
	"remessa/sandbox"
)

// TestPlanKnowsEarlierRuns: after a run, plan says the same job on the same
// input already ran (and run would refuse it); with a new input that
// repeats two of the earlier rows it names those rows and the earlier run;
// with rows never sent before it says nothing.
func TestPlanKnowsEarlierRuns(t *testing.T) {
	dir := t.TempDir()
	rn := startSandbox(t, sandbox.Memory, nil)
	ps := payers(4, 41)
	job := writeJob(t, dir, "boletos", ps, "service: sandbox")
	ctx := context.Background()
	plan := func() *pipeline.Plan {
		t.Helper()
		j, err := pipeline.Load(job, pipeline.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p, err := run.Plan(ctx, job, j, "")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := plan(); len(p.Earlier) != 0 || p.Accepted != len(ps) {
		t.Fatalf("before any run: earlier %v, accepted %d", p.Earlier, p.Accepted)
	}
	out, err := run.Run(ctx, job, run.Options{BaseURL: rn.URL, Getenv: remoteEnv})
	if err != nil || out.ExitCode() != 0 {
		t.Fatalf("run: %v", err)
	}
	p := plan()
	if len(p.Earlier) != 1 || !strings.Contains(p.Earlier[0], out.RunID) || !strings.Contains(p.Earlier[0], "--again") {
		t.Fatalf("same job and input: earlier %v, want the run %s and --again", p.Earlier, out.RunID)
	}

	// a new sheet: two of the old payers (K0002, K0003) and two new ones
	fresh := payers(6, 42)[4:]
	for i := range fresh {
		fresh[i].Key = "N" + fresh[i].Key
	}
	writeJob(t, dir, "boletos", append([]payer{ps[1], ps[2]}, fresh...), "service: sandbox")
	p = plan()
	if len(p.Earlier) != 1 || !strings.Contains(p.Earlier[0], "2 linha(s)") || !strings.Contains(p.Earlier[0], out.RunID) ||
		!strings.Contains(p.Earlier[0], "K0002") || strings.Contains(p.Earlier[0], "NK") {
		t.Fatalf("repeated rows: earlier %v", p.Earlier)
	}
	writeJob(t, dir, "boletos", fresh, "service: sandbox")
	if p := plan(); len(p.Earlier) != 0 {
		t.Fatalf("only new rows: earlier %v", p.Earlier)
	}
	if _, err := os.Stat(filepath.Join(dir, "remessa-out", run.IndexFile)); err != nil {
		t.Fatalf("runs index: %v", err)
	}
}
