package reports

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"remessa/pipeline/results"
)

// reportHWMPrefix starts the line on which the report child prints its own
// peak RSS (VmHWM of /proc/self/status, in kB). The child reads it itself:
// getrusage's maxrss of a child also counts the parent's pages it shared
// until exec, so a parent holding the benchmark's rows inflates it.
const reportHWMPrefix = "REPORT-CHILD-HWM-KB "

// writeBigCobvJSON writes the results.json of n bigCobv rows into dir
// without holding them (WriteStream, JSON only), so the parent stays small.
func writeBigCobvJSON(dir string, n int) error {
	head := &results.Results{Version: results.FileVersion, Run: runInfo(results.Cobv, "sandbox")}
	rows := func(yield func(*results.Row) error) (results.Totals, error) {
		var t results.Totals
		for i := range n {
			row := bigCobvRow(i)
			t.Add(&row)
			if err := yield(&row); err != nil {
				return t, err
			}
		}
		return t, nil
	}
	_, _, err := WriteStream(dir, head, rows, Options{Formats: []string{FormatJSON}, Now: fixedNow})
	return err
}

// runReportChild writes every report of dir/results.json in a child
// process (reportChild through TestMain) and returns the child's peak RSS
// in MB, as the child read it.
func runReportChild(b *testing.B, dir string) float64 {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "REMESSA_REPORT_CHILD="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("child: %v\n%s%s", err, out, stderr.Bytes())
	}
	for _, ln := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(ln, reportHWMPrefix); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				b.Fatalf("child's HWM line %q: %v", ln, err)
			}
			return float64(kb) / 1024
		}
	}
	b.Fatalf("child printed no %q line:\n%s", reportHWMPrefix, out)
	return 0
}

// BenchmarkReportScaleRSS writes every report (xlsx, csv, json, html) of a
// cobv results.json of 100,000 and, with BENCH_1M=1, 1,000,000 rows in a
// child process and reports the child's own peak RSS (VmHWM) as
// peak-RSS-MB, and the rows per second. Issue 13's target: the whole
// pipeline, reports included, under 256 MB at 1,000,000 rows; the figure
// should not grow with the rows.
//
//	BENCH_1M=1 go test -run '^$' -bench ReportScaleRSS -benchtime 1x -timeout 30m ./reports/
func BenchmarkReportScaleRSS(b *testing.B) {
	sizes := []int{100_000}
	if os.Getenv("BENCH_1M") == "1" {
		sizes = append(sizes, 1_000_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("cobv%dk", n/1000), func(b *testing.B) {
			dir := b.TempDir()
			if err := writeBigCobvJSON(dir, n); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				mb := runReportChild(b, dir)
				b.ReportMetric(mb, "peak-RSS-MB")
			}
			b.StopTimer()
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			st, err := os.Stat(filepath.Join(dir, "reports", FileXLSX))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(st.Size())/(1<<20), "xlsx-MB")
		})
	}
}
