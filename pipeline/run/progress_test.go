package run_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"remessa/pipeline/run"
	"remessa/sandbox"
	"remessa/sandbox/faults"
)

// progressRun runs a 12-carnet job, one at a time with 30 ms per POST (so
// the run lasts long enough for a terminal's status line), writing its
// progress into a buffer.
func progressRun(t *testing.T, opts run.Options) string {
	t.Helper()
	dir := t.TempDir()
	lat := faults.Duration(30 * time.Millisecond)
	rn := startSandbox(t, sandbox.Memory, func(c *sandbox.Config) {
		c.Faults = faults.Config{Routes: map[string]faults.Override{"POST /v1/carnet": {Latency: &lat}}}
	})
	job := writeJob(t, dir, "carnets", payers(12, 17), "service: sandbox")
	var buf bytes.Buffer
	opts.BaseURL, opts.Getenv, opts.Concurrency, opts.Progress = rn.URL, remoteEnv, 1, &buf
	out, err := run.Run(context.Background(), job, opts)
	if err != nil || out.ExitCode() != 0 {
		t.Fatalf("run: %v exit %d", err, out.ExitCode())
	}
	return buf.String()
}

func TestProgressTerminal(t *testing.T) {
	s := progressRun(t, run.Options{Terminal: true})
	// a redrawn status line: rows done of the total, rate, time left
	if !strings.Contains(s, "\r\033[K") || !strings.Contains(s, "/12 (emitidos ") || !strings.Contains(s, "/s · faltam ") {
		t.Fatalf("no redrawn status line:\n%q", s)
	}
	if !strings.Contains(s, "Execução ") || !strings.Contains(s, "emitidas 12") {
		t.Fatalf("no summary:\n%q", s)
	}
}

func TestProgressPlainAndQuiet(t *testing.T) {
	s := progressRun(t, run.Options{})
	if strings.Contains(s, "\r") || strings.Contains(s, "\033[") {
		t.Fatalf("terminal control codes without a terminal:\n%q", s)
	}
	if !strings.Contains(s, "12 linha(s) a emitir") || !strings.Contains(s, "emitidas 12") {
		t.Fatalf("plain lines lack the phases or the summary:\n%s", s)
	}
	q := progressRun(t, run.Options{Quiet: true, Terminal: true})
	lines := strings.Split(strings.TrimSpace(q), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "Execução ") || !strings.Contains(lines[0], "emitidas 12") {
		t.Fatalf("--quiet printed more than the summary:\n%q", q)
	}
}

func TestProgressJSON(t *testing.T) {
	s := progressRun(t, run.Options{LogJSON: true, Terminal: true})
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) < 3 {
		t.Fatalf("want phase lines and a summary, got:\n%s", s)
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %q (%v)", l, err)
		}
		if m["run"] == nil || m["level"] == nil {
			t.Errorf("line without run or level: %q", l)
		}
	}
	var last struct {
		Complete bool `json:"complete"`
		Totals   struct {
			Issued struct {
				Rows int `json:"rows"`
			} `json:"issued"`
		} `json:"totals"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || !last.Complete || last.Totals.Issued.Rows != 12 {
		t.Fatalf("summary line %q: %+v %v", lines[len(lines)-1], last, err)
	}
}
