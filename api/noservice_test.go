package api_test

import (
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// TestNoServiceImport fails if a package of the client (remessa/api and
// everything under it) depends on the service, remessa/sandbox or a package
// under it, directly or through other packages: the client's tree must build
// and be vendored without the service (the mirror of sandbox's
// TestNoClientImport). Test files are not part of the client and may start
// a sandbox to talk to.
func TestNoServiceImport(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the client's imports: %v", err)
	}
	// One line per package in the import graph of ./... (this directory is
	// remessa/api): its path, then its direct imports.
	cmd := exec.Command(goTool, "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("go list -deps ./...: %v\n%s", err, msg)
	}
	isService := func(p string) bool { return p == "remessa/sandbox" || strings.HasPrefix(p, "remessa/sandbox/") }
	var listed int
	var bad []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		listed++
		if isService(f[0]) {
			bad = append(bad, f[0]+" is in the client's dependencies")
		}
		for _, imp := range f[1:] {
			if isService(imp) {
				bad = append(bad, f[0]+" imports "+imp)
			}
		}
	}
	if listed < 10 || !strings.Contains(string(out), "remessa/api ") {
		t.Fatalf("go list named %d packages, not the client's tree:\n%s", listed, out)
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}
