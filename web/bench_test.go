package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"remessa/formats/fixtures"
)

// The web app's performance targets, measured through a real server on
// loopback with the signed-in HTTP client of helpers_test.go:
//
//	go test -run '^$' -bench . -benchtime 3x ./web/
//	go test -run TestProgressEventsEverySecond ./web/
//
// BenchmarkUploadValidate100k   upload of the 100,000-row XLSX with its job
//                               to the first page of the validation table: < 3 s
// BenchmarkValidationPage100k   a page of that table (any page, filtered or not): < 100 ms
// BenchmarkHome1000Runs         the home page with 1,000 runs: < 50 ms
// BenchmarkRunPage1000Runs      a finished run's page with 1,000 runs: < 50 ms

// benchBigRows is the size of `go run ./samples/gen -big`'s XLSX.
const benchBigRows = 100_000

// benchCobvJob is the job `go run ./samples/gen -big` writes beside its
// inputs (cobv, the e-mail is the row key), for file.
func benchCobvJob(file string) []byte {
	return []byte(fmt.Sprintf("version: 1\ninput: {file: %s, key: email}\nissue:\n  cobv:\n    chave: financeiro@example.com\n    multa: {modalidade: 2, valor: 2%%}\n", file))
}

var benchBig struct {
	once sync.Once
	xlsx []byte
	err  error
}

// benchBigXLSX is big100k.xlsx of `go run ./samples/gen -big` (the same
// generator, fixtures.WriteBigXLSX, called directly: gen -big also writes
// a 1,000,000-row CSV these benchmarks do not need), made once per test
// process and kept in memory.
func benchBigXLSX(tb testing.TB) []byte {
	tb.Helper()
	benchBig.once.Do(func() {
		dir, err := os.MkdirTemp("", "remessa-web-bench-")
		if err != nil {
			benchBig.err = err
			return
		}
		defer os.RemoveAll(dir)
		p := filepath.Join(dir, "big100k.xlsx")
		if benchBig.err = fixtures.WriteBigXLSX(p, benchBigRows); benchBig.err == nil {
			benchBig.xlsx, benchBig.err = os.ReadFile(p)
		}
	})
	if benchBig.err != nil {
		tb.Fatal(benchBig.err)
	}
	return benchBig.xlsx
}

// benchUploadBig uploads the 100,000-row XLSX with its cobv job and
// returns the page the browser ends on (the validation table's first
// page) and the remessa's base path (/remessas/{id}).
func benchUploadBig(tb testing.TB, c *client, xlsx []byte) (*response, string) {
	tb.Helper()
	r := c.postMultipart("/remessas", url.Values{"kind": {"cobv"}, "account": {"1"}},
		upload{Field: "planilha", Name: "big100k.xlsx", Data: xlsx},
		upload{Field: "job", Name: "job.yaml", Data: benchCobvJob("big100k.xlsx")})
	if r.Status != http.StatusOK || !strings.HasSuffix(r.URL.Path, "/validacao") {
		tb.Fatalf("upload: %d at %s: %s", r.Status, r.URL.Path, benchSnippet(r.Body))
	}
	if !strings.Contains(r.Body, fmt.Sprintf(`data-count="rows">%d<`, benchBigRows)) || !strings.Contains(r.Body, "pagador0@exemplo.com.br") {
		tb.Fatalf("validation page lacks the row count or the first row: %s", benchSnippet(r.Body))
	}
	return r, strings.TrimSuffix(r.URL.Path, "/validacao")
}

// BenchmarkUploadValidate100k: POST /remessas (kind, account, the
// 100,000-row XLSX and its job.yaml) followed to the first page of the
// validation table. Target < 3 s. Also reports the process's peak RSS
// (server and client together: the client holds the file and its form).
func BenchmarkUploadValidate100k(b *testing.B) {
	xlsx := benchBigXLSX(b)
	srv := startServer(b)
	c := login(b, srv, "admin", testAdminPassword)
	rssOK := benchResetPeakRSS()
	for b.Loop() {
		benchUploadBig(b, c, xlsx)
	}
	b.ReportMetric(float64(len(xlsx))/(1<<20), "xlsx-MB")
	if hwm, ok := benchPeakRSS(); ok && rssOK {
		b.ReportMetric(float64(hwm)/(1<<20), "peak-rss-MB")
	}
}

var benchProblemLink = regexp.MustCompile(`validacao\?problema=([^"&]+)"`)

