package reports

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"remessa/internal/procstat"
	"remessa/pipeline/results"
)

// bigCobv builds n cobv rows: 94% issued, 5% denied, 1% refused, due dates
// over 12 months.
func bigCobv(n int) *results.Results {
	r := &results.Results{Version: results.FileVersion, Run: runInfo(results.Cobv, "sandbox")}
	r.Rows = make([]results.Row, n)
	for i := range r.Rows {
		r.Rows[i] = bigCobvRow(i)
	}
	r.Compute()
	return r
}

// bigCobvRow is row i of bigCobv.
func bigCobvRow(i int) results.Row {
	txid := fmt.Sprintf("remessa7f3a%024d", i)
	row := results.Row{Index: i, SourceRow: i + 2, Key: fmt.Sprintf("K%07d", i),
		PayerName: fmt.Sprintf("Pagador Número %d da Silva", i), PayerDoc: fmt.Sprintf("%011d", i*7919%100000000000),
		AmountCents: int64(1000 + i%50000), DueDate: fmt.Sprintf("2026-%02d-10", 1+i%12), Txid: txid,
		BatchID: fmt.Sprintf("lote%04d", i/1000)}
	switch {
	case i%100 == 7:
		row.Outcome = results.Refused
		row.Problems = []results.Problem{{Code: "cpf_invalido", Column: "B", Header: "cpf", Value: row.PayerDoc, Message: "CPF inválido"}}
	case i%20 == 3:
		row.Outcome = results.Denied
		row.Problems = []results.Problem{{Code: "lote_negada", Message: "cobv negada pelo serviço"}}
	default:
		row.Outcome = results.Issued
		row.PixCopiaECola = "00020101021226900014br.gov.bcb.pix2568pix.example.com/qr/v2/cobv/" + txid + "5204000053039865802BR5913Escola Aurora6009SAO PAULO62070503***63041D3A"
		row.Location = "pix.example.com/qr/v2/cobv/" + txid
	}
	return row
}

// bigCarnets builds n issued carnets of 12 parcels with a 25% split.
func bigCarnets(n int) *results.Results {
	r := &results.Results{Version: results.FileVersion, Run: runInfo(results.Carnets, "production")}
	r.Rows = make([]results.Row, n)
	for i := range r.Rows {
		row := results.Row{Index: i, SourceRow: i + 2, Key: fmt.Sprintf("C%06d", i), PayerName: fmt.Sprintf("Aluno %d", i),
			PayerDoc: fmt.Sprintf("%011d", i), Outcome: results.Issued, DueDate: "2026-01-10", CarnetID: int64(100000 + i),
			Link: fmt.Sprintf("https://pagamento.sejaefi.com.br/carnet/%d", 100000+i)}
		for p := 1; p <= 12; p++ {
			due := fmt.Sprintf("2026-%02d-10", p)
			id := int64(i*12 + p)
			row.ChargeIDs = append(row.ChargeIDs, id)
			sh := shares(due[:7], 2500, 7500)
			row.Parcels = append(row.Parcels, results.Parcel{Number: p, ChargeID: id, DueDate: due, ValueCents: 10000, Status: "waiting",
				TypedLine:     "36490.00019 00000.000000 00000.000000 1 13900000010000",
				PixCopiaECola: "00020101021226830014BR.GOV.BCB.PIX2561qrcodes.sejaefi.com.br/v2/cobv/abc5204000053039865802BR5905EMPRE6009SAO PAULO62070503***6304ABCD",
				Link:          "https://pagamento.sejaefi.com.br/parcel", Split: sh})
			row.Split = append(row.Split, sh...)
			row.AmountCents += 10000
		}
		r.Rows[i] = row
	}
	r.Compute()
	return r
}

// peakMem samples the Go runtime's memory obtained from the OS while fn
// runs and returns the highest value seen, in MB.
func peakMem(fn func()) float64 {
	var peak uint64
	var mu sync.Mutex
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				runtime.ReadMemStats(&ms)
				mu.Lock()
				peak = max(peak, ms.HeapInuse+ms.StackInuse)
				mu.Unlock()
			}
		}
	}()
	fn()
	close(stop)
	<-done
	return float64(peak) / (1 << 20)
}

