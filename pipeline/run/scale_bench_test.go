package run_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"remessa/formats/fixtures"
	"remessa/internal/procstat"
	"remessa/pipeline/journal"
	"remessa/pipeline/run"
	"remessa/sandbox"
)

// The scale benchmarks of issue 13: a cobv job of the fixtures' rows run
// end to end in a child process (this test binary, through TestMain),
// which reports its own peak RSS (VmHWM of /proc/self/status, read by the
// child: getrusage's maxrss of a child keeps the parent's peak across
// exec). They measure; they do not assert targets.
//
//	go test -run '^$' -bench 'RunCobvScale|RunCobvEmbedded100k' -benchtime 1x -timeout 30m ./pipeline/run/

// scaleChildEnv carries a scaleReq (JSON) to the child process.
const scaleChildEnv = "REMESSA_SCALE_BENCH_CHILD"

// scaleChildPrefix starts the child's one line of results on its stdout.
const scaleChildPrefix = "SCALE-BENCH-RESULT "

// scaleJob is the cobv job of the benchmarks, as `samples/gen -big` writes
// it, with on_invalid: skip and the JSON report only.
const scaleJob = `version: 1
name: Escala %d
input: {file: pagadores.csv, key: email}
on_invalid: skip
issue:
  cobv:
    chave: %s
    multa: {modalidade: 2, valor: 2%%}
reports:
  formats: [json]
`

// scaleReq is what the child runs.
type scaleReq struct {
	Job        string // job file
	RunsDir    string // fresh runs folder
	SandboxDir string // the embedded sandbox's data folder
	BaseURL    string // a separate sandbox; "" = the embedded default
}

// scaleRes is what the child reports.
type scaleRes struct {
	RunDir                   string
	Seconds                  float64        // run.Run alone
	CPUSeconds               float64        // the child's user and system CPU time
	HWMkB                    int            // the child's VmHWM after the run
	Calls                    map[string]int // calls journaled per route
	Exit                     int
	Issued, Refused, Denied  int
	Ambiguous, Pending, Rows int
}

// scaleChild is the child process of the scale benchmarks (TestMain
// runs it when scaleChildEnv is set): it runs the job spec names and
// prints its report; the exit code is 1 when it could not.
func scaleChild(spec string) int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "scale child:", err); return 1 }
	var req scaleReq
	if err := json.Unmarshal([]byte(spec), &req); err != nil {
		return fail(err)
	}
	opts := run.Options{RunsDir: req.RunsDir, SandboxDir: req.SandboxDir, Quiet: true}
	if req.BaseURL != "" {
		opts.Service, opts.BaseURL, opts.Getenv = "sandbox", req.BaseURL, remoteEnv
		opts.Quota = 100_000_000 // measure the run, not the remote default of 15,000 calls a day
	}
	if p := os.Getenv(scaleProfileEnv); p != "" {
		stop := peakHeapProfile(p)
		defer stop()
	}
	if p := os.Getenv(scaleCPUProfileEnv); p != "" {
		if f, err := os.Create(p); err == nil {
			pprof.StartCPUProfile(f)
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
	}
	start := time.Now()
	out, err := run.Run(context.Background(), req.Job, opts)
	el := time.Since(start)
	if err != nil {
		return fail(err)
	}
	hwm, err := procstat.PeakRSS()
	if err != nil {
		return fail(err)
	}
	tot := out.Results.Totals
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	res := scaleRes{RunDir: out.Dir, Seconds: el.Seconds(), CPUSeconds: cpu.Seconds(), HWMkB: hwm, Exit: out.ExitCode(),
		Issued: tot.Issued.Rows, Refused: tot.Refused.Rows, Denied: tot.Denied.Rows,
		Ambiguous: tot.Ambiguous.Rows, Pending: tot.Pending.Rows, Rows: tot.In.Rows}
	if j, err := journal.Open(filepath.Join(out.Dir, journal.FileName)); err == nil {
		if cc, err := j.CallCounts(context.Background()); err == nil {
			res.Calls = map[string]int{}
			for route, by := range cc {
				for _, n := range by {
					res.Calls[route] += n
				}
			}
		}
		j.Close()
	}
	line, _ := json.Marshal(res)
	fmt.Printf("\n%s%s\n", scaleChildPrefix, line)
	return 0
}

