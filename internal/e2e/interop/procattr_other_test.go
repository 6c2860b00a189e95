//go:build !linux

package interop

import "os/exec"

// configureProcess has nothing to add outside Linux; t.Cleanup stops the
// subprocess.
func configureProcess(*exec.Cmd) {}
