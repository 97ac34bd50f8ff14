package remind

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"remessa/pipeline"
	"remessa/pipeline/journal"
	"remessa/pipeline/run"
)

// RunResult is one run of a RunsDir pass: its report, or why it could
// not be reminded.
type RunResult struct {
	Dir    string  `json:"dir"`
	Report *Report `json:"report,omitempty"`
	Err    string  `json:"error,omitempty"`
}

// RunFolders lists the run folders of runsDir (itself when it is one), in
// name order.
func RunFolders(runsDir string) ([]string, error) {
	if isRun(runsDir) {
		return []string{runsDir}, nil
	}
	ents, err := os.ReadDir(runsDir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if d := filepath.Join(runsDir, e.Name()); e.IsDir() && isRun(d) {
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out, nil
}

func isRun(dir string) bool {
	return exists(filepath.Join(dir, journal.FileName)) && exists(filepath.Join(dir, "results.json"))
}

// JobReminders is the régua of the run in dir: the reminders: section of
// the job file it was made from, read again now (so a régua edited after
// the run applies from the next pass). nil without one.
func JobReminders(ctx context.Context, dir string, getenv func(string) (string, bool)) (*pipeline.Reminders, error) {
	m, err := run.ReadMeta(ctx, dir)
	if err != nil {
		return nil, err
	}
	job, err := pipeline.Load(m.JobFile, pipeline.LoadOptions{Getenv: getenv})
	if err != nil {
		var je *pipeline.JobError
		if errors.As(err, &je) {
			return nil, fmt.Errorf("o arquivo de job da execução não pôde ser lido:\n%s", je.Localized("pt"))
		}
		return nil, fmt.Errorf("o arquivo de job da execução %s: %w", m.JobFile, err)
	}
	return job.Reminders, nil
}

// RunsDir runs one pass over every run folder of runsDir with the régua of
// its job file; a run without one is passed over. A run that fails does
// not stop the others.
func RunsDir(ctx context.Context, runsDir string, o Options) ([]RunResult, error) {
	dirs, err := RunFolders(runsDir)
	if err != nil {
		return nil, err
	}
	var out []RunResult
	for _, d := range dirs {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		r, err := JobReminders(ctx, d, o.Run.Getenv)
		if err != nil {
			out = append(out, RunResult{Dir: d, Err: err.Error()})
			continue
		}
		if r == nil {
			continue
		}
		rep, err := Pass(ctx, d, r, o)
		rr := RunResult{Dir: d, Report: rep}
		if err != nil {
			rr.Err = err.Error()
		}
		out = append(out, rr)
	}
	return out, nil
}
