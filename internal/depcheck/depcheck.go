// Package depcheck lists a tree's import graph with the go command, for the
// tests that keep the service and the client apart (sandbox's
// TestNoClientImport, api's TestNoServiceImport).
package depcheck

import (
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// Forbid fails t for every package of the tree below the test's directory
// (./..., test files excluded) that is, or directly imports, forbidden or a
// package under it, whether the tree reaches it directly or through other
// packages. mustList is a package path the listing has to name (followed by
// a space, as `go list` prints it) for the listing to count as the tree's.
func Forbid(t testing.TB, forbidden, mustList string) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the imports: %v", err)
	}
	// One line per package in the import graph of ./...: its path, then its
	// direct imports.
	cmd := exec.Command(goTool, "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("go list -deps ./...: %v\n%s", err, msg)
	}
	isForbidden := func(p string) bool { return p == forbidden || strings.HasPrefix(p, forbidden+"/") }
	var listed int
	var bad []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		listed++
		if isForbidden(f[0]) {
			bad = append(bad, f[0]+" is in the tree's dependencies")
		}
		for _, imp := range f[1:] {
			if isForbidden(imp) {
				bad = append(bad, f[0]+" imports "+imp)
			}
		}
	}
	if listed < 10 || !strings.Contains(string(out), mustList+" ") {
		t.Fatalf("go list named %d packages, not the tree of %s:\n%s", listed, mustList, out)
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}
