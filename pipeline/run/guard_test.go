package run

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"remessa/pipeline/journal"
	"remessa/pipeline/results"
	"remessa/reports"
)

// runFolder makes a run folder (its journal file is what the index checks).
func runFolder(t *testing.T, runsDir, id string) string {
	t.Helper()
	d := filepath.Join(runsDir, id)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, journal.FileName), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestIndexImportsJSONL: a runs folder with the old runs.jsonl (and no
// runs.db) is imported once: the same job is found with its completeness
// from results.json, repeated rows are counted without the rows the
// service denied and without removed runs, a line cut by a crash is
// skipped, and the .jsonl is renamed and not imported again.
func TestIndexImportsJSONL(t *testing.T) {
	ctx := context.Background()
	runsDir := t.TempDir()
	a, b := runFolder(t, runsDir, "A"), runFolder(t, runsDir, "B")
	gone := filepath.Join(runsDir, "C") // removed since
	keysA := []string{"k1|2027-01-10", "k2|2027-01-10", "k3|2027-01-10"}
	var lines []string
	for _, e := range []Entry{
		{RunID: "A", Dir: a, JobSHA256: "job", InputSHA256: "in", Service: "embedded", StartedAt: "2026-01-01T00:00:00Z", Keys: keysA},
		{RunID: "B", Dir: b, JobSHA256: "job2", InputSHA256: "in2", Service: "sandbox", StartedAt: "2026-01-02T00:00:00Z", Keys: []string{"k1|2027-01-10"}},
		{RunID: "C", Dir: gone, JobSHA256: "job3", InputSHA256: "in3", Service: "embedded", StartedAt: "2026-01-03T00:00:00Z", Keys: keysA},
	} {
		l, _ := json.Marshal(e)
		lines = append(lines, string(l))
	}
	lines = append(lines, `{"run_id":"D","dir":`) // cut by a crash
	if err := os.WriteFile(filepath.Join(runsDir, LegacyIndexFile), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	res := &results.Results{Version: results.FileVersion, Run: results.RunInfo{ID: "A", Complete: true}, Rows: []results.Row{
		{Key: "k1", DueDate: "2027-01-10", Outcome: results.Issued},
		{Key: "k2", DueDate: "2027-01-10", Outcome: results.Denied},
		{Key: "k3", DueDate: "2027-01-10", Outcome: results.Issued},
	}}
	buf, _ := json.Marshal(res)
	if err := os.WriteFile(filepath.Join(a, reports.FileJSON), buf, 0o644); err != nil {
		t.Fatal(err)
	}

	idx := &Index{Path: filepath.Join(runsDir, IndexFile)}
	same, w, err := idx.earlier(ctx, earlierQuery{JobSHA256: "job", InputSHA256: "in", Service: "embedded", Keys: keysA})
	if err != nil || same == nil || same.RunID != "A" || same.Dir != a || !same.Complete || w != "" {
		t.Fatalf("same job: %+v %q %v", same, w, err)
	}
	if _, err := os.Stat(filepath.Join(runsDir, LegacyIndexFile)); !os.IsNotExist(err) {
		t.Fatalf("runs.jsonl still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(runsDir, LegacyIndexFile+".importado")); err != nil {
		t.Fatal(err)
	}
	// the same rows, another input: a warning naming A only (B is another
	// service, C is gone), without the denied k2
	_, w, err = idx.earlier(ctx, earlierQuery{JobSHA256: "job", InputSHA256: "other", Service: "embedded", Keys: []string{"k3|2027-01-10", "k2|2027-01-10", "k1|2027-01-10", "k9|2027-01-10"}})
	want := "atenção: 2 linha(s) repetem chave e vencimento de execuções anteriores: 2 na execução A (ex.: k1 vencimento 2027-01-10; k3 vencimento 2027-01-10). Verifique se não são cobranças em duplicidade."
	if err != nil || w != want {
		t.Fatalf("overlaps:\n got %q (%v)\nwant %q", w, err, want)
	}
	// --again: no same-run answer, the warning still
	if same, w, err := idx.earlier(ctx, earlierQuery{JobSHA256: "job", InputSHA256: "in", Service: "embedded", Keys: keysA, Again: true}); err != nil || same != nil || !strings.Contains(w, "2 na execução A") {
		t.Fatalf("again: %+v %q %v", same, w, err)
	}
	// a runs.jsonl that shows up again (an older remessa) is not imported twice
	if err := os.WriteFile(filepath.Join(runsDir, LegacyIndexFile), []byte(lines[0]+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := idx.Append(Entry{RunID: "E", Dir: runFolder(t, runsDir, "E"), JobSHA256: "j", InputSHA256: "i", Service: "embedded", Keys: []string{"k1|2027-01-10"}}); err != nil {
		t.Fatal(err)
	}
	db, err := idx.open(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n, rows int
	if err := db.QueryRow(`SELECT count(*), (SELECT count(*) FROM row_keys) FROM runs`).Scan(&n, &rows); err != nil || n != 4 || rows != 8 {
		t.Fatalf("runs %d, row keys %d (%v); want 4 and 8", n, rows, err)
	}
	// a run resumed: k2 went out this time; the run tells the index when
	// it writes its new results.json
	res.Rows[1].Outcome = results.Issued
	buf, _ = json.Marshal(res)
	if err := os.WriteFile(filepath.Join(a, reports.FileJSON), buf, 0o644); err != nil {
		t.Fatal(err)
	}
	complete, denied := readResults(filepath.Join(a, reports.FileJSON))
	noteResults(a, complete, denied)
	if _, w, err := idx.earlier(ctx, earlierQuery{Service: "embedded", Keys: []string{"k2|2027-01-10"}}); err != nil || !strings.Contains(w, ": 1 na execução A (ex.: k2 vencimento 2027-01-10).") {
		t.Fatalf("after resume: %q %v", w, err)
	}
}

// TestIndexConcurrentAppends: two writers with their own connections (a
// `remessa run` and a `remessa web` on one folder) append at the same time
// and every run is there, with all its rows.
func TestIndexConcurrentAppends(t *testing.T) {
	runsDir := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			idx := &Index{Path: filepath.Join(runsDir, IndexFile)}
			for i := 0; i < 15; i++ {
				keys := make([]string, 200)
				for j := range keys {
					keys[j] = fmt.Sprintf("w%d-%d-%d|2027-01-10", w, i, j)
				}
				if err := idx.Append(Entry{RunID: fmt.Sprintf("w%d-%d", w, i), Dir: filepath.Join(runsDir, "x"), Service: "embedded", Keys: keys}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	db, err := (&Index{Path: filepath.Join(runsDir, IndexFile)}).open(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n, rows int
	if err := db.QueryRow(`SELECT count(*), (SELECT count(*) FROM row_keys) FROM runs`).Scan(&n, &rows); err != nil || n != 30 || rows != 30*200 {
		t.Fatalf("runs %d, row keys %d (%v)", n, rows, err)
	}
}
