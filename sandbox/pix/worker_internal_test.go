package pix

import (
	"context"
	"errors"
	"testing"

	"remessa/sandbox/clock"
)

// A task that panics (here a batch holding a nil item, which no request
// can build) is reported as errTaskPanicked instead of taking the sandbox
// down with it.
func TestTaskPanicIsContained(t *testing.T) {
	m := &Module{clk: clock.Real{}, accts: map[string]*acct{}, queued: map[task]bool{}}
	a := newAcct()
	a.lotes["1"] = &lote{ID: "1", Items: []*loteItem{nil}}
	m.accts["acc"] = a
	if err := m.process(context.Background(), task{kind: taskLote, account: "acc", id: "1"}); !errors.Is(err, errTaskPanicked) {
		t.Fatalf("process = %v, want errTaskPanicked", err)
	}
	if err := m.process(context.Background(), task{kind: taskLote, account: "acc", id: "2"}); err != nil {
		t.Fatalf("a missing batch: %v", err)
	}
}
