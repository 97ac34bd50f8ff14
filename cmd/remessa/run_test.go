package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunResumeCommands runs the slip sample on the embedded service, runs
// it again (refused, saying what to do), and resumes the finished run
// (nothing to do, exit 0).
func TestRunResumeCommands(t *testing.T) {
	runs := t.TempDir()
	var out, errb bytes.Buffer
	code := dispatch([]string{"run", "../../samples/boletos/boletos.yaml", "--runs-dir", runs, "--quiet"}, &out, &errb)
	if code != exitOK {
		t.Fatalf("run: exit %d\n%s", code, errb.String())
	}
	dirs, _ := filepath.Glob(filepath.Join(runs, "2*"))
	if len(dirs) != 1 || !strings.Contains(out.String(), dirs[0]) {
		t.Fatalf("run folders %v; stdout %q", dirs, out.String())
	}
	out.Reset()
	errb.Reset()
	code = dispatch([]string{"run", "../../samples/boletos/boletos.yaml", "--runs-dir", runs}, &out, &errb)
	if code != exitUsage || !strings.Contains(errb.String(), "--again") || !strings.Contains(errb.String(), "Nada foi enviado") {
		t.Fatalf("second run: exit %d\n%s", code, errb.String())
	}
	errb.Reset()
	if code := dispatch([]string{"resume", dirs[0], "--quiet"}, &out, &errb); code != exitOK {
		t.Fatalf("resume: exit %d\n%s", code, errb.String())
	}
	if code := dispatch([]string{"resume", runs}, &out, &errb); code != exitUsage {
		t.Fatalf("resume of a folder without a journal: exit %d", code)
	}
	if code := dispatch([]string{"run"}, &out, &errb); code != exitUsage {
		t.Fatalf("run without a job: exit %d", code)
	}
}
