package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"remessa/internal/cnabtest"
)

// TestRetornoCommand: a CNAB 240 remessa of two titles runs on the
// embedded service; `remessa retorno` writes NSA 1 in the input's layout
// with both entries and says the totals check; run again it writes
// nothing; a bad layout and -o over an existing file are usage errors
// with a message.
func TestRetornoCommand(t *testing.T) {
	work := t.TempDir()
	rem := cnabtest.File240(3, []cnabtest.Title240{cnabtest.OkTitle("A1", 15000), cnabtest.OkTitle("B2", 9990)}, "\r\n")
	os.WriteFile(filepath.Join(work, "COB.REM"), []byte(rem), 0o644)
	job := filepath.Join(work, "job.yaml")
	os.WriteFile(job, []byte("version: 1\ninput:\n  file: COB.REM\n"), 0o644)
	runs := filepath.Join(work, "runs")
	if code, _, errs := runCLI("run", job, "--runs-dir", runs, "--quiet"); code != exitOK {
		t.Fatalf("run: %d %s", code, errs)
	}
	dirs, _ := filepath.Glob(filepath.Join(runs, "2*"))
	if len(dirs) != 1 {
		t.Fatalf("run folders: %v", dirs)
	}
	code, out, errs := runCLI("retorno", dirs[0], "--layout", "cnab400")
	if code != exitUsage || !strings.Contains(errs, `leiaute de retorno "cnab400" desconhecido: use cnab240, cnab400-237 ou cnab400-341`) {
		t.Fatalf("a bad layout: %d %q %q", code, out, errs)
	}
	code, out, errs = runCLI("retorno", dirs[0])
	if code != exitOK || !strings.Contains(out, "Retorno NSA 1 (cnab240)") || !strings.Contains(out, "02 entrada confirmada") ||
		!strings.Contains(out, "Totais conferem") {
		t.Fatalf("retorno: %d %q %q", code, out, errs)
	}
	b, err := os.ReadFile(filepath.Join(dirs[0], "retornos", "RETORNO-000001.RET"))
	if err != nil || len(b) != (2+4+2)*242 {
		t.Fatalf("the file: %d bytes, %v", len(b), err)
	}
	code, out, _ = runCLI("retorno", dirs[0], "--no-sync")
	if code != exitOK || !strings.Contains(out, "Nada de novo desde o último retorno") {
		t.Fatalf("again: %d %q", code, out)
	}
	existing := filepath.Join(work, "R.RET")
	os.WriteFile(existing, []byte("x"), 0o644)
	code, _, errs = runCLI("retorno", dirs[0], "--nsa", "1", "-o", existing)
	if code != exitUsage || !strings.Contains(errs, "já existe") {
		t.Fatalf("--nsa over an existing file: %d %q", code, errs)
	}
	code, out, errs = runCLI("retorno", dirs[0], "--nsa", "1", "-o", filepath.Join(work, "R1.RET"))
	if code != exitOK || !strings.Contains(out, "Retorno NSA 1 escrito de novo") {
		t.Fatalf("--nsa 1: %d %q %q", code, out, errs)
	}
	if again, _ := os.ReadFile(filepath.Join(work, "R1.RET")); string(again) != string(b) {
		t.Errorf("retorno 1 written again differs")
	}
}
