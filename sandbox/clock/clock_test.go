package clock

import (
	"math"
	"testing"
	"time"
)

func TestFake(t *testing.T) {
	t0 := time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)
	f := NewFake(t0)
	f.Advance(36 * time.Hour)
	if got := f.Now(); !got.Equal(t0.Add(36 * time.Hour)) {
		t.Fatal(got)
	}
	f.Set(t0)
	if !f.Now().Equal(t0) {
		t.Fatal(f.Now())
	}
}

func TestAdjustable(t *testing.T) {
	a := NewAdjustable(0)
	a.Advance(48 * time.Hour)
	a.Advance(-time.Hour) // ignored: only forward
	if a.Offset() != 48*time.Hour {
		t.Fatal(a.Offset())
	}
	before := time.Now().Add(48 * time.Hour)
	got := a.Now()
	after := time.Now().Add(48 * time.Hour)
	if got.Before(before) || got.After(after) {
		t.Fatalf("Now %v not within [%v, %v]", got, before, after)
	}
	a.SetOffset(0)
	if a.Offset() != 0 {
		t.Fatal(a.Offset())
	}
	var _ Clock = Real{}
	var _ Clock = a
	var _ Clock = NewFake(time.Time{})
}

// An offset near the top of int64 saturates instead of wrapping to a
// negative offset (which would move the clock backwards).
func TestAdjustableSaturates(t *testing.T) {
	a := NewAdjustable(time.Duration(math.MaxInt64 - 10))
	a.Advance(time.Hour)
	if a.Offset() != time.Duration(math.MaxInt64) {
		t.Fatalf("offset %v after overflowing, want the maximum", a.Offset())
	}
}
