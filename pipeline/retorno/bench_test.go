package retorno_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"remessa/pipeline/results"
	"remessa/pipeline/retorno"
	"remessa/pipeline/status"
)

// bigRun writes a run folder of n slips (results.json and a ledger in
// which 30 % are paid, a tenth of those R$ 2,50 over, 2 % cancelled, 1 %
// settled by hand and 1 % refused) inside its own runs folder.
func bigRun(tb testing.TB, n int) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "run")
	os.MkdirAll(dir, 0o755)
	r := &results.Results{Version: results.FileVersion, Run: results.RunInfo{ID: "big", JobName: "Grande", Kind: results.Boletos, Service: "sandbox",
		StartedAt: "2026-11-01T10:00:00Z", Complete: true, Account: "12345"}}
	r.Rows = make([]results.Row, n)
	for i := range r.Rows {
		row := results.Row{Index: i, SourceRow: i + 2, Key: fmt.Sprintf("K%07d", i), PayerName: fmt.Sprintf("Pagador %d da Silva", i),
			PayerDoc: fmt.Sprintf("%011d", i), Outcome: results.Issued, AmountCents: int64(1000 + i%50000), DueDate: fmt.Sprintf("2026-%02d-10", 1+i%12),
			ChargeIDs: []int64{int64(100000 + i)}}
		if i%100 == 99 {
			row.Outcome, row.ChargeIDs = results.Refused, nil
			row.Problems = []results.Problem{{Code: "cpf_invalido", Message: "CPF inválido: dígitos verificadores não conferem"}}
		}
		r.Rows[i] = row
	}
	r.Compute()
	f, err := os.Create(filepath.Join(dir, "results.json"))
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.NewEncoder(f).Encode(r); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	l, err := status.OpenLedger(dir)
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	now := time.Date(2026, 12, 20, 12, 0, 0, 0, time.UTC)
	if _, err := l.Seed(ctx, r, now); err != nil {
		tb.Fatal(err)
	}
	var obs []status.Observation
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Outcome != results.Issued {
			continue
		}
		o := status.Observation{Key: status.KeyOfCharge(row.ChargeIDs[0])}
		switch {
		case i%100 < 30:
			o.Status, o.State, o.Method, o.PaidCents = "paid", status.StatePaid, status.MethodBoleto, row.AmountCents
			o.PaidAt = row.DueDate + "T10:00:00-03:00"
			if i%10 == 0 {
				o.PaidCents += 250
			}
		case i%100 < 32:
			o.Status, o.State = "canceled", status.StateCancelled
		case i%100 == 32:
			o.Status, o.State, o.Method, o.PaidCents = "settled", status.StateSettled, status.MethodManual, row.AmountCents
		default:
			continue
		}
		obs = append(obs, o)
	}
	if _, err := l.Apply(ctx, obs, now, "bench"); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// BenchmarkRetorno100k writes the first CNAB 240 retorno of a 100,000-row
// run (99,000 entries confirmed, 1,000 rejected, 29,700 payments, 1,980
// write-offs, 990 settled by hand: 131,670 T/U pairs in 14 batches),
// recording every event in retornos.db, and reads its trailers back.
// Target: under 2 s. Run it with -benchtime 3x; cpu-s/op is the CPU it
// took, which a busy machine does not inflate.
func BenchmarkRetorno100k(b *testing.B) {
	dir := bigRun(b, 100_000)
	ctx := context.Background()
	at := func() time.Time { return time.Date(2026, 12, 20, 12, 0, 0, 0, time.UTC) }
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b.ResetTimer()
	var used time.Duration
	for b.Loop() {
		b.StopTimer()
		for _, f := range []string{retorno.FileName, retorno.FileName + "-wal", retorno.FileName + "-shm"} {
			os.Remove(filepath.Join(filepath.Dir(dir), f))
		}
		os.RemoveAll(filepath.Join(dir, "retornos"))
		b.StartTimer()
		c0 := cpu()
		r, err := retorno.Write(ctx, dir, retorno.Options{Layout: retorno.Layout240, Now: at})
		if err != nil {
			b.Fatal(err)
		}
		used += cpu() - c0
		if !r.Check.OK || r.NSA != 1 || r.ByEvent[retorno.EventEntrada].Count != 99_000 || r.ByEvent[retorno.EventRejeicao].Count != 1_000 {
			b.Fatalf("%+v", r)
		}
	}
	// the CPU the writing took (both cores), apart from what other
	// processes on a busy machine take from its wall time
	b.ReportMetric(used.Seconds()/float64(b.N), "cpu-s/op")
}
