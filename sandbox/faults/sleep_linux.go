package faults

import (
	"context"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// sleep waits d or until ctx is done. It waits on a timerfd, which the
// runtime's poller wakes on the nanosecond: Go's own timers wake an idle
// process in whole milliseconds (epoll_wait), which made an injected 50 ms
// latency last 51.5 ms on average.
func sleep(ctx context.Context, d time.Duration) error {
	start := time.Now()
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return timerSleep(ctx, d)
	}
	f := os.NewFile(uintptr(fd), "timerfd")
	defer f.Close()
	if err := unix.TimerfdSettime(fd, 0, &unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}, nil); err != nil {
		return timerSleep(ctx, d)
	}
	stop := context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Now()) })
	defer stop()
	var n [8]byte // expirations count
	if _, err := f.Read(n[:]); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return timerSleep(ctx, d-time.Since(start)) // only what is left
	}
	return nil
}
