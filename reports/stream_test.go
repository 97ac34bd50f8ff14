package reports

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"remessa/pipeline/results"
)

// TestWriteFromFileMatchesWrite: the streamed reports of a results.json are
// the reports of the same results held in memory.
func TestWriteFromFileMatchesWrite(t *testing.T) {
	for _, r := range []*results.Results{carnetFixture(), cobvFixture(), boletoFixture()} {
		base := t.TempDir()
		src := filepath.Join(base, "results.json")
		if err := writeAtomic(src, func(w io.Writer) error { return WriteJSON(w, r) }); err != nil {
			t.Fatal(err)
		}
		mem, file := filepath.Join(base, "mem"), filepath.Join(base, "file")
		a, err := Write(mem, r, Options{Now: fixedNow})
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := WriteFromFile(file, src, Options{Now: fixedNow})
		if err != nil {
			t.Fatal(err)
		}
		if len(a) != len(b) {
			t.Fatalf("%s: %v vs %v", r.Run.Kind, a, b)
		}
		for i := range a {
			name := filepath.Base(a[i])
			if filepath.Base(b[i]) != name {
				t.Errorf("file %d: %s vs %s", i, name, b[i])
				continue
			}
			if strings.HasSuffix(name, ".xlsx") {
				continue // zip timestamps differ; the XLSX tests read it back
			}
			x, _ := os.ReadFile(a[i])
			y, _ := os.ReadFile(b[i])
			if !bytes.Equal(x, y) {
				t.Errorf("%s %s differs between Write and WriteFromFile", r.Run.Kind, name)
			}
		}
		// results.json written again is the same bytes as the source
		x, _ := os.ReadFile(src)
		y, _ := os.ReadFile(filepath.Join(file, FileJSON))
		if !bytes.Equal(x, y) {
			t.Errorf("%s: results.json not reproduced byte for byte", r.Run.Kind)
		}
		if st, err := os.Stat(filepath.Join(file, FileJSON)); err != nil || st.Mode().Perm() != 0o644 {
			t.Errorf("results.json mode %v %v, want 0644", st.Mode(), err)
		}
	}
}

func TestWriteFromFileOddLayouts(t *testing.T) {
	dir := t.TempDir()
	// rows before run: decoded whole instead
	odd := `{"rows":[{"index":0,"source_row":2,"key":"k","payer_name":"Ana","payer_document":"01234567890","outcome":"issued","amount_cents":150,"due_date":"2026-04-01"}],
	"version":1,"run":{"id":"x","job_name":"j","kind":"boletos","service":"embedded","complete":true},
	"totals":{"in":{"rows":1,"amount_cents":150},"issued":{"rows":1,"amount_cents":150},"issued_by_due_month":{"2026-04":150}},"extra":{"a":[1,2]}}`
	p := filepath.Join(dir, "odd.json")
	os.WriteFile(p, []byte(odd), 0o644)
	files, _, err := WriteFromFile(filepath.Join(dir, "out"), p, Options{Formats: []string{FormatCSV}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "out", FileLinesCSV))
	if !strings.Contains(string(b), "1,50") || len(files) != 3 {
		t.Errorf("odd layout: %v\n%s", files, b)
	}
	// an unknown member and no rows at all
	os.WriteFile(p, []byte(`{"version":1,"run":{"id":"x","kind":"cobv","service":"production"},"extra":true,"totals":{"in":{"rows":0,"amount_cents":0}}}`), 0o644)
	if _, _, err := WriteFromFile(filepath.Join(dir, "out2"), p, Options{}); err != nil {
		t.Fatal(err)
	}
	h, _ := os.ReadFile(filepath.Join(dir, "out2", FileHTML))
	if !strings.Contains(string(h), "PRODUÇÃO") || !strings.Contains(string(h), `data-rows-in="0"`) {
		t.Error("empty run page")
	}
	// a wrong version and broken JSON are errors naming the file
	os.WriteFile(p, []byte(`{"version":7,"run":{},"rows":[]}`), 0o644)
	if _, _, err := WriteFromFile(filepath.Join(dir, "out3"), p, Options{}); err == nil || !strings.Contains(err.Error(), "version 7") {
		t.Errorf("version: %v", err)
	}
	os.WriteFile(p, []byte(`{"version":1,"run":{},"rows":[{"index":"x"}]}`), 0o644)
	if _, _, err := WriteFromFile(filepath.Join(dir, "out4"), p, Options{}); err == nil || !strings.Contains(err.Error(), "odd.json") {
		t.Errorf("broken row: %v", err)
	}
	// nothing half-written is left behind
	left, _ := filepath.Glob(filepath.Join(dir, "out4", "*"))
	hidden, _ := filepath.Glob(filepath.Join(dir, "out4", ".*"))
	if len(left)+len(hidden) != 0 {
		t.Errorf("files left after a failure: %v %v", left, hidden)
	}
	if _, _, err := WriteFromFile(dir, filepath.Join(dir, "missing.json"), Options{}); err == nil {
		t.Error("missing file: no error")
	}
}
