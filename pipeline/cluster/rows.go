package cluster

import (
	"context"
	"fmt"
)

// ForgetRunRows removes from the runs index the row identities (hashes,
// as given to AddRunRows) of runID's rows the service denied: nothing of
// them was issued, so a later run that sends them again repeats nothing
// (the runs folder's runs.db leaves them out the same way).
func ForgetRunRows(ctx context.Context, d *DB, runID string, hashes []int64) error {
	for len(hashes) > 0 {
		n := min(len(hashes), 10000)
		if _, err := d.Pool.Exec(ctx, `DELETE FROM remessa_run_rows WHERE run_id = $1 AND h = ANY($2)`, runID, hashes[:n]); err != nil {
			return fmt.Errorf("índice das execuções: %w", err)
		}
		hashes = hashes[n:]
	}
	return nil
}
