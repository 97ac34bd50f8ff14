//go:build unix

package run

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockRun takes an exclusive advisory lock on the run folder, so two
// processes never work on one journal (both would send the same rows).
func lockRun(dir string) (func(), error) {
	p := filepath.Join(dir, "run.lock")
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("trava da execução %s: %w", p, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &UsageError{Msg: fmt.Sprintf("a execução %s já está em andamento em outro processo; espere-o terminar (ou pare-o) antes de retomá-la", dir)}
		}
		return nil, fmt.Errorf("trava da execução %s: %w", p, err)
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}
