// Package crashpoint kills the process at a chosen point, for the tests
// of what survives kill -9: REMESSA_CRASH_AT=phase:n sends SIGKILL to the
// process the n-th time it passes phase. Without the variable At does
// nothing.
package crashpoint

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Env is the variable naming the crash point.
const Env = "REMESSA_CRASH_AT"

var state struct {
	once  sync.Once
	phase string
	n     int64
	seen  atomic.Int64
}

// At kills the process (SIGKILL; exit 137 where there is none) the n-th
// time it is called with the phase REMESSA_CRASH_AT names.
func At(phase string) {
	state.once.Do(func() {
		v := os.Getenv(Env)
		if i := strings.LastIndexByte(v, ':'); i > 0 {
			if n, err := strconv.ParseInt(v[i+1:], 10, 64); err == nil && n > 0 {
				state.phase, state.n = v[:i], n
			}
		}
	})
	if state.n == 0 || phase != state.phase {
		return
	}
	if state.seen.Add(1) == state.n {
		killSelf()
	}
}
