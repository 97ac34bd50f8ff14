package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"remessa/formats"
	"remessa/formats/fixtures"
)

// benchJob is a cobv job over the fixtures' 12 columns (name, cpf, email,
// phone, street, number, city, state, zipcode, amount, due_date,
// description); the e-mail is the row key.
const benchJob = `version: 1
input: {file: %s, key: email}
issue:
  cobv:
    chave: financeiro@example.com
    multa: {modalidade: 2, valor: 2%%}
`

var bigFiles struct {
	sync.Mutex
	dir string
}

// bigInput writes (once per process) a fixtures file and its job.
func bigInput(b *testing.B, name string, write func(string) error) string {
	bigFiles.Lock()
	defer bigFiles.Unlock()
	if bigFiles.dir == "" {
		d, err := os.MkdirTemp("", "remessa-bench")
		if err != nil {
			b.Fatal(err)
		}
		bigFiles.dir = d
	}
	path := filepath.Join(bigFiles.dir, name)
	job := path + ".job.yaml"
	if _, err := os.Stat(job); err == nil {
		return job
	}
	if err := write(path); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(job, []byte(sprintf(benchJob, name)), 0o644); err != nil {
		b.Fatal(err)
	}
	return job
}

// heapPeak samples HeapInuse until stop is closed and returns the peak.
func heapPeak(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		var peak uint64
		var ms runtime.MemStats
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak {
				peak = ms.HeapInuse
			}
			select {
			case <-stop:
				out <- peak
				return
			case <-t.C:
			}
		}
	}()
	return out
}

func benchValidate(b *testing.B, jobPath string, wantRows int) {
	j, err := Load(jobPath, LoadOptions{Now: func() time.Time { return fixedNow }})
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	b.ResetTimer()
	b.ReportAllocs()
	var peak uint64
	for i := 0; i < b.N; i++ {
		stop := make(chan struct{})
		peakc := heapPeak(stop)
		n := 0
		sum, err := ValidateStream(context.Background(), j, Handler{Item: func(*Item) error { n++; return nil }})
		close(stop)
		if p := <-peakc; p > peak {
			peak = p
		}
		if err != nil {
			b.Fatal(err)
		}
		if sum.Rows != wantRows || n != wantRows {
			b.Fatalf("rows %d accepted %d refused %d, want %d clean", sum.Rows, n, sum.Refused, wantRows)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(wantRows*b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
}

// BenchmarkValidateXLSX100k validates a 100,000-row, 12-column XLSX.
// Target: at least 12,000 rows/s and under 100 MB.
func BenchmarkValidateXLSX100k(b *testing.B) {
	job := bigInput(b, "big100k.xlsx", func(p string) error { return fixtures.WriteBigXLSX(p, 100_000) })
	benchValidate(b, job, 100_000)
}

// BenchmarkValidateCSV1M validates a 1,000,000-row pt-BR CSV (Windows-1252,
// ";"), streaming. Target: at least 400,000 rows/s and under 64 MB.
func BenchmarkValidateCSV1M(b *testing.B) {
	job := bigInput(b, "big1m.csv", func(p string) error { return fixtures.WriteBigCSV(p, 1_000_000, true) })
	benchValidate(b, job, 1_000_000)
}

// BenchmarkValidateCSV100k is the same on 100,000 rows (quicker to run).
func BenchmarkValidateCSV100k(b *testing.B) {
	job := bigInput(b, "big100k.csv", func(p string) error { return fixtures.WriteBigCSV(p, 100_000, true) })
	benchValidate(b, job, 100_000)
}

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }

// BenchmarkReadCSV100k is the reader alone on the same file, the floor
// under BenchmarkValidateCSV100k.
func BenchmarkReadCSV100k(b *testing.B) {
	job := bigInput(b, "big100k.csv", func(p string) error { return fixtures.WriteBigCSV(p, 100_000, true) })
	in := strings.TrimSuffix(job, ".job.yaml")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := formats.Open(in, formats.Options{ReuseCells: true})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			if _, err := r.Next(); err != nil {
				break
			}
			n++
		}
		r.Close()
		if n != 100_000 {
			b.Fatalf("%d rows", n)
		}
	}
	b.ReportMetric(float64(100_000*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// TestMain removes the big benchmark inputs when the run ends.
func TestMain(m *testing.M) {
	code := m.Run()
	if bigFiles.dir != "" {
		os.RemoveAll(bigFiles.dir)
	}
	os.Exit(code)
}
