package cluster_test

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes a child process get SIGKILL when the test binary
// dies (a test that times out leaves no worker or sandbox behind).
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
