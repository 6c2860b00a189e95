package procgroup

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

var bootIDValue = func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}()

func bootID() string { return bootIDValue }

// stat is what this package reads of /proc/PID/stat.
type stat struct {
	pid, pgrp, session int
	state              byte
	start              uint64 // clock ticks after boot
}

// errBadStat is returned for a /proc/PID/stat this package cannot read.
var errBadStat = errors.New("procgroup: unreadable /proc stat line")

// parseStat reads a line of /proc/PID/stat. The command name, in
// parentheses, may hold spaces and parentheses itself, so the fields are
// counted from the last ')'.
func parseStat(b []byte) (stat, error) {
	var s stat
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 1 || end < open {
		return s, errBadStat
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil || pid <= 0 {
		return s, errBadStat
	}
	// Fields from 3 (state) on; field n is f[n-3].
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return s, errBadStat
	}
	s.pid, s.state = pid, f[0][0]
	if s.pgrp, err = strconv.Atoi(f[2]); err != nil {
		return s, errBadStat
	}
	if s.session, err = strconv.Atoi(f[3]); err != nil {
		return s, errBadStat
	}
	if s.start, err = strconv.ParseUint(f[19], 10, 64); err != nil {
		return s, errBadStat
	}
	return s, nil
}

// readStat reads the stat of pid; ok is false when there is no such
// process.
func readStat(pid int) (s stat, ok bool, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return s, false, nil
	}
	if err != nil {
		return s, false, err
	}
	s, err = parseStat(b)
	if err != nil {
		return s, false, fmt.Errorf("process %d: %w", pid, err)
	}
	return s, true, nil
}

// running reports whether the process executes at all: a zombie (state Z,
// or X while it is being reaped) only waits for its parent to reap it,
// which a container's init may never do.
func (s stat) running() bool { return s.state != 'Z' && s.state != 'X' }

func procStart(pid int) (string, bool, error) {
	s, ok, err := readStat(pid)
	if err != nil || !ok || !s.running() {
		return "", false, err
	}
	return strconv.FormatUint(s.start, 10), true, nil
}

func procSid(pid int) int {
	s, ok, _ := readStat(pid)
	if !ok {
		return 0
	}
	return s.session
}

// scan reads the stat of every process, skipping those that vanish
// meanwhile.
func scan(keep func(stat) bool) ([]stat, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	var out []stat
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		s, ok, err := readStat(pid)
		if err != nil || !ok {
			continue // gone, or a thread in the middle of exiting
		}
		if keep(s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// groupAlive reports whether any process of group pgid still runs.
func groupAlive(pgid int) (bool, error) {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false, nil
	}
	live, err := scan(func(s stat) bool { return s.pgrp == pgid && s.running() })
	return len(live) > 0, err
}

// groupIsOurs reports whether the group r names still runs processes and
// they are the ones r recorded: not a process id or group id now used by
// someone else. With the leader gone (killed by its parent-death signal),
// the group's other members count when they are in the leader's session
// and started after it.
func groupIsOurs(r *record) (bool, error) {
	if b := bootID(); b != "" && r.Boot != b {
		return false, nil
	}
	if err := syscall.Kill(-r.pgid(), 0); errors.Is(err, syscall.ESRCH) {
		return false, nil
	}
	var leaderStart uint64
	if r.Leader.Start != "" {
		v, err := strconv.ParseUint(r.Leader.Start, 10, 64)
		if err != nil {
			return false, fmt.Errorf("%w: leader start %q", ErrBadRecord, r.Leader.Start)
		}
		leaderStart = v
	}
	procs, err := scan(func(s stat) bool { return s.running() && (s.pid == r.pgid() || s.pgrp == r.pgid()) })
	if err != nil {
		return false, err
	}
	ours := false
	for _, s := range procs {
		if s.pid == r.pgid() && strconv.FormatUint(s.start, 10) != r.Leader.Start {
			return false, nil // the id belongs to another process now
		}
		if s.pgrp == r.pgid() && (r.Sid == 0 || s.session == r.Sid) && s.start >= leaderStart {
			ours = true
		}
	}
	return ours, nil
}
