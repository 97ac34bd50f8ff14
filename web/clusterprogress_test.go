package web

import (
	"testing"
	"time"

	"remessa/pipeline/cluster"
	"remessa/pipeline/journal"
	"remessa/pipeline/run"
)

// TestClusterProgressRate: a cluster run's page shows the rows finished
// per second since the run started (until it finished) and the time left
// at that rate; it showed 0 for every cluster run.
func TestClusterProgressRate(t *testing.T) {
	start := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	st := run.ClusterRun{Run: cluster.Run{StartedAt: start, Rows: 400},
		States: map[string]int{journal.RowIssued: 90, journal.RowDenied: 10, journal.RowPending: 300}}
	p := clusterProgressAt(st, 400, start.Add(20*time.Second))
	if p.Done != 100 || p.Rate != 5 || p.ETASeconds != 60 {
		t.Fatalf("running: done %d, rate %v, eta %d s; want 100, 5, 60", p.Done, p.Rate, p.ETASeconds)
	}
	fin := start.Add(40 * time.Second)
	st.Run.FinishedAt = &fin
	st.States = map[string]int{journal.RowIssued: 390, journal.RowDenied: 10}
	p = clusterProgressAt(st, 400, fin.Add(time.Hour))
	if p.Done != 400 || p.Rate != 10 || p.ETASeconds != 0 {
		t.Fatalf("finished: done %d, rate %v, eta %d s; want 400, 10, 0 (the rate up to its end)", p.Done, p.Rate, p.ETASeconds)
	}
	if p := clusterProgressAt(run.ClusterRun{}, 10, start); p.Rate != 0 {
		t.Fatalf("a run not yet in the index: rate %v, want 0", p.Rate)
	}
}
