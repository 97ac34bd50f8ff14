package run

import (
	"context"
	"fmt"
	"path/filepath"

	"remessa/pipeline"
)

// Plan is what `remessa plan` shows: the pipeline's plan of the job, plus
// what the runs folder (runsDir, default the job's reports.dir) knows of it:
// the same job on the same input already ran there (so `remessa run` will
// refuse it without --again), or rows repeat an earlier run's key and due
// date. Nothing is sent and nothing is written.
func Plan(ctx context.Context, jobPath string, job *pipeline.Job, runsDir string) (*pipeline.Plan, error) {
	if runsDir == "" {
		runsDir = job.Reports.Dir
	}
	idx := &Index{Path: filepath.Join(runsDir, IndexFile)}
	indexed := idx.exists()
	b := pipeline.NewPlanBuilder(job)
	ids := newRowIDs()
	s, err := pipeline.ValidateStream(ctx, job, pipeline.Handler{Item: func(it *pipeline.Item) error {
		b.Add(it)
		if indexed {
			ids.add(rowIdentity(it))
		}
		return nil
	}})
	if err != nil {
		return nil, err
	}
	plan := b.Done(jobPath, s)
	if !indexed {
		return plan, nil
	}
	inputSHA, err := fileSHA256(job.InputFile)
	if err != nil {
		return nil, err
	}
	same, w, err := idx.earlier(ctx, earlierQuery{JobSHA256: job.SHA256, InputSHA256: inputSHA, Service: job.Service, IDs: ids,
		Names: func(ords map[int]bool) (map[int]string, error) { return identitiesAt(ctx, job, ords) }})
	if err != nil {
		return nil, err
	}
	if same != nil {
		plan.Earlier = append(plan.Earlier, fmt.Sprintf("este job já rodou com esta mesma planilha na execução %s (%s): \"remessa run\" recusa repeti-lo sem --again", same.RunID, same.Dir))
	} else {
		account, nsa := cnabFile(job)
		if e, err := idx.nsaImported(ctx, account, nsa); err != nil {
			return nil, err
		} else if e != nil {
			plan.Earlier = append(plan.Earlier, (&NSAError{NSA: nsa, Account: account, Earlier: *e}).Error())
		}
		if w != "" {
			plan.Earlier = append(plan.Earlier, w)
		}
	}
	return plan, nil
}
