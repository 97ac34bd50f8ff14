//go:build unix

package crashpoint

import (
	"errors"
	"os"
	"syscall"
)

func killSelf() {
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// ErrBusy is returned by Lock when another process holds the lock.
var ErrBusy = errors.New("em uso por outro processo")

// Lock takes an exclusive advisory lock on the file at path (created if
// missing) without waiting: ErrBusy when another process holds it. The
// lock goes with the process, kill -9 included.
func Lock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrBusy
		}
		return nil, err
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}
