// Package procstat reads this process's own resource figures from Linux's
// /proc, for the benchmarks that run their work in a child process: the
// child reports its own peak, since getrusage's maxrss of a child also
// counts the pages it shared with its parent until exec.
package procstat

import (
	"fmt"
	"os"
	"strings"
)

// PeakRSS returns this process's peak resident set size (VmHWM) in kB.
func PeakRSS() (int, error) {
	st, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("procstat: %w", err)
	}
	for _, ln := range strings.Split(string(st), "\n") {
		var kb int
		if _, err := fmt.Sscanf(ln, "VmHWM: %d kB", &kb); err == nil {
			return kb, nil
		}
	}
	return 0, fmt.Errorf("procstat: no VmHWM in /proc/self/status")
}
