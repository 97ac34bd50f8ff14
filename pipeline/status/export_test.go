package status

import (
	"context"
	"time"
)

// SetLastSyncForTest records t as the last sync's time, as an older
// ledger that kept this machine's clock would have it.
func SetLastSyncForTest(ctx context.Context, l *Ledger, t time.Time) {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		panic(err)
	}
	defer tx.Rollback()
	if err := l.setMeta(ctx, tx, metaLastSync, stamp(t)); err != nil {
		panic(err)
	}
	l.setMeta(ctx, tx, metaClock, "")
	if err := tx.Commit(); err != nil {
		panic(err)
	}
}
