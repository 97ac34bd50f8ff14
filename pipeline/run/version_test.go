package run

import (
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

func TestFormatVersion(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	main := func(v string) debug.Module { return debug.Module{Path: "remessa", Version: v} }
	for _, c := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"go build in a dirty tree", &debug.BuildInfo{Main: main("(devel)"), Settings: vcs("-compiler", "gc",
			"vcs", "git", "vcs.revision", "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d", "vcs.time", "2026-11-24T10:00:00Z", "vcs.modified", "true")},
			Release + " 1a2b3c4d5e6f 2026-11-24T10:00:00Z-dirty"},
		{"go build in a clean tree", &debug.BuildInfo{Main: main("(devel)"), Settings: vcs(
			"vcs.revision", "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d", "vcs.time", "2026-11-24T10:00:00Z", "vcs.modified", "false")},
			Release + " 1a2b3c4d5e6f 2026-11-24T10:00:00Z"},
		{"go 1.24 pseudo-version, dirty", &debug.BuildInfo{Main: main("v0.0.0-20261124100000-1a2b3c4d5e6f+dirty"), Settings: vcs(
			"vcs.revision", "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d", "vcs.time", "2026-11-24T10:00:00Z", "vcs.modified", "true")},
			"v0.0.0-20261124100000-1a2b3c4d5e6f+dirty"},
		{"go 1.24 pseudo-version, clean", &debug.BuildInfo{Main: main("v0.0.0-20261124100000-1a2b3c4d5e6f"), Settings: vcs(
			"vcs.revision", "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d", "vcs.time", "2026-11-24T10:00:00Z", "vcs.modified", "false")},
			"v0.0.0-20261124100000-1a2b3c4d5e6f"},
		{"a tagged module", &debug.BuildInfo{Main: main("v1.4.0")}, "v1.4.0"},
		{"go run, no vcs", &debug.BuildInfo{Main: main("(devel)"), Settings: vcs("-compiler", "gc")}, Release},
		{"no module version", &debug.BuildInfo{Main: main("")}, Release},
		{"a short revision, no time", &debug.BuildInfo{Main: main(""), Settings: vcs("vcs.revision", "abc123", "vcs.modified", "true")},
			Release + " abc123-dirty"},
		{"no build info", nil, Release},
	} {
		if got := FormatVersion(c.bi); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	// the binary (here the test binary) says what it is, never "dev"
	if Version == "" || Version == "dev" || !strings.HasPrefix(Version, BuildVersion()[:1]) {
		t.Errorf("Version = %q", Version)
	}
	// a release a person can quote: vMAJOR.MINOR.PATCH, "-dev" between releases
	if !regexp.MustCompile(`^v\d+\.\d+\.\d+(-dev)?$`).MatchString(Release) {
		t.Errorf("Release = %q, want v1.2.3 or v1.2.3-dev", Release)
	}
}

// The run's first line is in one language: "serviço embutido em …", not
// "serviço embedded em …".
func TestServicePhase(t *testing.T) {
	for svc, want := range map[string]string{
		"embedded":   "serviço embutido em http://127.0.0.1:8080",
		"sandbox":    "serviço sandbox em http://127.0.0.1:8080",
		"production": "serviço de produção em http://127.0.0.1:8080",
	} {
		if got := servicePhase(svc, "http://127.0.0.1:8080"); got != want {
			t.Errorf("%s: %q, want %q", svc, got, want)
		}
	}
}