// BenchmarkValidationPage100k: after one upload of the 100,000-row XLSX,
// GET pages of its validation table: the first, the 500th, the last, the
// rows with errors, the rows with a problem code (when the sheet has one),
// and all of them in turn. Target < 100 ms a page.
func BenchmarkValidationPage100k(b *testing.B) {
	xlsx := benchBigXLSX(b)
	srv := startServer(b)
	c := login(b, srv, "admin", testAdminPassword)
	first, base := benchUploadBig(b, c, xlsx)
	pages := []struct{ name, query string }{
		{"page1", "?pagina=1"},
		{"page500", "?pagina=500"},
		{"page1000", "?pagina=1000"},
		{"errors", "?so=erros"},
	}
	if m := benchProblemLink.FindStringSubmatch(first.Body); m != nil {
		pages = append(pages, struct{ name, query string }{"problem", "?problema=" + m[1]},
			struct{ name, query string }{"problem-last", "?problema=" + m[1] + "&pagina=1000000"})
	} else {
		b.Logf("the sheet has no problem codes: no ?problema= page")
	}
	get := func(b *testing.B, q string) {
		r := c.get(base + "/validacao" + q)
		if r.Status != http.StatusOK || !strings.Contains(r.Body, `data-count="rows"`) {
			b.Fatalf("GET %s: %d %s", q, r.Status, benchSnippet(r.Body))
		}
	}
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				get(b, p.query)
			}
		})
	}
	b.Run("alternating", func(b *testing.B) {
		i := 0
		for b.Loop() {
			get(b, pages[i%len(pages)].query)
			i++
		}
	})
}

