//go:build linux

package interop

import (
	"os/exec"
	"syscall"
)

// configureProcess makes the kernel kill the pactum subprocess if the test
// binary dies without running its cleanups (a panic or a -timeout), so no
// server outlives the test holding its port.
func configureProcess(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
