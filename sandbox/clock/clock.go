// Package clock gives the sandbox its notion of "now": the real time, a fake
// time for tests, or the real time shifted by an offset that the control
// routes move forward (so a due date can pass without waiting).
package clock

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Clock tells the current time.
type Clock interface {
	Now() time.Time
}

// Real is the system clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// Fake is a clock that only moves when told; it is safe for concurrent use.
type Fake struct {
	mu sync.Mutex
	t  time.Time
}

// NewFake returns a fake clock stopped at t.
func NewFake(t time.Time) *Fake { return &Fake{t: t} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

// Set moves the clock to t (backwards too).
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	f.t = t
	f.mu.Unlock()
}

// Advance moves the clock forward by d.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
}

// Adjustable is the real time plus an offset. The zero value is the real
// time. It is what "remessa sandbox" uses: the control routes call Advance
// to make time pass for due dates and token expiry.
type Adjustable struct {
	offset atomic.Int64 // nanoseconds
}

// NewAdjustable returns a clock running offset ahead of the real time.
func NewAdjustable(offset time.Duration) *Adjustable {
	a := &Adjustable{}
	a.offset.Store(int64(offset))
	return a
}

// Now returns the real time plus the offset.
func (a *Adjustable) Now() time.Time { return time.Now().Add(time.Duration(a.offset.Load())) }

// Offset returns how far ahead of the real time the clock runs.
func (a *Adjustable) Offset() time.Duration { return time.Duration(a.offset.Load()) }

// SetOffset sets the offset (negative values are allowed but the sandbox
// control routes only move forward).
func (a *Adjustable) SetOffset(d time.Duration) { a.offset.Store(int64(d)) }

// Advance moves the clock forward by d; a negative d is ignored. The
// offset saturates instead of overflowing (which would move the clock
// backwards).
func (a *Adjustable) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	for {
		old := a.offset.Load()
		next := old + int64(d)
		if next < old {
			next = math.MaxInt64
		}
		if a.offset.CompareAndSwap(old, next) {
			return
		}
	}
}
