package run_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"remessa/pipeline/journal"
	"remessa/pipeline/run"
)

// BenchmarkJournalBytesCarnets issues 2,000 carnets of 12 parcels on the
// embedded sandbox and reports the journal's bytes per row (journal.db
// with its -wal, after the run; issue 13's target is at most 1 KB) and
// the run's time per row.
//
//	go test -run '^$' -bench JournalBytesCarnets -benchtime 1x ./pipeline/run/
func BenchmarkJournalBytesCarnets(b *testing.B) {
	const n = 2000
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		job := writeJob(b, dir, "carnets", payers(n, 8), "")
		s, _ := readFile(job)
		s = strings.Replace(s, "repeats: 3", "repeats: 12", 1)
		// no notification_url: the sandbox's outbox would try to deliver 2,000 of them
		s = strings.Replace(s, "    notification_url: https://escola.example.com/notificacoes\n", "", 1)
		writeFileT(b, job, s)
		b.StartTimer()
		start := time.Now()
		out, err := run.Run(context.Background(), job, run.Options{RunsDir: filepath.Join(dir, "runs"), SandboxDir: filepath.Join(dir, "sb"), Concurrency: 16, Quiet: true})
		if err != nil {
			b.Fatal(err)
		}
		el := time.Since(start)
		b.StopTimer()
		if out.ExitCode() != 0 || out.Results.Totals.Issued.Rows != n {
			b.Fatalf("exit %d totals %+v", out.ExitCode(), out.Results.Totals)
		}
		j := filepath.Join(out.Dir, journal.FileName)
		jb := fileBytes(j, j+"-wal")
		b.ReportMetric(float64(jb)/n, "journal-bytes-per-row")
		b.ReportMetric(el.Seconds()*1e6/n, "µs-per-row")
		b.Logf("journal %d bytes for %d carnets of 12", jb, n)
		b.StartTimer()
	}
}
