package cluster

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// CancelUnits cancels the units of run runID that may still run (a run
// cancelled from `remessa web`): a unit being worked is told to stop
// after its calls in flight (River cancels its context), the others never
// start. Enqueueing the run again (a resume) gives the cancelled units new
// jobs. It returns how many it cancelled.
func CancelUnits(ctx context.Context, c *river.Client[pgx.Tx], runID string) (int, error) {
	params := river.NewJobListParams().Kinds(UnitArgs{}.Kind()).Metadata(string(meta(runID))).
		States(rivertype.JobStateAvailable, rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStateScheduled, rivertype.JobStatePending).
		First(10000)
	n := 0
	for {
		res, err := c.JobList(ctx, params)
		if err != nil {
			return n, fmt.Errorf("fila: %w", err)
		}
		for _, j := range res.Jobs {
			if _, err := c.JobCancel(ctx, j.ID); err != nil {
				return n, fmt.Errorf("fila: %w", err)
			}
			n++
		}
		if len(res.Jobs) < 10000 || res.LastCursor == nil {
			return n, nil
		}
		params = params.After(res.LastCursor)
	}
}
