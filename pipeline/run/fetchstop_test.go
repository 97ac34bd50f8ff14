package run_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"remessa/pipeline"
	"remessa/pipeline/journal"
	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/sandbox"
)

// TestCobvFetchStopped: a cobv batch without split links is journaled
// once its charges are fetched; a run stopped at the fetch (here by the
// listing's daily quota) journals the batch's rows as created, the batch
// final, and a resume fetches them: every row issued with its Pix code,
// one charge each.
func TestCobvFetchStopped(t *testing.T) {
	dir := t.TempDir()
	rn := startSandbox(t, sandbox.Memory, nil)
	ctx := context.Background()
	ps := payersOn(23, 7, rn.PixKey)
	job := writeJob(t, dir, "cobv", ps, "service: sandbox\nconcurrency: 1\nquota: {\""+pipeline.RouteCobvList+"\": 1}")
	out, err := run.Run(ctx, job, run.Options{BaseURL: rn.URL, Getenv: remoteEnv})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stop == nil || out.ExitCode() != 3 || !strings.Contains(out.Stop.Reason, "cota") {
		t.Fatalf("want a quota stop at the second batch's fetch, got %v exit %d", out.Stop, out.ExitCode())
	}
	j, err := journal.Open(filepath.Join(out.Dir, journal.FileName))
	if err != nil {
		t.Fatal(err)
	}
	bs, err := j.Batches(ctx)
	if err != nil || len(bs) != 3 {
		t.Fatalf("batches %+v %v", bs, err)
	}
	if bs[0].State != journal.BatchDone || bs[1].State != journal.BatchFinal || bs[2].State != journal.BatchPending {
		t.Fatalf("batch states %s %s %s, want done final pending", bs[0].State, bs[1].State, bs[2].State)
	}
	rows, err := j.Rows(ctx)
	j.Close()
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		want := []string{journal.RowIssued, journal.RowCreated, journal.RowPending}[i/10]
		if r.State != want {
			t.Fatalf("row %d %s, want %s", i, r.State, want)
		}
	}
	res := loadResults(t, out.Dir)
	if res.Totals.Issued.Rows != 20 || res.Totals.Pending.Rows != 3 || res.Run.Complete {
		t.Fatalf("after the stop: %+v complete %v", res.Totals, res.Run.Complete)
	}
	for i, r := range res.Rows[:20] {
		if (r.PixCopiaECola != "") != (i < 10) || r.BatchID == "" {
			t.Fatalf("row %d after the stop: batch %q copia %q", i, r.BatchID, r.PixCopiaECola)
		}
	}
	out2, err := run.Resume(ctx, out.Dir, run.Options{BaseURL: rn.URL, Getenv: remoteEnv, Quota: 1000})
	if err != nil || out2.ExitCode() != 0 {
		t.Fatalf("resume: %v exit %d stop %v", err, out2.ExitCode(), out2.Stop)
	}
	res = loadResults(t, out.Dir)
	cl := client(t, rn, testClientID, testClientSecret)
	for i, r := range res.Rows {
		if r.Outcome != results.Issued || r.PixCopiaECola == "" || r.Location == "" || len(r.Problems) > 0 {
			t.Fatalf("row %d after the resume: %+v", i, r)
		}
		cob, err := cl.GetCobV(ctx, r.Txid)
		if err != nil || cob.PixCopiaECola != r.PixCopiaECola {
			t.Fatalf("row %d: %v, copia %q want %q", i, err, cob.PixCopiaECola, r.PixCopiaECola)
		}
	}
	if n := len(res.Rows); n != len(ps) || !res.Run.Complete {
		t.Fatalf("%d rows complete %v", n, res.Run.Complete)
	}
}
