package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
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
	benchValidateMode(b, jobPath, wantRows, true)
}

// benchValidateMode validates with an Item handler (items are fresh, as
// plan and run get them) or, when items is false, with only a Note
// handler, as remessa validate does (ValidateNotes).
func benchValidateMode(b *testing.B, jobPath string, wantRows int, items bool) {
	j, err := Load(jobPath, LoadOptions{Now: func() time.Time { return fixedNow }})
	if err != nil {
		b.Fatal(err)
	}
	if !items && os.Getenv("GOMEMLIMIT") == "" {
		// as remessa validate runs it
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(SoftMemoryLimit))
	}
	runtime.GC()
	debug.FreeOSMemory()
	rssOK := resetPeakRSS()
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	mallocs0 := ms0.Mallocs
	cpu0 := cpuTime()
	b.ResetTimer()
	b.ReportAllocs()
	var peak uint64
	for i := 0; i < b.N; i++ {
		stop := make(chan struct{})
		peakc := heapPeak(stop)
		n := 0
		h := Handler{Item: func(*Item) error { n++; return nil }}
		if !items {
			h = Handler{Note: func(Note) {}}
		}
		sum, err := ValidateStream(context.Background(), j, h)
		if !items {
			n = sum.Accepted
		}
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
	cpu := cpuTime() - cpu0
	b.ReportMetric(float64(wantRows*b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	if hwm, ok := peakRSS(); ok && rssOK {
		b.ReportMetric(float64(hwm)/(1<<20), "peak-rss-MB")
	}
	b.ReportMetric(float64(wantRows*b.N)/cpu.Seconds(), "rows/cpu-s")
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.Mallocs-mallocs0)/float64(wantRows*b.N), "allocs/row")
}

// BenchmarkValidateXLSX100k validates a 100,000-row, 12-column XLSX.
// Target: at least 12,000 rows/s and under 100 MB.
func BenchmarkValidateXLSX100k(b *testing.B) {
	job := bigInput(b, "big100k.xlsx", func(p string) error { return fixtures.WriteBigXLSX(p, 100_000) })
	benchValidate(b, job, 100_000)
}

// BenchmarkValidateNotesXLSX100k is BenchmarkValidateXLSX100k the way
// remessa validate runs it (notes only, the command's soft memory limit).
func BenchmarkValidateNotesXLSX100k(b *testing.B) {
	job := bigInput(b, "big100k.xlsx", func(p string) error { return fixtures.WriteBigXLSX(p, 100_000) })
	benchValidateMode(b, job, 100_000, false)
}

// BenchmarkValidateCSV1M validates a 1,000,000-row pt-BR CSV (Windows-1252,
// ";"), streaming. Target: at least 400,000 rows/s and under 64 MB.
func BenchmarkValidateCSV1M(b *testing.B) {
	job := bigInput(b, "big1m.csv", func(p string) error { return fixtures.WriteBigCSV(p, 1_000_000, true) })
	benchValidate(b, job, 1_000_000)
}

// BenchmarkValidateNotesCSV1M is BenchmarkValidateCSV1M the way remessa
// validate runs it: only notes are received, no item is kept, under the
// command's soft memory limit.
func BenchmarkValidateNotesCSV1M(b *testing.B) {
	job := bigInput(b, "big1m.csv", func(p string) error { return fixtures.WriteBigCSV(p, 1_000_000, true) })
	benchValidateMode(b, job, 1_000_000, false)
}

// BenchmarkValidateNotesCSV100k is the same on 100,000 rows.
func BenchmarkValidateNotesCSV100k(b *testing.B) {
	job := bigInput(b, "big100k.csv", func(p string) error { return fixtures.WriteBigCSV(p, 100_000, true) })
	benchValidateMode(b, job, 100_000, false)
}

// BenchmarkValidateCSV100k is the same on 100,000 rows (quicker to run).
func BenchmarkValidateCSV100k(b *testing.B) {
	job := bigInput(b, "big100k.csv", func(p string) error { return fixtures.WriteBigCSV(p, 100_000, true) })
	benchValidate(b, job, 100_000)
}

// cpuTime is the user and system CPU time of the process so far: rows
// per CPU-second do not depend on what else the machine is running.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// resetPeakRSS resets the process's resident-memory high-water mark
// (Linux: VmHWM in /proc/self/status), so that peakRSS measures what comes
// after and not the writing of the input file; false where unsupported.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// peakRSS is the resident-memory high-water mark in bytes (VmHWM).
func peakRSS() (uint64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
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
