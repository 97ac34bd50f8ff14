package run_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/sandbox/faults"
)

// observed records the snapshots a run's Observe gets.
type observed struct {
	mu    sync.Mutex
	snaps []run.Snapshot
}

func (o *observed) add(s run.Snapshot) {
	o.mu.Lock()
	o.snaps = append(o.snaps, s)
	o.mu.Unlock()
}

func (o *observed) all() []run.Snapshot {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]run.Snapshot(nil), o.snaps...)
}

// TestObserve: a 12-carnet run, one at a time with 200 ms per POST, on a
// shared embedded sandbox, with no Progress writer: snapshots come at
// least once a second, Done never goes back, the phases show, and the last
// one is the only Finished one, with every row done.
func TestObserve(t *testing.T) {
	rn, err := run.StartEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer rn.Close()
	lat := faults.Duration(200 * time.Millisecond)
	if err := rn.Server.Faults().SetConfig(faults.Config{Routes: map[string]faults.Override{"POST /v1/carnet": {Latency: &lat}}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	job := writeJob(t, dir, "carnets", payers(12, 41), "")
	var obs observed
	began := time.Now()
	out, err := run.Run(context.Background(), job, run.Options{Embedded: rn, Concurrency: 1, Observe: obs.add})
	if err != nil || out.ExitCode() != 0 {
		t.Fatalf("run: %v exit %d", err, out.ExitCode())
	}
	took := time.Since(began)
	snaps := obs.all()
	if took < 2*time.Second {
		t.Fatalf("the run took %v, too short to test the cadence", took)
	}
	if len(snaps) < int(took/time.Second) {
		t.Fatalf("%d snapshots in %v", len(snaps), took)
	}
	phases := map[string]bool{}
	prev := snaps[0]
	for i, s := range snaps {
		phases[s.Phase] = true
		if s.RunID != out.RunID || s.Kind != results.Carnets {
			t.Fatalf("snapshot %d: run %q kind %q", i, s.RunID, s.Kind)
		}
		if s.Done < prev.Done {
			t.Fatalf("snapshot %d: done %d after %d", i, s.Done, prev.Done)
		}
		if i > 0 && s.At.Sub(prev.At) > 1200*time.Millisecond {
			t.Fatalf("snapshot %d came %v after the one before", i, s.At.Sub(prev.At))
		}
		if s.Finished != (i == len(snaps)-1) {
			t.Fatalf("snapshot %d of %d: finished %v", i, len(snaps), s.Finished)
		}
		if s.Done > 0 && !s.Finished && s.Rate <= 0 {
			t.Errorf("snapshot %d: done %d at rate %v", i, s.Done, s.Rate)
		}
		prev = s
	}
	last := snaps[len(snaps)-1]
	if !last.Finished || last.Stopped || last.Total != 12 || last.Done != 12 || last.Issued != 12 || last.ETA != 0 {
		t.Fatalf("last snapshot: %+v", last)
	}
	if !phases["12 linha(s) a emitir, 1 simultâneas"] {
		t.Errorf("phases seen: %v", phases)
	}
	// the run took its first snapshot before its end
	if snaps[0].Finished || len(snaps) < 3 {
		t.Errorf("snapshots: %+v", snaps)
	}
}

// TestObserveStopped: a run stopped after 3 calls ends with a Finished,
// Stopped snapshot; its resume (own embedded sandbox) ends with every row
// done.
func TestObserveStopped(t *testing.T) {
	dir := t.TempDir()
	job := writeJob(t, dir, "boletos", payers(8, 43), "")
	var obs observed
	out, err := run.Run(context.Background(), job, run.Options{Concurrency: 1, StopAfter: 3, Observe: obs.add})
	if err != nil || out.Stop == nil {
		t.Fatalf("run: %v stop %v", err, out.Stop)
	}
	snaps := obs.all()
	last := snaps[len(snaps)-1]
	if !last.Finished || !last.Stopped || last.Total != 8 || last.Done >= 8 {
		t.Fatalf("last snapshot of the stopped run: %+v", last)
	}
	var obs2 observed
	out, err = run.Resume(context.Background(), out.Dir, run.Options{Observe: obs2.add})
	if err != nil || out.ExitCode() != 0 {
		t.Fatalf("resume: %v exit %d", err, out.ExitCode())
	}
	snaps = obs2.all()
	last = snaps[len(snaps)-1]
	if !last.Finished || last.Stopped || last.Total != 8 || last.Done != 8 || last.Issued != 8 {
		t.Fatalf("last snapshot of the resume: %+v", last)
	}
}
