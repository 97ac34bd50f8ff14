package faults

import (
	"context"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// sleep waits d or until ctx is done. It waits on a timerfd, which the
// runtime's poller wakes on the nanosecond: Go's own timers wake an idle
// process in whole milliseconds (epoll_wait), which made an injected 50 ms
// latency last 51.5 ms on average. The timer is armed at an absolute time
// taken before anything else, so the setting up is part of d, and the
// timerfds are kept for the next delayed request (creating one and
// registering it with the poller, then closing it, is five system calls
// and some 50 µs of CPU per request).
func sleep(ctx context.Context, d time.Duration) error {
	var now unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &now); err != nil {
		return timerSleep(ctx, d)
	}
	start := time.Now()
	t, err := getTimerfd()
	if err != nil {
		return timerSleep(ctx, d)
	}
	at := unix.NsecToTimespec(unix.TimespecToNsec(now) + int64(d))
	if err := unix.TimerfdSettime(t.fd, unix.TFD_TIMER_ABSTIME, &unix.ItimerSpec{Value: at}, nil); err != nil {
		t.f.Close()
		return timerSleep(ctx, d)
	}
	stop := context.AfterFunc(ctx, func() { t.f.SetReadDeadline(time.Now()) })
	var n [8]byte // expirations count
	_, err = t.f.Read(n[:])
	if stop() && err == nil {
		// fired and read, no deadline set: disarmed and empty, as new
		timerfds.Put(t)
	} else {
		// cut short: maybe still armed, or a deadline set
		t.f.Close()
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return timerSleep(ctx, d-time.Since(start)) // only what is left
	}
	return nil
}

// timerfd is a non-blocking timerfd and its file (registered with the
// runtime's poller). Its descriptor is kept apart: (*os.File).Fd would
// make the file blocking.
type timerfd struct {
	f  *os.File
	fd int
}

// timerfds holds disarmed timerfds whose last expiration was read.
var timerfds sync.Pool // *timerfd

func getTimerfd() (*timerfd, error) {
	if t, ok := timerfds.Get().(*timerfd); ok {
		return t, nil
	}
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return &timerfd{f: os.NewFile(uintptr(fd), "timerfd"), fd: fd}, nil
}
