//go:build !linux

package procgroup

import (
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// No parent-death signal and no shim outside Linux: a crashed server's
// children run on until a sweep at the next start on the same machine.
func start(cmd *exec.Cmd, _ bool) error { return spawn(cmd) }

func bootID() string { return "" }

// procStart asks ps for the process's start time (to the second).
func procStart(pid int) (string, bool, error) {
	out, err := exec.Command("ps", "-o", "lstart=", "-p", strconv.Itoa(pid)).Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return "", false, nil // ps exits 1 when there is no such process
	}
	if err != nil {
		return "", false, err
	}
	s := strings.TrimSpace(string(out))
	return s, s != "", nil
}

func procSid(int) int { return 0 }

func groupAlive(pgid int) (bool, error) {
	err := syscall.Kill(-pgid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return false, nil
	}
	return true, nil
}

// groupIsOurs: the leader still runs with the start time recorded, or it
// is gone and its group still exists (a process id cannot be used again
// while a group of that id exists, so the group is the one recorded unless
// it emptied and a new one took the id, which needs a new leader of that
// id, whose start time would differ).
func groupIsOurs(r *record) (bool, error) {
	alive, _ := groupAlive(r.pgid())
	if !alive {
		return false, nil
	}
	start, ok, err := procStart(r.pgid())
	if err != nil {
		return false, err
	}
	if ok {
		return start == r.Leader.Start, nil
	}
	return true, nil
}
