package pix

import (
	"context"
	"errors"
	"testing"

	"remessa/sandbox/clock"
	"remessa/sandbox/store"
)

// A task that panics (here a batch holding a nil item, which no request
// can build) is reported as errTaskPanicked instead of taking the sandbox
// down with it.
func TestTaskPanicIsContained(t *testing.T) {
	st, err := store.Open(store.Memory)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := &Module{st: st, clk: clock.Real{}, queued: map[task]bool{}}
	m.initCaches()
	if err := st.Tx(context.Background(), func(tx *store.Tx) error {
		return tx.PutRaw(storeLote, "acc", "1", []byte(`{"id":"1","items":[null]}`))
	}); err != nil {
		t.Fatal(err)
	}
	if err := m.process(context.Background(), task{kind: taskLote, account: "acc", id: "1"}); !errors.Is(err, errTaskPanicked) {
		t.Fatalf("process = %v, want errTaskPanicked", err)
	}
	if err := m.process(context.Background(), task{kind: taskLote, account: "acc", id: "2"}); err != nil {
		t.Fatalf("a missing batch: %v", err)
	}
}