// benchRunsSetup makes one real small run through the flow (a 20-row
// cobv remessa on the embedded service), then adds 999 finished runs (and
// their remessas) and a few remessas in preparation directly in the
// database. It returns the signed-in client and the real run's id.
func benchRunsSetup(b *testing.B) (*client, int64) {
	b.Helper()
	srv := startServer(b)
	c := login(b, srv, "admin", testAdminPassword)
	dir := b.TempDir()
	p := filepath.Join(dir, "pequena.xlsx")
	if err := fixtures.WriteBigXLSX(p, 20); err != nil {
		b.Fatal(err)
	}
	r := c.postMultipart("/remessas", url.Values{"kind": {"cobv"}, "account": {"1"}},
		upload{Field: "planilha", Name: "pequena.xlsx", Data: readSample(b, p)},
		upload{Field: "job", Name: "job.yaml", Data: benchCobvJob("pequena.xlsx")})
	if r.Status != http.StatusOK || !strings.HasSuffix(r.URL.Path, "/validacao") {
		b.Fatalf("upload: %d at %s: %s", r.Status, r.URL.Path, benchSnippet(r.Body))
	}
	base := strings.TrimSuffix(r.URL.Path, "/validacao")
	r = c.postForm(base+"/executar", nil)
	if r.Status != http.StatusOK || !strings.HasPrefix(r.URL.Path, "/execucoes/") {
		b.Fatalf("confirm: %d at %s: %s", r.Status, r.URL.Path, benchSnippet(r.Body))
	}
	realID, _ := strconv.ParseInt(strings.TrimPrefix(r.URL.Path, "/execucoes/"), 10, 64)
	if run := waitRun(b, srv, realID, 90*time.Second); run.Status != "done" {
		b.Fatalf("run ended %s: %s", run.Status, run.Message)
	}

	ctx := context.Background()
	tx, err := srv.db.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	statuses := []string{"done", "done", "done", "problems", "failed", "cancelled"}
	kinds := []string{"cobv", "boletos", "carnets"}
	t0 := time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)
	for i := 0; i < 999; i++ {
		at := t0.Add(time.Duration(i) * 37 * time.Minute).Format(time.RFC3339)
		kind := kinds[i%len(kinds)]
		res, err := tx.ExecContext(ctx, `INSERT INTO drafts (kind, account_id, created_by, created_at, updated_at, input_name, input_file, rows)
			VALUES (?, 1, 1, ?, ?, ?, 'planilha.xlsx', ?)`, kind, at, at, fmt.Sprintf("cobrancas-%04d.xlsx", i), 10+i%500)
		if err != nil {
			b.Fatal(err)
		}
		did, _ := res.LastInsertId()
		runID := fmt.Sprintf("%s-%06x", t0.Add(time.Duration(i)*37*time.Minute).Format("20060102-150405"), i)
		tot := fmt.Sprintf(`{"issued":{"rows":%d,"cents":%d}}`, 10+i%500, int64(10+i%500)*12345)
		if _, err := tx.ExecContext(ctx, `INSERT INTO runs (draft_id, account_id, kind, name, run_id, dir, status, rows, amount_cents, started_by,
			created_at, finished_at, progress, totals) VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?)`,
			did, kind, fmt.Sprintf("Cobranças %04d", i), runID, filepath.Join(srv.runsDir(), runID), statuses[i%len(statuses)],
			10+i%500, int64(10+i%500)*12345, at, at,
			fmt.Sprintf(`{"phase":"fim","total":%d,"done":%d,"issued":%d}`, 10+i%500, 10+i%500, 10+i%500), tot); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < 5; i++ {
		at := t0.Add(time.Duration(1000+i) * 37 * time.Minute).Format(time.RFC3339)
		if _, err := tx.ExecContext(ctx, `INSERT INTO drafts (kind, account_id, created_by, created_at, updated_at, input_name, input_file, rows)
			VALUES ('cobv', 1, 1, ?, ?, ?, 'planilha.xlsx', 42)`, at, at, fmt.Sprintf("rascunho-%d.xlsx", i)); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	var n int
	srv.db.QueryRow(`SELECT count(*) FROM runs`).Scan(&n)
	if n != 1000 {
		b.Fatalf("%d runs, want 1000", n)
	}
	return c, realID
}

// BenchmarkHome1000Runs: GET / with 1,000 runs and 1,000 remessas (a few
// still in preparation). Target < 50 ms.
func BenchmarkHome1000Runs(b *testing.B) {
	c, _ := benchRunsSetup(b)
	for b.Loop() {
		r := c.get("/")
		if r.Status != http.StatusOK || !strings.Contains(r.Body, "Cobranças 0998") || !strings.Contains(r.Body, "rascunho-4.xlsx") {
			b.Fatalf("home: %d %s", r.Status, benchSnippet(r.Body))
		}
	}
}

// BenchmarkRunPage1000Runs: GET /execucoes/{id} of a finished run (a real
// one, with its results.json and reports) among 1,000. Target < 50 ms.
func BenchmarkRunPage1000Runs(b *testing.B) {
	c, id := benchRunsSetup(b)
	path := fmt.Sprintf("/execucoes/%d", id)
	for b.Loop() {
		r := c.get(path)
		if r.Status != http.StatusOK || !strings.Contains(r.Body, "relatorio.xlsx") || !strings.Contains(r.Body, "pagador0@exemplo.com.br") {
			b.Fatalf("run page: %d %s", r.Status, benchSnippet(r.Body))
		}
	}
}

// TestProgressEventsEverySecond starts a cobv run slowed down on the
// embedded sandbox (it lasts several seconds), reads its event stream
// with the signed-in client, and checks that while it goes an event comes
// at least every ~1.2 s (plus however late this process's own goroutines
// woke meanwhile, measured: on a busy machine the desk's ticker is late by
// as much), that done never goes back, and that it ends with done equal to
// total.
func TestProgressEventsEverySecond(t *testing.T) {
	if testing.Short() {
		t.Skip("a run of several seconds")
	}
	// the injected latency, not the rows, makes the run last: 1,000 rows
	// in 40 batches of 25 go as long as 3,000 in 30 batches of 100 did,
	// with a third of the validation and seeding (the CPU under -race that
	// delayed the events of the run's first seconds on a busy machine)
	const rows = 1000
	srv := startServer(t)
	c := login(t, srv, "admin", testAdminPassword)

	// the embedded sandbox, started now (a run would start it), slowed:
	// each batch PUT and each page of the batch's charges wait, so the
	// 40 batches of 25 (4 at a time) take several seconds
	sb, err := srv.embedded()
	if err != nil {
		t.Fatal(err)
	}
	crashSetFaults(t, sb.URL, `{"all":{"latency":"20ms"},"routes":{"PUT /v2/lotecobv/:id":{"latency":"600ms","jitter":"200ms"},"GET /v2/cobv":{"latency":"100ms"}}}`)

	dir := t.TempDir()
	p := filepath.Join(dir, "cobrancas.csv")
	if err := fixtures.WriteBigCSV(p, rows, true); err != nil {
		t.Fatal(err)
	}
	r := c.postMultipart("/remessas", url.Values{"kind": {"cobv"}, "account": {"1"}},
		upload{Field: "planilha", Name: "cobrancas.csv", Data: readSample(t, p)},
		upload{Field: "job", Name: "job.yaml", Data: append(benchCobvJob("cobrancas.csv"), "    batch: {size: 25}\n"...)})
	if r.Status != http.StatusOK || !strings.HasSuffix(r.URL.Path, "/validacao") ||
		!strings.Contains(r.Body, fmt.Sprintf(`data-count="accepted">%d<`, rows)) {
		t.Fatalf("upload: %d at %s: %s", r.Status, r.URL.Path, benchSnippet(r.Body))
	}
	base := strings.TrimSuffix(r.URL.Path, "/validacao")
	r = c.postForm(base+"/executar", nil)
	if r.Status != http.StatusOK || !strings.HasPrefix(r.URL.Path, "/execucoes/") {
		t.Fatalf("confirm: %d at %s: %s", r.Status, r.URL.Path, benchSnippet(r.Body))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+r.URL.Path+"/eventos", nil)
	if err != nil {
		t.Fatal(err)
	}
	// the process's own scheduling lag while the run goes: a goroutine
	// asking to sleep 50 ms notes how much later it woke. On a quiet
	// machine that is a few ms and the gaps are held to 1,2 s; when the
	// machine is busy (go test runs another package's tests beside this
	// one) a gap may be late by as much as this process was late, never
	// more: a desk that skipped a second still fails
	lagDone := make(chan struct{})
	lagMax := make(chan time.Duration, 1)
	stopLag := sync.OnceFunc(func() { close(lagDone) })
	defer stopLag()
	go func() {
		var worst time.Duration
		for {
			select {
			case <-lagDone:
				lagMax <- worst
				return
			default:
			}
			t0 := time.Now()
			time.Sleep(50 * time.Millisecond)
			worst = max(worst, time.Since(t0)-50*time.Millisecond)
		}
	}()
	hc := &http.Client{Jar: c.http.Jar} // a stream: no client timeout
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET eventos: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	type got struct {
		at time.Time
		ev RunEvent
	}
	var evs []got
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			event = v
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		if event != "progress" {
			t.Fatalf("event %q, want progress", event)
		}
		var ev RunEvent
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		evs = append(evs, got{time.Now(), ev})
		if ev.Finished {
			break
		}
	}
	if err := sc.Err(); err != nil && err != io.EOF {
		t.Fatalf("event stream: %v", err)
	}
	if len(evs) == 0 || !evs[len(evs)-1].ev.Finished {
		t.Fatalf("the stream ended before the run did (%d events)", len(evs))
	}
	last := evs[len(evs)-1].ev
	if last.Status != "done" || last.Progress.Done != last.Progress.Total || last.Progress.Total != rows {
		t.Fatalf("last event %+v, want done with %d/%d", last, rows, rows)
	}
	// the run "goes" from the first event that says running
	start := -1
	for i, g := range evs {
		if g.ev.Status == "running" {
			start = i
			break
		}
	}
	if start < 0 {
		t.Fatalf("no running event among %d", len(evs))
	}
	lasted := evs[len(evs)-1].at.Sub(evs[start].at)
	t.Logf("%d events, the run went %s after its first running event (%d events before it)", len(evs), lasted.Round(time.Millisecond), start)
	if lasted < 4*time.Second {
		t.Errorf("the run lasted %s, want at least 4 s for the test to mean anything", lasted)
	}
	stopLag()
	lag := <-lagMax
	allowed := 1200*time.Millisecond + lag
	t.Logf("the process woke up to %s late while the run went: gaps up to %s are allowed", lag.Round(time.Millisecond), allowed.Round(time.Millisecond))
	var maxGap time.Duration
	prevDone := -1
	for i := start; i < len(evs); i++ {
		if d := evs[i].ev.Progress.Done; d < prevDone {
			t.Errorf("event %d: done went back from %d to %d", i, prevDone, d)
		} else {
			prevDone = d
		}
		if i > start {
			gap := evs[i].at.Sub(evs[i-1].at)
			maxGap = max(maxGap, gap)
			if gap > allowed {
				t.Errorf("event %d (%s, %d/%d) came %s after the one before", i, evs[i].ev.Progress.Phase, evs[i].ev.Progress.Done, evs[i].ev.Progress.Total, gap.Round(time.Millisecond))
			}
		}
	}
	between := 0
	for _, g := range evs[start:] {
		if d := g.ev.Progress.Done; d > 0 && d < rows {
			between++
		}
	}
	if between == 0 {
		t.Errorf("no event between 0 and %d done: progress shows only at the end", rows)
	}
	t.Logf("largest gap between events while running: %s; %d events with 0 < done < %d", maxGap.Round(time.Millisecond), between, rows)
	if !t.Failed() {
		return
	}
	var seq []string
	for _, g := range evs {
		seq = append(seq, fmt.Sprintf("%s %s %d/%d", g.at.Sub(evs[0].at).Round(10*time.Millisecond), g.ev.Status, g.ev.Progress.Done, g.ev.Progress.Total))
	}
	t.Logf("events: %s", strings.Join(seq, ", "))
}

// benchResetPeakRSS resets the process's resident-memory high-water mark
// (Linux: VmHWM), so benchPeakRSS measures what comes after; false where
// unsupported.
func benchResetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// benchPeakRSS is the process's resident-memory high-water mark in bytes.
func benchPeakRSS() (uint64, bool) {
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

func benchSnippet(s string) string {
	if len(s) > 1500 {
		return s[:1500] + "…"
	}
	return s
}
