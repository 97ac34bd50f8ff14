package run

import (
	"runtime/debug"
	"strings"

	"remessa/pipeline"
)

// Version is the remessa version written into results.json and the reports'
// run identity: the build's own (BuildVersion), unless cmd sets another
// (a version stamped with -ldflags).
var Version = BuildVersion()

// Release is the version this source tree is, written here by hand at each
// release (docs/operations.md "Releases"): the release's own ("v0.23.0") in
// the release's commit, the next one with "-dev" after it. It stands where
// Go's build information says only "(devel)" (go run, -buildvcs=false, a
// work tree), so every build has a version a person can quote; a release
// built with -ldflags "-X main.Version=…" reports that instead.
const Release = "v0.23.0-dev"

// BuildVersion is the version of the running binary, from its build
// information (FormatVersion).
func BuildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return FormatVersion(nil)
	}
	return FormatVersion(bi)
}

// FormatVersion says exactly which build bi describes: the main module's
// version (Release when Go knows none: "(devel)" from a work tree), then the VCS revision
// (12 characters) and commit time when the build recorded them, and
// "-dirty" when the tree had uncommitted changes:
// "v0.23.0-dev 1a2b3c4d5e6f 2026-11-24T10:00:00Z-dirty"; a pseudo-version
// that already names them (Go 1.24+ stamps one) is enough on its own. Builds
// without VCS information (go run, go test, -buildvcs=false, a module
// download) give what there is: Release or "v1.4.0".
func FormatVersion(bi *debug.BuildInfo) string {
	v := Release
	if bi == nil {
		return v
	}
	if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	var rev, at string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	rev = rev[:min(len(rev), 12)]
	if rev != "" && strings.Contains(v, rev) {
		// Go 1.24+ stamps a pseudo-version that already names the revision,
		// its time and +dirty: v0.0.0-20261124100000-1a2b3c4d5e6f+dirty
		if dirty && !strings.HasSuffix(v, "+dirty") {
			v += "-dirty"
		}
		return v
	}
	parts := []string{v}
	if rev != "" {
		parts = append(parts, rev)
	}
	if at != "" {
		parts = append(parts, at)
	}
	out := strings.Join(parts, " ")
	if dirty {
		out += "-dirty"
	}
	return out
}

// servicePhase is the run's first line: which service, at which address,
// in Portuguese like every progress line.
func servicePhase(service, baseURL string) string {
	return "serviço " + pipeline.ServiceName(service, "pt") + " em " + baseURL
}
