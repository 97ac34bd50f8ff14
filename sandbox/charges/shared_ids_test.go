package charges

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"remessa/internal/pgtest"
)

// TestSharedStoreIDBlocksUnderLoad creates carnets and slips from eight
// goroutines at once on a sandbox over PostgreSQL (a shared store: ids come in
// blocks reserved by a transaction of their own) past many block ends. A
// creation that held the id allocator's lock inside its write transaction
// while another goroutine reserved a block behind it deadlocked here: the 21st
// carnet never answered.
func TestSharedStoreIDBlocksUnderLoad(t *testing.T) {
	e := newEnv(t, pgtest.DSN(t))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const workers, each = 8, 8
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	ids := make(chan int64, workers*each*13)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				cn, err := e.c.CreateCarnet(ctx, newCarnetReq("2027-02-01", 12, int64(1000+w*100+i)))
				if err != nil {
					errs <- fmt.Errorf("worker %d carnet %d: %w", w, i, err)
					return
				}
				ids <- -int64(cn.CarnetID)
				for _, p := range cn.Charges {
					ids <- int64(p.ChargeID)
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	close(ids)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for id := range ids {
		if seen[id] {
			t.Fatalf("id %d handed out twice", id)
		}
		seen[id] = true
	}
	if want := workers * each * 13; len(seen) != want {
		t.Fatalf("%d distinct ids, want %d (carnets and their 12 parcels)", len(seen), want)
	}
}