// scaleProfileEnv names a file the child writes the heap profile of its
// largest live heap to (checked every 100 ms): what holds memory at the
// peak, for go tool pprof.
const scaleProfileEnv = "REMESSA_SCALE_HEAP_PROFILE"

// scaleCPUProfileEnv names a file the child writes its CPU profile to.
const scaleCPUProfileEnv = "REMESSA_SCALE_CPU_PROFILE"

// peakHeapProfile samples the live heap and writes a heap profile to path
// each time it reaches a new peak (by an eighth at least); stop ends it.
func peakHeapProfile(path string) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		var peak uint64
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak+peak/8 {
				peak = ms.HeapAlloc
				runtime.GC()
				if f, err := os.Create(path); err == nil {
					pprof.WriteHeapProfile(f)
					f.Close()
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// procCPU is the user and system CPU time process pid has used (0 when
// it cannot be read).
func procCPU(pid int) time.Duration {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// the fields after the command's closing parenthesis: utime and
	// stime are the 12th and 13th, in clock ticks (100 a second)
	i := bytes.LastIndexByte(st, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(st[i+1:]))
	if len(f) < 13 {
		return 0
	}
	var u, s int64
	fmt.Sscan(f[11], &u)
	fmt.Sscan(f[12], &s)
	return time.Duration(u+s) * 10 * time.Millisecond
}

// runScaleChild runs req in a child process and returns its report.
func runScaleChild(b *testing.B, req scaleReq) scaleRes {
	b.Helper()
	spec, _ := json.Marshal(req)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), scaleChildEnv+"="+string(spec))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("child: %v\n%s%s", err, out, stderr.Bytes())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if s, ok := strings.CutPrefix(sc.Text(), scaleChildPrefix); ok {
			var res scaleRes
			if err := json.Unmarshal([]byte(s), &res); err != nil {
				b.Fatal(err)
			}
			return res
		}
	}
	b.Fatalf("no result from the child:\n%s%s", out, stderr.Bytes())
	return scaleRes{}
}

