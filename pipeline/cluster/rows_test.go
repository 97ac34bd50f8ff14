package cluster_test

import (
	"context"
	"testing"
	"time"

	"remessa/internal/pgtest"
	"remessa/pipeline/cluster"
)

// TestRepeatedLeavesOutDeniedRows: the repeated-rows warning counts an
// earlier run's rows until its denied rows are forgotten, and only on
// the same service.
func TestRepeatedLeavesOutDeniedRows(t *testing.T) {
	ctx := context.Background()
	d, err := cluster.Open(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, id := range []string{"r-antes", "r-outro-servico"} {
		svc := "sandbox:http://a"
		if id == "r-outro-servico" {
			svc = "sandbox:http://b"
		}
		if err := cluster.AddRun(ctx, d, cluster.Run{RunID: id, JobName: "j", JobSHA256: "x", InputSHA256: id, Kind: "cobv",
			Service: svc, Dir: "/tmp/" + id, Host: "h", Units: 1, Rows: 3, StartedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if err := cluster.AddRunRows(ctx, d, id, []int64{11, 22, 33}); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := cluster.Repeated(ctx, d, "r-nova", "sandbox:http://a", []int64{11, 22, 33, 44})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep) != 1 || rep["r-antes"] != 3 {
		t.Fatalf("before forgetting: %v, want r-antes: 3 only", rep)
	}
	// 22 and 33 were denied in r-antes
	if err := cluster.ForgetRunRows(ctx, d, "r-antes", []int64{22, 33}); err != nil {
		t.Fatal(err)
	}
	rep, err = cluster.Repeated(ctx, d, "r-nova", "sandbox:http://a", []int64{11, 22, 33, 44})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep) != 1 || rep["r-antes"] != 1 {
		t.Fatalf("after forgetting the denied rows: %v, want r-antes: 1", rep)
	}
	// the other service's rows stay
	rep, err = cluster.Repeated(ctx, d, "r-nova", "sandbox:http://b", []int64{22})
	if err != nil {
		t.Fatal(err)
	}
	if rep["r-outro-servico"] != 1 {
		t.Fatalf("other service: %v, want r-outro-servico: 1", rep)
	}
}
