//go:build unix

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// dirLock is an exclusive advisory lock on DataDir/sandbox.lock, so two
// sandboxes never serve the same data dir (each would keep its own
// in-memory state).
type dirLock struct{ f *os.File }

func lockDir(dir string) (*dirLock, error) {
	p := filepath.Join(dir, "sandbox.lock")
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sandbox: open lock %s: %w", p, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s", ErrBusy, dir)
		}
		return nil, fmt.Errorf("sandbox: lock %s: %w", p, err)
	}
	return &dirLock{f: f}, nil
}

func (l *dirLock) unlock() {
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	_ = l.f.Close()
}
