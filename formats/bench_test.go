package formats_test

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"syscall"
	"testing"
	"time"

	"remessa/formats"
	"remessa/formats/fixtures"
)

// Generated files are shared by all benchmarks of one process.
var (
	benchDir  string
	benchOnce = map[string]*sync.Once{}
	benchMu   sync.Mutex
	benchKeep bool
)

func benchFile(b *testing.B, name string, gen func(path string) error) string {
	b.Helper()
	benchMu.Lock()
	if benchDir == "" && os.Getenv("FORMATS_BENCH_DIR") != "" {
		// Keep the generated files between runs (to measure a read alone,
		// e.g. its peak RSS with /usr/bin/time -v).
		benchDir, benchKeep = os.Getenv("FORMATS_BENCH_DIR"), true
		os.MkdirAll(benchDir, 0o755)
	}
	if benchDir == "" {
		d, err := os.MkdirTemp("", "formats-bench")
		if err != nil {
			b.Fatal(err)
		}
		benchDir = d
	}
	once := benchOnce[name]
	if once == nil {
		once = new(sync.Once)
		benchOnce[name] = once
	}
	benchMu.Unlock()
	p := filepath.Join(benchDir, name)
	var err error
	once.Do(func() {
		if _, e := os.Stat(p); e == nil && benchKeep {
			return
		}
		err = gen(p)
	})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" && !benchKeep {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// peakHeap samples the live heap in the background while fn runs and
// returns the highest value seen (bytes).
func peakHeap(fn func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	go func() {
		defer close(done)
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak {
				peak = v
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	fn()
	close(stop)
	<-done
	return peak
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func readAllRows(b *testing.B, path string, opt formats.Options) int {
	r, err := formats.Open(path, opt)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	n := 0
	for {
		_, err := r.Next()
		if err == io.EOF {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
}

func benchRead(b *testing.B, path string, want int, opt formats.Options) {
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	var peak uint64
	for i := 0; i < b.N; i++ {
		p := peakHeap(func() {
			if n := readAllRows(b, path, opt); n != want {
				b.Fatalf("read %d rows, want %d", n, want)
			}
		})
		if p > peak {
			peak = p
		}
	}
	b.ReportMetric(float64(want)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	// Rows per second of CPU time used by the process: a figure that does not
	// depend on how loaded the shared machine is.
	if cpu := (cpuTime() - cpu0).Seconds(); cpu > 0 {
		b.ReportMetric(float64(want)*float64(b.N)/cpu, "rows/cpu-s")
	}
}

// BenchmarkReadXLSX100k reads a 100,000-row, 12-column workbook.
func BenchmarkReadXLSX100k(b *testing.B) {
	p := benchFile(b, "big.xlsx", func(p string) error { return fixtures.WriteBigXLSX(p, 100_000) })
	benchRead(b, p, 100_000, formats.Options{})
}

// BenchmarkReadCSV1M reads a 1,000,000-row pt-BR CSV in UTF-8 with a BOM.
func BenchmarkReadCSV1M(b *testing.B) {
	p := benchFile(b, "big.csv", func(p string) error { return fixtures.WriteBigCSV(p, 1_000_000, false) })
	benchRead(b, p, 1_000_000, formats.Options{})
}

// BenchmarkReadCSV1MReuse is BenchmarkReadCSV1M with Options.ReuseCells.
func BenchmarkReadCSV1MReuse(b *testing.B) {
	p := benchFile(b, "big.csv", func(p string) error { return fixtures.WriteBigCSV(p, 1_000_000, false) })
	benchRead(b, p, 1_000_000, formats.Options{ReuseCells: true})
}

// BenchmarkReadCSV1MCP1252 reads the same rows saved as Windows-1252.
func BenchmarkReadCSV1MCP1252(b *testing.B) {
	p := benchFile(b, "big1252.csv", func(p string) error { return fixtures.WriteBigCSV(p, 1_000_000, true) })
	benchRead(b, p, 1_000_000, formats.Options{})
}

// BenchmarkReadCSV1MCP1252Reuse is BenchmarkReadCSV1MCP1252 with
// Options.ReuseCells (what the pipeline's validate uses).
func BenchmarkReadCSV1MCP1252Reuse(b *testing.B) {
	p := benchFile(b, "big1252.csv", func(p string) error { return fixtures.WriteBigCSV(p, 1_000_000, true) })
	benchRead(b, p, 1_000_000, formats.Options{ReuseCells: true})
}

// BenchmarkReadXLSX100kReuse is BenchmarkReadXLSX100k with
// Options.ReuseCells.
func BenchmarkReadXLSX100kReuse(b *testing.B) {
	p := benchFile(b, "big.xlsx", func(p string) error { return fixtures.WriteBigXLSX(p, 100_000) })
	benchRead(b, p, 100_000, formats.Options{ReuseCells: true})
}
