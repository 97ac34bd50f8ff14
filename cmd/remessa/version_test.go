package main

import (
	"strings"
	"testing"

	"remessa/pipeline/run"
)

// remessa version says which build this is (run.BuildVersion), and a
// version stamped with -ldflags -X main.Version wins; the runs it issues
// record the same.
func TestVersionFromBuild(t *testing.T) {
	code, out, _ := runCmd("version")
	if code != 0 || out != "remessa "+run.BuildVersion()+"\n" || out == "remessa dev\n" || strings.Contains(out, "(devel)") {
		t.Fatalf("remessa version: %d %q, want %q", code, out, "remessa "+run.BuildVersion())
	}
	old := Version
	defer func() { Version = old }()
	Version = "v2.0.0"
	if _, out, _ := runCmd("version"); out != "remessa v2.0.0\n" {
		t.Errorf("stamped: %q", out)
	}
	if version() != "v2.0.0" {
		t.Errorf("runs would record %q", version())
	}
}
