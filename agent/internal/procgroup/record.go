package procgroup

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"syscall"
)

// recordVersion is the version of the record format this package writes
// and reads.
const recordVersion = 1

// procID names one process: its id and its start time, in a form of the
// platform's (clock ticks since boot on Linux), so that a process id used
// again by another process is not taken for it.
type procID struct {
	PID   int    `json:"pid"`
	Start string `json:"start"`
}

// record is the file that stands for one running group.
type record struct {
	Version int    `json:"version"`
	Kind    string `json:"kind,omitempty"`
	Agent   string `json:"agent,omitempty"`
	TaskID  string `json:"task,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
	// Boot identifies the boot of the machine (Linux); a record from an
	// earlier boot names nothing that still runs.
	Boot string `json:"boot,omitempty"`
	// Owner is the pactum process that started the group.
	Owner procID `json:"owner"`
	// Leader is the group's first process; its id is the group's id.
	Leader procID `json:"leader"`
	// Sid is the leader's session (0 where unknown).
	Sid int `json:"sid,omitempty"`
}

// pgid is the id of the recorded group.
func (r *record) pgid() int { return r.Leader.PID }

// ErrBadRecord is returned for a record file that cannot be used.
var ErrBadRecord = errors.New("procgroup: bad record")

func newRecord(leader int, l Label) (*record, error) {
	self := os.Getpid()
	ownerStart, ok, err := procStart(self)
	if err != nil || !ok {
		return nil, fmt.Errorf("start time of process %d: %w", self, errors.Join(err, errGone))
	}
	leaderStart, ok, err := procStart(leader)
	if err != nil {
		return nil, fmt.Errorf("start time of process %d: %w", leader, err)
	}
	if !ok {
		// It has exited already: there is nothing left to record but its
		// group, which Group.Done kills. A record still helps if the
		// group outlives this process; an empty start time matches no
		// leader, so a sweep kills members only.
		leaderStart = ""
	}
	return &record{
		Version: recordVersion, Kind: l.Kind, Agent: l.Agent, TaskID: l.TaskID, Attempt: l.Attempt,
		Boot:   bootID(),
		Owner:  procID{PID: self, Start: ownerStart},
		Leader: procID{PID: leader, Start: leaderStart},
		Sid:    procSid(leader),
	}, nil
}

var errGone = errors.New("no such process")

func (r *record) encode() []byte {
	b, err := json.Marshal(r)
	if err != nil {
		panic(err) // a struct of strings and ints always marshals
	}
	return append(b, '\n')
}

// parseRecord decodes and checks a record file.
func parseRecord(b []byte) (*record, error) {
	if len(b) > maxRecordBytes {
		return nil, fmt.Errorf("%w: longer than %d bytes", ErrBadRecord, maxRecordBytes)
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadRecord, err)
	}
	switch {
	case r.Version != recordVersion:
		return nil, fmt.Errorf("%w: version %d, want %d", ErrBadRecord, r.Version, recordVersion)
	case r.Owner.PID <= 0 || r.Owner.Start == "":
		return nil, fmt.Errorf("%w: no owner", ErrBadRecord)
	case r.Leader.PID <= 1:
		// 1 is init: never a group of ours, and kill(-1) would mean every
		// process.
		return nil, fmt.Errorf("%w: invalid process group %d", ErrBadRecord, r.Leader.PID)
	case r.Sid < 0:
		return nil, fmt.Errorf("%w: invalid session %d", ErrBadRecord, r.Sid)
	}
	return &r, nil
}

// ownerRunning reports whether the process that wrote r still runs.
func ownerRunning(r *record) bool {
	if b := bootID(); b != "" && r.Boot != b {
		return false
	}
	start, ok, err := procStart(r.Owner.PID)
	if err != nil {
		// Cannot tell: leave its groups alone rather than kill a live
		// node's work.
		return true
	}
	return ok && start == r.Owner.Start
}

// checkOwner refuses a directory another user could write to.
func checkOwner(path string, fi os.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s belongs to user %d, not to this user (%d)", path, st.Uid, os.Getuid())
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s is writable by other users (mode %s)", path, fi.Mode().Perm())
	}
	return nil
}