// fileBytes is the total size of the files that exist among paths.
func fileBytes(paths ...string) int64 {
	var n int64
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// scaleInputs generates the CSV of n rows (the fixtures' 12 columns, a
// pt-BR Excel CSV) once per size under root.
type scaleInputs struct {
	root string
	mu   sync.Mutex
	done map[int]string
}

func (s *scaleInputs) csv(b *testing.B, n int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.done[n]; ok {
		return p
	}
	p := filepath.Join(s.root, fmt.Sprintf("pagadores-%d.csv", n))
	t0 := time.Now()
	if err := fixtures.WriteBigCSV(p, n, true); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d rows generated in %s", n, time.Since(t0).Round(time.Millisecond))
	if s.done == nil {
		s.done = map[int]string{}
	}
	s.done[n] = p
	return p
}

// scaleJobDir writes the job for the n-row CSV with the Pix key chave in a
// new folder under root, and returns the job file.
func scaleJobDir(b *testing.B, root, csv string, n int, chave string) string {
	b.Helper()
	dir, err := os.MkdirTemp(root, "job-")
	if err != nil {
		b.Fatal(err)
	}
	if err := os.Link(csv, filepath.Join(dir, "pagadores.csv")); err != nil {
		data, rerr := os.ReadFile(csv)
		if rerr != nil {
			b.Fatal(rerr)
		}
		writeFileT(b, filepath.Join(dir, "pagadores.csv"), string(data))
	}
	return writeFileT(b, filepath.Join(dir, "job.yaml"), fmt.Sprintf(scaleJob, n, chave))
}

// checkScale fails unless the child's run issued every row it could.
func checkScale(b *testing.B, n int, r scaleRes) {
	b.Helper()
	if r.Rows != n || r.Pending != 0 || r.Ambiguous != 0 || r.Issued == 0 || r.Exit == 3 {
		b.Fatalf("run of %d rows: %+v", n, r)
	}
	if r.Issued != n {
		b.Logf("run of %d rows: %d issued, %d refused, %d denied", n, r.Issued, r.Refused, r.Denied)
	}
}

// BenchmarkRunCobvScale runs cobv jobs of 25,000, 100,000 and 200,000
// rows (and 1,000,000 with BENCH_1M=1: some minutes) end to end against
// a separate `remessa sandbox` process (a fresh one per size), the run in
// a child process. Reported: the time of the child (ns/op), the run's
// time per row, the child's peak RSS, the CPU time per row of the run's
// process and of the sandbox's (they share the machine), and the journal
// (journal.db with its -wal, after the run) and results.json bytes per
// row.
//
//	go test -run '^$' -bench RunCobvScale -benchtime 1x -timeout 30m ./pipeline/run/
//	BENCH_1M=1 go test -run '^$' -bench 'RunCobvScale/rows=1000000' -benchtime 1x -timeout 60m ./pipeline/run/
func BenchmarkRunCobvScale(b *testing.B) {
	in := &scaleInputs{root: b.TempDir()}
	sizes := []int{25_000, 100_000, 200_000}
	if os.Getenv("BENCH_1M") != "" {
		sizes = append(sizes, 1_000_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			csv := in.csv(b, n)
			work := b.TempDir()
			data := filepath.Join(work, "sandbox")
			chave := prepareSandboxData(b, data)
			sb := startSandboxProc(b, data)
			job := scaleJobDir(b, work, csv, n, chave)
			var sum scaleSums
			for b.Loop() {
				runs, err := os.MkdirTemp(work, "runs-")
				if err != nil {
					b.Fatal(err)
				}
				sbCPU := procCPU(sb.cmd.Process.Pid)
				r := runScaleChild(b, scaleReq{Job: job, RunsDir: runs, BaseURL: sb.URL})
				b.StopTimer()
				checkScale(b, n, r)
				sum.add(r, n, "")
				sum.sandboxCPU += (procCPU(sb.cmd.Process.Pid) - sbCPU).Seconds() * 1e6 / float64(n)
				b.Logf("calls: %v", r.Calls)
				if os.Getenv("BENCH_PHASES") != "" {
					b.Logf("run.Run took %.2f s", r.Seconds)
					logPhases(b, r.RunDir)
				}
				os.RemoveAll(runs)
				b.StartTimer()
			}
			sum.report(b, false)
		})
	}
}

// BenchmarkRunCobvEmbedded100k runs the same 100,000-row cobv job on the
// embedded default (the sandbox in the run's process, its data in the
// runs folder's .sandbox), in a child process. Reported: as
// BenchmarkRunCobvScale (the peak RSS is the whole process, run and
// sandbox), and the sandbox's sandbox.db with its -wal per cobv.
//
//	go test -run '^$' -bench RunCobvEmbedded100k -benchtime 1x -timeout 30m ./pipeline/run/
func BenchmarkRunCobvEmbedded100k(b *testing.B) {
	const n = 100_000
	in := &scaleInputs{root: b.TempDir()}
	csv := in.csv(b, n)
	work := b.TempDir()
	// the embedded sandbox registers the job's key on its account
	job := scaleJobDir(b, work, csv, n, "financeiro@example.com")
	var sum scaleSums
	for b.Loop() {
		runs, err := os.MkdirTemp(work, "runs-")
		if err != nil {
			b.Fatal(err)
		}
		sbDir := filepath.Join(runs, ".sandbox")
		r := runScaleChild(b, scaleReq{Job: job, RunsDir: runs, SandboxDir: sbDir})
		b.StopTimer()
		checkScale(b, n, r)
		sum.add(r, n, sbDir)
		os.RemoveAll(runs)
		b.StartTimer()
	}
	sum.report(b, true)
}

