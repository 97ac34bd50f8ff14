package cluster_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"remessa/internal/pgtest"
	"remessa/pipeline/cluster"
)

// TestRescueDead: of three units running since before their lease, the
// one whose lock no one holds (its worker died) goes back to the queue,
// retryable, with an error saying why; the one whose lock is held (its
// worker lives, past its lease) and the one that started just now stay
// running.
func TestRescueDead(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("needs PostgreSQL; skipped with -short")
	}
	ctx := context.Background()
	d, err := cluster.Open(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	c, err := cluster.NewClient(d, cluster.ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	units := []cluster.UnitArgs{{Run: "R", Unit: 1}, {Run: "R", Unit: 2}, {Run: "R", Unit: 3}}
	if err := cluster.Enqueue(ctx, c, units); err != nil {
		t.Fatal(err)
	}
	// units 1 and 2 started a minute ago, unit 3 just now
	if _, err := d.Pool.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1,
		attempted_at = CASE WHEN (args->>'unit')::int = 3 THEN now() ELSE now() - interval '1 minute' END`); err != nil {
		t.Fatal(err)
	}
	live, err := cluster.LockUnit(ctx, d, "R", 2)
	if err != nil || live == nil {
		t.Fatalf("lock of unit 2: %v", err)
	}
	defer live.Release()
	n, err := cluster.RescueDead(ctx, d, 30*time.Second)
	if err != nil || n != 1 {
		t.Fatalf("RescueDead: %d units (%v), want 1", n, err)
	}
	rows, err := d.Pool.Query(ctx, `SELECT (args->>'unit')::int, state::text, coalesce(errors[1]->>'error', '') FROM river_job ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	want := map[int]string{1: "retryable", 2: "running", 3: "running"}
	seen := 0
	for rows.Next() {
		var unit int
		var state, msg string
		if err := rows.Scan(&unit, &state, &msg); err != nil {
			t.Fatal(err)
		}
		seen++
		if state != want[unit] || (unit == 1) != strings.Contains(msg, "morreu") {
			t.Errorf("unit %d: %s, error %q; want %s", unit, state, msg, want[unit])
		}
	}
	if seen != 3 {
		t.Errorf("%d jobs, want 3", seen)
	}
	// the lock RescueDead took to look is free again: a worker takes it
	l, err := cluster.LockUnit(ctx, d, "R", 1)
	if err != nil || l == nil {
		t.Fatalf("lock of unit 1 after RescueDead: %v", err)
	}
	l.Release()
}
