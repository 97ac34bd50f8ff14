package status_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"remessa/pipeline/run"
	"remessa/pipeline/run/runtest"
	"remessa/pipeline/status"
	"remessa/sandbox/control"
)

// BenchmarkStatus100k: a 100,000-row cobv run on the embedded sandbox,
// synced once; then 30 % of its charges are paid by Pix. Each iteration
// restores the ledger as the first sync left it and syncs again: the time
// and the calls it takes to take in 30,000 payments. Targets: under 10 s,
// at most one call per 500 charges. Setup (issuing and paying) takes a
// minute or two; run with -benchtime 1x or 3x.
func BenchmarkStatus100k(b *testing.B) {
	const rows = 100_000
	ctx := context.Background()
	dir := b.TempDir()
	var csv strings.Builder
	csv.WriteString("Código;Nome;CPF;Valor\n")
	for i := 0; i < rows; i++ {
		fmt.Fprintf(&csv, "P%06d;Pagador %d;%s;%d,%02d\n", i, i, runtest.CPF(fmt.Sprintf("%09d", 100000000+i*7919%800000000)), 50+i%900, i%100)
	}
	os.WriteFile(filepath.Join(dir, "pix.csv"), []byte(csv.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "cobv.yaml"), []byte("version: 1\nname: Pix grande\ninput: {file: pix.csv, key: Código}\non_invalid: skip\n"+
		"issue:\n  cobv:\n    due: +20d\n    chave: financeiro@example.com\nreports:\n  formats: [json]\n"), 0o644)
	rn, err := run.StartEmbedded(filepath.Join(dir, "sb"))
	if err != nil {
		b.Fatal(err)
	}
	defer rn.Close()
	out, err := run.Run(ctx, filepath.Join(dir, "cobv.yaml"), run.Options{Embedded: rn, RunsDir: filepath.Join(dir, "out"), Concurrency: 8})
	if err != nil || out.Results.Totals.Issued.Rows < rows*9/10 {
		b.Fatalf("issue: %v", err)
	}
	if out.Results, err = out.LoadResults(); err != nil { // the rows, from results.json
		b.Fatal(err)
	}
	opts := status.Options{Run: run.Options{Embedded: rn}}
	first, err := status.Sync(ctx, out.Dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("first sync: %d charges, %d calls", first.Charges, first.Calls)
	saved := filepath.Join(dir, "situacao.saved")
	copyLedger(b, out.Dir, saved, true)
	// pay 30 % of the charges
	ctl := &control.Client{BaseURL: rn.URL}
	var wg sync.WaitGroup
	txids := make(chan string)
	var paid int
	for _, r := range out.Results.Rows {
		if r.Txid != "" && r.Index%10 < 3 {
			paid++
		}
	}
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for tx := range txids {
				if _, err := ctl.PayPix(ctx, tx, ""); err != nil {
					b.Error(err)
				}
			}
		}()
	}
	for _, r := range out.Results.Rows {
		if r.Txid != "" && r.Index%10 < 3 {
			txids <- r.Txid
		}
	}
	close(txids)
	wg.Wait()
	b.ResetTimer()
	var calls, charges int
	for b.Loop() {
		b.StopTimer()
		copyLedger(b, saved, out.Dir, false)
		b.StartTimer()
		s, err := status.Sync(ctx, out.Dir, opts)
		if err != nil {
			b.Fatal(err)
		}
		if s.Received.Count != paid || s.Changed != paid {
			b.Fatalf("received %d, changed %d, want %d", s.Received.Count, s.Changed, paid)
		}
		calls, charges = s.Calls, s.Charges
	}
	b.ReportMetric(float64(calls), "calls/op")
	b.ReportMetric(float64(charges)/float64(calls), "charges/call")
}

// copyLedger copies a run folder's ledger to a backup folder or back.
func copyLedger(tb testing.TB, from, to string, toBackup bool) {
	tb.Helper()
	os.MkdirAll(to, 0o755)
	for _, f := range []string{status.FileName, status.FileName + "-wal", status.FileName + "-shm"} {
		b, err := os.ReadFile(filepath.Join(from, f))
		if os.IsNotExist(err) {
			os.Remove(filepath.Join(to, f))
			continue
		}
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, f), b, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}
