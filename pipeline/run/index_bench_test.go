package run_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"remessa/formats/fixtures"
	"remessa/pipeline"
	"remessa/pipeline/results"
	"remessa/pipeline/run"
)

// benchRows is the rows of each indexed run and of the planned job.
const benchRows = 100_000

// indexBenchJob is a cobv job over the fixtures' columns, keyed by e-mail.
const indexBenchJob = `version: 1
input: {file: %s, key: email}
issue:
  cobv:
    chave: financeiro@example.com
    multa: {modalidade: 2, valor: 2%%}
`

// benchRunKeys is run r's row identities (r = 0..23): runs 0..22 are
// earlier months of the fixtures' payers; run 23 repeats the first half of
// the planned job's rows (same key, same due date) and has 50,000 others.
func benchRunKeys(r int) []string {
	keys := make([]string, benchRows)
	for j := range keys {
		due := fixtures.FirstDue.AddDate(0, 0, j%28)
		email := fmt.Sprintf("pagador%d@exemplo.com.br", j)
		switch {
		case r < 23:
			due = due.AddDate(0, r-23, 0)
		case j >= benchRows/2:
			email = fmt.Sprintf("outro%d@exemplo.com.br", j)
		}
		keys[j] = email + "|" + due.Format("2006-01-02")
	}
	return keys
}

// BenchmarkPlanAfter24Runs: `remessa plan` of a 100,000-row cobv job in a
// runs folder whose index holds 24 runs of 100,000 rows (a year of two
// monthly jobs), the last of which sent half of the job's rows already.
// The index is built through its API, not by running the jobs. Target:
// under 2 s.
//
//	go test -run '^$' -bench PlanAfter24Runs -benchtime 3x ./pipeline/run/
func BenchmarkPlanAfter24Runs(b *testing.B) {
	dir := b.TempDir()
	input := filepath.Join(dir, "pagadores.csv")
	if err := fixtures.WriteBigCSV(input, benchRows, false); err != nil {
		b.Fatal(err)
	}
	jobPath := filepath.Join(dir, "cobv.yaml")
	writeFileT(b, jobPath, fmt.Sprintf(indexBenchJob, "pagadores.csv"))
	runsDir := filepath.Join(dir, "remessa-out")
	start := time.Now()
	size := buildBenchIndex(b, runsDir)
	b.Logf("index of 24 × %d rows built in %s: %d bytes on disk (%d per run)", benchRows, time.Since(start).Round(time.Millisecond), size, size/24)
	ctx := context.Background()
	if job, err := pipeline.Load(jobPath, pipeline.LoadOptions{}); err == nil {
		t0 := time.Now()
		if _, err := run.Plan(ctx, jobPath, job, filepath.Join(dir, "vazio")); err != nil {
			b.Fatal(err)
		}
		b.Logf("the same plan in an empty runs folder: %s", time.Since(t0).Round(time.Millisecond))
	}
	var total time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		job, err := pipeline.Load(jobPath, pipeline.LoadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		p, err := run.Plan(ctx, jobPath, job, runsDir)
		if err != nil {
			b.Fatal(err)
		}
		total += time.Since(t0)
		if p.Accepted != benchRows || len(p.Earlier) != 1 || !strings.Contains(p.Earlier[0], "50000 linha(s)") ||
			!strings.Contains(p.Earlier[0], "bench-23") || strings.Contains(p.Earlier[0], "bench-22") {
			b.Fatalf("accepted %d, earlier %.300q", p.Accepted, p.Earlier)
		}
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s/plan")
}

// buildBenchIndex writes the 24 runs' folders (a journal file, as the index
// forgets runs whose folder is gone) and their index entries; it returns
// the index's size on disk.
func buildBenchIndex(b *testing.B, runsDir string) int64 {
	idx := &run.Index{Path: filepath.Join(runsDir, run.IndexFile)}
	var resultsFile string
	var res *results.Results
	if os.Getenv("BENCH_RESULTS") != "" {
		resultsFile, res = writeBenchResults(b, runsDir)
	}
	for r := 0; r < 24; r++ {
		id := fmt.Sprintf("bench-%02d", r)
		d := filepath.Join(runsDir, id)
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		writeFileT(b, filepath.Join(d, "journal.db"), "")
		if resultsFile != "" {
			if err := os.Link(resultsFile, filepath.Join(d, "results.json")); err != nil {
				b.Fatal(err)
			}
		}
		e := run.Entry{RunID: id, Dir: d, JobName: "bench", JobSHA256: fmt.Sprintf("%064d", r), InputSHA256: fmt.Sprintf("%064d", r),
			Service: "embedded", StartedAt: time.Now().UTC().Format(time.RFC3339), Keys: benchRunKeys(r)}
		if err := idx.Append(e); err != nil {
			b.Fatal(err)
		}
		if res != nil {
			run.NoteResults(d, res) // as the run does when it writes results.json
		}
	}
	fi, err := os.Stat(idx.Path)
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}

// writeBenchResults writes a complete run's results.json of 100,000 issued
// cobv rows (about the size a real one has), linked into every run folder
// when BENCH_RESULTS is set.
func writeBenchResults(b *testing.B, runsDir string) (string, *results.Results) {
	r := results.Results{Version: results.FileVersion, Run: results.RunInfo{ID: "bench", Kind: results.Cobv, Service: "embedded", Complete: true}}
	r.Rows = make([]results.Row, benchRows)
	for j := range r.Rows {
		txid := fmt.Sprintf("%032d", j)
		r.Rows[j] = results.Row{Index: j, SourceRow: j + 2, Key: fmt.Sprintf("pagador%d@exemplo.com.br", j), PayerName: fmt.Sprintf("Pagador %d", j),
			PayerDoc: fixtures.CPF(j), Outcome: results.Issued, AmountCents: 5000, DueDate: "2027-02-10", CustomID: "remessa-" + txid, Txid: txid,
			BatchID: "1", Location: "pix.example.com/v2/cobv/" + txid,
			PixCopiaECola: "00020101021226830014BR.GOV.BCB.PIX2561pix.example.com/v2/cobv/" + txid + strings.Repeat("0", 120)}
	}
	buf, err := json.Marshal(&r)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(runsDir, 0o755); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(runsDir, "results.bench.json")
	writeFileT(b, path, string(buf))
	b.Logf("results.json of each run: %d bytes", len(buf))
	return path, &r
}
