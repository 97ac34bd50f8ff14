package sandbox

import (
	"os"
	"runtime/pprof"
)

// CPUProfileEnv names a file a started sandbox writes its CPU profile to,
// from Start to Shutdown: the CPU of a separate `remessa sandbox` under a
// benchmark (pipeline/run's RunCobvScale passes its environment on). It
// is ignored when the process already profiles (an embedded sandbox in a
// profiled run).
const CPUProfileEnv = "REMESSA_SANDBOX_CPU_PROFILE"

// startCPUProfile starts the profile CPUProfileEnv names, if any, and
// returns what stops it.
func startCPUProfile() func() {
	path := os.Getenv(CPUProfileEnv)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		os.Remove(path)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