// logPhases logs the seconds between the run log's first line and each
// of its lines (BENCH_PHASES=1): how long preparation, the calls and the
// results took.
func logPhases(b *testing.B, runDir string) {
	data, err := os.ReadFile(filepath.Join(runDir, "run.log"))
	if err != nil {
		b.Log(err)
		return
	}
	var first time.Time
	for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
		var l struct {
			Time    time.Time `json:"time"`
			Message string    `json:"message"`
		}
		if json.Unmarshal([]byte(line), &l) != nil {
			continue
		}
		if first.IsZero() {
			first = l.Time
		}
		b.Logf("%7.2f s  %s", l.Time.Sub(first).Seconds(), l.Message)
	}
}

// prepareSandboxData creates a sandbox data folder with the test
// application and returns the Pix key of its account (a cobv's chave).
func prepareSandboxData(b *testing.B, data string) string {
	b.Helper()
	srv, err := sandbox.New(sandbox.Config{Addr: "127.0.0.1:0", DataDir: data, ClientID: testClientID, ClientSecret: testClientSecret})
	if err != nil {
		b.Fatal(err)
	}
	rn, err := srv.Start()
	if err != nil {
		b.Fatal(err)
	}
	chave := rn.PixKey
	rn.Close()
	return chave
}

// scaleSums adds the figures of a benchmark's iterations.
type scaleSums struct {
	runs                          int
	usPerRow, peakMB              float64
	cpuPerRow, sandboxCPU         float64 // µs of CPU per row: the run's process, the sandbox's
	journalPerRow, resultsPerRow  float64
	sandboxPerCobv                float64
	lastJournal, lastResults, lsb int64
}

func (s *scaleSums) add(r scaleRes, n int, sandboxDir string) {
	s.runs++
	s.usPerRow += r.Seconds * 1e6 / float64(n)
	s.cpuPerRow += r.CPUSeconds * 1e6 / float64(n)
	s.peakMB += float64(r.HWMkB) / 1024
	j := filepath.Join(r.RunDir, journal.FileName)
	s.lastJournal = fileBytes(j, j+"-wal")
	s.lastResults = fileBytes(filepath.Join(r.RunDir, "results.json"))
	s.journalPerRow += float64(s.lastJournal) / float64(n)
	s.resultsPerRow += float64(s.lastResults) / float64(n)
	if sandboxDir != "" {
		db := filepath.Join(sandboxDir, sandbox.DBFile)
		s.lsb = fileBytes(db, db+"-wal")
		if r.Issued > 0 {
			s.sandboxPerCobv += float64(s.lsb) / float64(r.Issued)
		}
	}
}

func (s *scaleSums) report(b *testing.B, embedded bool) {
	if s.runs == 0 {
		return
	}
	k := float64(s.runs)
	b.ReportMetric(s.usPerRow/k, "µs-per-row")
	b.ReportMetric(s.peakMB/k, "peak-RSS-MB")
	b.ReportMetric(s.cpuPerRow/k, "run-cpu-µs-per-row")
	if !embedded {
		b.ReportMetric(s.sandboxCPU/k, "sandbox-cpu-µs-per-row")
	}
	b.ReportMetric(s.journalPerRow/k, "journal-bytes-per-row")
	b.ReportMetric(s.resultsPerRow/k, "results-bytes-per-row")
	if embedded {
		b.ReportMetric(s.sandboxPerCobv/k, "sandbox-db-bytes-per-cobv")
		b.Logf("last run: journal %d bytes, results.json %d bytes, sandbox.db %d bytes", s.lastJournal, s.lastResults, s.lsb)
	} else {
		b.Logf("last run: journal %d bytes, results.json %d bytes", s.lastJournal, s.lastResults)
	}
}
