package run

import (
	"context"
	"path/filepath"
	"strings"

	"remessa/pipeline/journal"
	"remessa/pipeline/results"
)

// NoteResults records a run's results in its folder's runs index, as the
// run does when it writes results.json (for the index benchmark).
func NoteResults(dir string, res *results.Results) {
	var denied []int64
	for _, row := range res.Rows {
		if row.Outcome == results.Denied {
			denied = append(denied, keyHash(row.Key+"|"+row.DueDate))
		}
	}
	noteResults(dir, res.Run.Complete, denied)
}

// SetPostUnitRows makes the units of carnet and slip runs n rows long
// until the returned restore is called.
func SetPostUnitRows(n int) (restore func()) {
	old := postUnitRows
	postUnitRows = n
	return func() { postUnitRows = old }
}

// ResumeByUnits resumes the run in dir doing its units of work one at a
// time, last first, each by an executor of its own that knows nothing of
// the run but its unit and the journal (as workers on other machines
// would).
func ResumeByUnits(ctx context.Context, dir string, opts Options) (*Outcome, error) {
	j, err := journal.Open(filepath.Join(dir, journal.FileName))
	if err != nil {
		return nil, err
	}
	defer j.Close()
	return executeWith(ctx, j, dir, opts, nil, func(e *executor, ctx context.Context) {
		units, err := workUnits(ctx, e.j, e.m.Kind)
		if err != nil {
			e.halt(&StopError{Reason: "unidades", Err: err})
			return
		}
		for i := len(units) - 1; i >= 0; i-- {
			u := e.forUnit(&units[i])
			u.drive(ctx)
			if se := u.stop.Load(); se != nil {
				e.halt(se)
				return
			}
		}
	})
}

// WorkUnits is how many units of work the run in dir has.
func WorkUnits(ctx context.Context, dir string) (int, error) {
	j, err := journal.Open(filepath.Join(dir, journal.FileName))
	if err != nil {
		return 0, err
	}
	defer j.Close()
	m, err := j.Meta(ctx)
	if err != nil {
		return 0, err
	}
	kind := results.Carnets
	if strings.Contains(m["meta"], `"kind":"cobv"`) {
		kind = results.Cobv
	}
	us, err := workUnits(ctx, j, kind)
	return len(us), err
}
