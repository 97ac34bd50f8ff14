//go:build !linux

package faults

import (
	"context"
	"time"
)

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error { return timerSleep(ctx, d) }
