package outbox

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"remessa/internal/pgtest"
	"remessa/sandbox/clock"
	"remessa/sandbox/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// Two outboxes over one PostgreSQL database (two sandbox instances) run
// their deliveries at the same time: each delivery is posted once.
func TestSharedStoreDeliversOnce(t *testing.T) {
	dsn := pgtest.DSN(t)
	var outs []*Outbox
	for range 2 {
		st, err := store.Open(dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		if !st.Shared() {
			t.Fatal("a PostgreSQL store is not shared")
		}
		outs = append(outs, New(st, clock.NewFake(t0), Options{Parallel: 4}))
	}
	var mu sync.Mutex
	posts := map[string]int{}
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond) // a post in flight while the other instance looks
		mu.Lock()
		posts[r.URL.Path]++
		mu.Unlock()
	}))
	defer rc.Close()
	ctx := context.Background()
	const n = 40
	err := outs[0].st.Tx(ctx, func(tx *store.Tx) error {
		for i := range n {
			if err := outs[i%2].Enqueue(ctx, tx, fmt.Sprintf("%s/d%d", rc.URL, i), []byte("x"), "text/plain"); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, o := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				if _, err := o.RunDue(ctx); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	for i := range n {
		if c := posts[fmt.Sprintf("/d%d", i)]; c != 1 {
			t.Errorf("delivery %d posted %d times", i, c)
		}
	}
	if p, _ := outs[1].Pending(ctx); len(p) != 0 {
		t.Fatalf("%d deliveries still pending", len(p))
	}
	if d, _ := outs[1].Done(ctx); len(d) != n || d[0].State != StateDelivered || d[0].LeaseBy != "" {
		t.Fatalf("done: %d, first %+v", len(d), d[0])
	}
}