func benchWrite(b *testing.B, r *results.Results) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := float64(ms.HeapInuse+ms.StackInuse) / (1 << 20)
	b.ReportMetric(base, "results-heap-MB")
	dir := b.TempDir()
	b.ResetTimer()
	for b.Loop() {
		var err error
		mb := peakMem(func() {
			_, err = Write(dir, r, Options{Now: fixedNow})
		})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(mb, "peak-heap-MB")
		b.ReportMetric(mb-base, "writers-heap-MB")
	}
}

// BenchmarkWrite100kCobv writes every report of a 100,000-row cobv run.
func BenchmarkWrite100kCobv(b *testing.B) { benchWrite(b, bigCobv(100_000)) }

// BenchmarkWrite10kCarnets writes every report of a 10,000-carnet run
// (120,000 parcel lines).
func BenchmarkWrite10kCarnets(b *testing.B) { benchWrite(b, bigCarnets(10_000)) }

// BenchmarkReport100kRSS times "remessa report" on a 100,000-row cobv
// results.json (and on the 10,000-carnet one, 120,000 parcel lines) and
// measures its peak memory as the kernel counts it: each iteration runs
// WriteFromFile, all formats, in a child process (this test binary, through
// TestMain) and reports the child's maximum resident set size
// (its own VmHWM, see runReportChild) as peak-RSS-MB; ns/op is the child's wall time,
// start-up included. The targets: under 10 s and 150 MB.
func BenchmarkReport100kRSS(b *testing.B) {
	for _, c := range []struct {
		name string
		r    func() *results.Results
	}{
		{"cobv100k", func() *results.Results { return bigCobv(100_000) }},
		{"carnets10kx12", func() *results.Results { return bigCarnets(10_000) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			r := c.r()
			if err := writeAtomic(filepath.Join(dir, FileJSON), func(f io.Writer) error { return WriteJSON(f, r) }); err != nil {
				b.Fatal(err)
			}
			r = nil
			runtime.GC()
			b.ResetTimer()
			for b.Loop() {
				b.ReportMetric(runReportChild(b, dir), "peak-RSS-MB")
			}
		})
	}
}

// TestMain runs this test binary as BenchmarkReport100kRSS's child when
// REMESSA_REPORT_CHILD is set: it writes every report of
// REMESSA_REPORT_CHILD/results.json into REMESSA_REPORT_CHILD/reports and
// exits; otherwise it runs the tests.
func TestMain(m *testing.M) {
	if dir := os.Getenv("REMESSA_REPORT_CHILD"); dir != "" {
		os.Exit(reportChild(dir))
	}
	os.Exit(m.Run())
}

// reportChild is what `remessa report` does, all formats; 0 on success.
func reportChild(dir string) int {
	files, r, err := WriteFromFile(filepath.Join(dir, "reports"), filepath.Join(dir, FileJSON), Options{Now: fixedNow})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if ok, diff := r.Totals.Reconciles(); !ok || len(files) < 4 {
		fmt.Fprintf(os.Stderr, "reports %v, reconcile %v %s\n", files, ok, diff)
		return 1
	}
	kb, err := procstat.PeakRSS()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("%s%d\n", reportHWMPrefix, kb)
	return 0
}

// TestWriteBigResults writes the benchmark's 100,000-row cobv results.json
// (or the 10,000-carnet one with REMESSA_BIG_KIND=carnets) into the run
// directory named by REMESSA_BIG_RESULTS, to time "remessa report" on it:
//
//	REMESSA_BIG_RESULTS=/tmp/big go test -run WriteBigResults ./reports
//	/usr/bin/time -v remessa report /tmp/big
func TestWriteBigResults(t *testing.T) {
	dir := os.Getenv("REMESSA_BIG_RESULTS")
	if dir == "" {
		t.Skip("set REMESSA_BIG_RESULTS=DIR to write a 100,000-row results.json")
	}
	r := bigCobv(100_000)
	if os.Getenv("REMESSA_BIG_KIND") == "carnets" {
		r = bigCarnets(10_000)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeAtomic(filepath.Join(dir, "results.json"), func(f io.Writer) error { return WriteJSON(f, r) }); err != nil {
		t.Fatal(err)
	}
}
