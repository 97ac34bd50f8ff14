package main

import (
	"bytes"
	"encoding/json"
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
	errb.Reset()
	if code := dispatch([]string{"resume", dirs[0], "--log-format", "xml"}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "--log-format") {
		t.Fatalf("--log-format xml: exit %d\n%s", code, errb.String())
	}
	// --log-format json: stderr is JSON lines only
	errb.Reset()
	if code := dispatch([]string{"run", "../../samples/boletos/boletos.yaml", "--runs-dir", t.TempDir(), "--log-format", "json"}, &out, &errb); code != exitOK {
		t.Fatalf("run --log-format json: exit %d\n%s", code, errb.String())
	}
	for _, l := range strings.Split(strings.TrimSpace(errb.String()), "\n") {
		if !json.Valid([]byte(l)) {
			t.Fatalf("--log-format json wrote a line that is not JSON: %q", l)
		}
	}
}
