package sandbox_test

import (
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// TestNoClientImport fails if any package of the service (remessa/sandbox
// and everything under it) imports the client, remessa/api or a package
// under it, directly or through other packages. The service and the client
// share only the contract's shapes (remessa/wire); a server built on its
// own client's types cannot catch a field both spell wrong. Test files are
// not part of the service and may drive it through api.Client.
func TestNoClientImport(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the sandbox's imports: %v", err)
	}
	// One line per package in the import graph of ./... (this directory is
	// remessa/sandbox): its path, then its direct imports.
	cmd := exec.Command(goTool, "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("go list -deps ./...: %v\n%s", err, msg)
	}
	isClient := func(p string) bool { return p == "remessa/api" || strings.HasPrefix(p, "remessa/api/") }
	var listed int
	var bad []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		listed++
		if isClient(f[0]) {
			bad = append(bad, f[0]+" is in the sandbox's dependencies")
		}
		for _, imp := range f[1:] {
			if isClient(imp) {
				bad = append(bad, f[0]+" imports "+imp)
			}
		}
	}
	if listed < 10 || !strings.Contains(string(out), "remessa/sandbox/pix ") {
		t.Fatalf("go list named %d packages, not the sandbox's tree:\n%s", listed, out)
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}
