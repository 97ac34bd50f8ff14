package retorno

import (
	"context"
	"errors"
	"strconv"
	"testing"
)

// TestPipelined: every entry reaches consume once, in produce's order
// (more than a few batches, the last one short); consume's error stops
// produce and is returned; produce's error is returned after what it
// produced before it was consumed.
func TestPipelined(t *testing.T) {
	const n = 5*batchEntries + 17
	produce := func(stopAt int, err error) func(context.Context, func(*Entry) error) error {
		return func(ctx context.Context, fn func(*Entry) error) error {
			for i := range n {
				if i == stopAt {
					return err
				}
				if err := fn(&Entry{Key: strconv.Itoa(i), Row: i}); err != nil {
					return err
				}
			}
			return nil
		}
	}
	var got []int
	if err := pipelined(context.Background(), produce(-1, nil), func(e *Entry) error {
		if e.Key != strconv.Itoa(e.Row) {
			t.Fatalf("entry %d carries key %q", e.Row, e.Key)
		}
		got = append(got, e.Row)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d entries consumed, want %d", len(got), n)
	}
	for i, r := range got {
		if r != i {
			t.Fatalf("entry %d came as %d", r, i)
		}
	}
	stop := errors.New("stop")
	seen := 0
	err := pipelined(context.Background(), produce(-1, nil), func(e *Entry) error {
		seen++
		if e.Row == 700 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || seen != 701 {
		t.Fatalf("consume's error: %v after %d entries, want stop after 701", err, seen)
	}
	bad := errors.New("ledger")
	seen = 0
	err = pipelined(context.Background(), produce(1234, bad), func(*Entry) error { seen++; return nil })
	if !errors.Is(err, bad) || seen > 1234 {
		t.Fatalf("produce's error: %v after %d entries", err, seen)
	}
}
