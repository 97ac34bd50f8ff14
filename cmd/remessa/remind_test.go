package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRemindUsage: remessa remind on something that is not a folder of
// runs says so (exit 2); on a folder without a régua it says there is
// none and sends nothing.
func TestRemindUsage(t *testing.T) {
	if code, _, errs := runCLI("remind", filepath.Join(t.TempDir(), "nada")); code != exitUsage || !strings.Contains(errs, "não é uma pasta de execuções") {
		t.Errorf("a missing folder: exit %d, %q", code, errs)
	}
	if code, _, _ := runCLI("remind"); code != exitUsage {
		t.Errorf("no folder: exit %d, want %d", code, exitUsage)
	}
	if code, _, _ := runCLI("remind", t.TempDir(), "--format", "xml"); code != exitUsage {
		t.Errorf("--format xml: exit %d, want %d", code, exitUsage)
	}
	code, out, _ := runCLI("remind", t.TempDir(), "--dry-run")
	if code != exitOK || !strings.Contains(out, "Nenhuma execução") {
		t.Errorf("an empty folder: exit %d, %q", code, out)
	}
}
