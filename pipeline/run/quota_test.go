package run_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"remessa/api"
	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/sandbox"
	"remessa/sandbox/faults"
)

// TestConfiguredQuota: a run with a quota of 5 requests per route and day
// stops cleanly after 5 carnets, says when it can go on, and a resume
// (here with the quota lifted) issues the rest, each row exactly once.
func TestConfiguredQuota(t *testing.T) {
	dir := t.TempDir()
	rn := startSandbox(t, sandbox.Memory, nil)
	ps := payers(12, 4)
	job := writeJob(t, dir, "carnets", ps, "service: sandbox")
	ctx := context.Background()
	out, err := run.Run(ctx, job, run.Options{BaseURL: rn.URL, Getenv: remoteEnv, Quota: 5, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stop == nil || out.ExitCode() != 3 || !strings.Contains(out.Stop.Error(), "cota") {
		t.Fatalf("want a quota stop with exit 3, got %v exit %d", out.Stop, out.ExitCode())
	}
	if out.Stop.ResumeAt.IsZero() || out.Stop.ResumeAt.Before(time.Now()) || time.Until(out.Stop.ResumeAt) > 24*time.Hour {
		t.Fatalf("resume time %v", out.Stop.ResumeAt)
	}
	res := loadResults(t, out.Dir)
	if res.Totals.Issued.Rows != 5 || res.Totals.Pending.Rows != 7 || res.Run.Complete {
		t.Fatalf("after the quota: %+v complete %v", res.Totals, res.Run.Complete)
	}
	// a resume under the same quota the same day stops at once, sending nothing
	out2, err := run.Resume(ctx, out.Dir, run.Options{BaseURL: rn.URL, Getenv: remoteEnv, Quota: 5})
	if err != nil || out2.Stop == nil {
		t.Fatalf("resume under quota: %v %v", err, out2.Stop)
	}
	cl := client(t, rn, testClientID, testClientSecret)
	if n := len(listCharges(t, cl, "carnet")); n != 5*3 {
		t.Fatalf("sandbox has %d parcels after the quota stop, want 15", n)
	}
	out3, err := run.Resume(ctx, out.Dir, run.Options{BaseURL: rn.URL, Getenv: remoteEnv, Quota: 1000})
	if err != nil || out3.ExitCode() != 0 {
		t.Fatalf("resume: %v exit %d stop %v", err, out3.ExitCode(), out3.Stop)
	}
	assertOneCarnetEach(t, cl, out.RunID, ps, 3)
}

// TestServiceQuota: the service answers 429 with its daily-quota code; the
// run stops, and after the quota is reset a resume completes the job.
func TestServiceQuota(t *testing.T) {
	dir := t.TempDir()
	rn := startSandbox(t, sandbox.Memory, func(c *sandbox.Config) {
		c.Faults = faults.Config{Routes: map[string]faults.Override{"POST /v1/charge/one-step": {Quota: ptr(8)}}}
	})
	ps := payers(12, 5)
	job := writeJob(t, dir, "boletos", ps, "service: sandbox")
	ctx := context.Background()
	out, err := run.Run(ctx, job, run.Options{BaseURL: rn.URL, Getenv: remoteEnv, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stop == nil || !strings.Contains(out.Stop.Reason, "cota") || out.ExitCode() != 3 {
		t.Fatalf("want a service quota stop, got %v", out.Stop)
	}
	res := loadResults(t, out.Dir)
	if res.Totals.Issued.Rows != 8 || res.Totals.Pending.Rows != 4 {
		t.Fatalf("after the quota: %+v", res.Totals)
	}
	if lb, err := os.ReadFile(filepath.Join(out.Dir, "run.log")); err == nil && os.Getenv("QUOTA_DEBUG") != "" {
		t.Logf("%s", lb)
	}
	rn.Server.Faults().ResetQuota()
	out2, err := run.Resume(ctx, out.Dir, run.Options{BaseURL: rn.URL, Getenv: remoteEnv})
	if err != nil || out2.ExitCode() != 0 {
		t.Fatalf("resume: %v exit %d stop %v", err, out2.ExitCode(), out2.Stop)
	}
	if lb, err := os.ReadFile(filepath.Join(out.Dir, "run.log")); err == nil && os.Getenv("QUOTA_DEBUG") != "" {
		t.Logf("%s", lb)
	}
	cl := client(t, rn, testClientID, testClientSecret)
	got := map[string]int{}
	for _, c := range listCharges(t, cl, "billet") {
		got[*c.CustomID]++
	}
	for _, p := range ps {
		if n := got[run.CustomID(out.RunID, p.Key)]; n != 1 {
			t.Errorf("row %s: %d slips", p.Key, n)
		}
	}
	if r := loadResults(t, out.Dir); r.Totals.Issued.Rows != len(ps) || !r.Run.Complete {
		t.Errorf("final totals %+v", r.Totals)
	}
}

// TestInvalidRows: rows with problems stop the run before anything is sent,
// unless the job says on_invalid: skip (then they are reported refused).
func TestInvalidRows(t *testing.T) {
	dir := t.TempDir()
	ps := payers(5, 6)
	ps[2].CPF = "12345678900" // bad check digits
	job := writeJob(t, dir, "boletos", ps, "")
	_, err := run.Run(context.Background(), job, run.Options{})
	var ie *run.InvalidRowsError
	if !errorsAs(err, &ie) {
		t.Fatalf("want InvalidRowsError, got %v", err)
	}
	// nothing is left behind: no run folder, no runs folder made for it
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 2 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("after the refused run the job's folder holds %q (%v), want only the job and its input", names, err)
	}
	job = writeJob(t, dir, "boletos", ps, "on_invalid: skip")
	out, err := run.Run(context.Background(), job, run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := loadResults(t, out.Dir)
	if res.Totals.Refused.Rows != 1 || res.Totals.Issued.Rows != 4 || res.Rows[2].Outcome != results.Refused || out.ExitCode() != 1 {
		t.Fatalf("skip: totals %+v row 2 %s exit %d", res.Totals, res.Rows[2].Outcome, out.ExitCode())
	}
}

func assertOneCarnetEach(t *testing.T, cl *api.Client, runID string, ps []payer, parcels int) {
	t.Helper()
	carnets := map[string]map[int64]int{}
	for _, c := range listCharges(t, cl, "carnet") {
		if carnets[*c.CustomID] == nil {
			carnets[*c.CustomID] = map[int64]int{}
		}
		carnets[*c.CustomID][c.Payment.Carnet.CarnetID]++
	}
	for _, p := range ps {
		got := carnets[run.CustomID(runID, p.Key)]
		if len(got) != 1 {
			t.Errorf("row %s: %d carnets", p.Key, len(got))
		}
		for _, n := range got {
			if n != parcels {
				t.Errorf("row %s: %d parcels, want %d", p.Key, n, parcels)
			}
		}
	}
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

func ptr[T any](v T) *T { return &v }

// TestInterrupted: a cancelled context (Ctrl-C) stops new calls; the calls
// in flight finish and are journaled, so no row is left ambiguous, and a
// resume issues the rest exactly once.
func TestInterrupted(t *testing.T) {
	dir := t.TempDir()
	lat := faults.Duration(20 * time.Millisecond)
	rn := startSandbox(t, sandbox.Memory, func(c *sandbox.Config) {
		c.Faults = faults.Config{Routes: map[string]faults.Override{"POST /v1/carnet": {Latency: &lat}}}
	})
	ps := payers(20, 14)
	job := writeJob(t, dir, "carnets", ps, "service: sandbox")
	ctx, cancel := context.WithCancel(context.Background())
	opts := run.Options{BaseURL: rn.URL, Getenv: remoteEnv, Concurrency: 2}
	done := make(chan struct{})
	var out *run.Outcome
	var err error
	go func() { out, err = run.Run(ctx, job, opts); close(done) }()
	// cancel once a few carnets exist
	cl := client(t, rn, testClientID, testClientSecret)
	for len(listCharges(t, cl, "carnet")) < 3*3 {
		select {
		case <-done:
			t.Fatal("run ended before it was interrupted")
		case <-time.After(5 * time.Millisecond):
		}
	}
	cancel()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	res := loadResults(t, out.Dir)
	if out.Stop == nil || out.ExitCode() != 3 || res.Totals.Ambiguous.Rows != 0 || res.Totals.Pending.Rows == 0 || res.Totals.Issued.Rows < 3 {
		t.Fatalf("interrupted: stop %v exit %d totals %+v", out.Stop, out.ExitCode(), res.Totals)
	}
	out2, err := run.Resume(context.Background(), out.Dir, opts)
	if err != nil || out2.ExitCode() != 0 {
		t.Fatalf("resume: %v exit %d", err, out2.ExitCode())
	}
	assertOneCarnetEach(t, cl, out.RunID, ps, 3)
}
