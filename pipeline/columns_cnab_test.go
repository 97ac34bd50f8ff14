package pipeline

import (
	"os"
	"path/filepath"
	"testing"

	"remessa/formats"
	"remessa/internal/cnabtest"
)

// TestMatchColumnsCNAB: a CNAB 240 remessa has no columns to match; each
// field's Column is where it is in the first title that reads (the first
// one, refused whole for its due date, is passed over: the second title's
// P segment is line 5, its Q line 6), and nothing required is missing.
func TestMatchColumnsCNAB(t *testing.T) {
	bad := cnabtest.OkTitle("A1", 15000)
	bad.RawDueFix = "31022027"
	dir := t.TempDir()
	rem := cnabtest.File240(7, []cnabtest.Title240{bad, cnabtest.OkTitle("B2", 9990)}, "\r\n")
	if err := os.WriteFile(filepath.Join(dir, "COB.REM"), []byte(rem), 0o644); err != nil {
		t.Fatal(err)
	}
	jp := filepath.Join(dir, "job.yaml")
	if err := os.WriteFile(jp, []byte("version: 1\ninput: {file: COB.REM}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := Load(jp, testOpts(nil))
	if err != nil {
		t.Fatal(err)
	}
	cm, err := MatchColumns(j)
	if err != nil {
		t.Fatal(err)
	}
	if cm.Format != "cnab240" || cm.Layout != "febraban240-remessa" || len(cm.Missing) != 0 {
		t.Fatalf("format %q layout %q missing %v", cm.Format, cm.Layout, cm.Missing)
	}
	// FEBRABAN 240: P 63–77 número do documento, P 78–85 vencimento, P
	// 86–100 valor; Q 34–73 nome, Q 18–33 tipo e número de inscrição
	want := map[string]string{formats.CNABKey: "5:63-77", formats.CNABDue: "5:78-85", formats.CNABValue: "5:86-100",
		formats.CNABName: "6:34-73", formats.CNABDocument: "6:18-33", formats.CNABDiscount1: ""}
	byHeader := map[string]HeaderMatch{}
	for _, h := range cm.Headers {
		byHeader[h.Header] = h
	}
	for h, col := range want {
		if got, ok := byHeader[h]; !ok || got.Column != col {
			t.Errorf("%s: column %q (found %v), want %q", h, got.Column, ok, col)
		}
	}
	if f := byHeader[formats.CNABKey].Field; f != FKey {
		t.Errorf("Código serves %q, want %q", f, FKey)
	}
}
