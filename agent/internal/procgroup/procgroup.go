// Package procgroup starts the subprocesses of agent runtimes (exec
// commands, stdio MCP servers) so that none, nor anything they start,
// outlives the pactum process that started it, and so that what a crash
// leaves behind anyway is killed at the next start on the same machine.
//
// Four things together:
//
//   - Each child leads its own process group, started from one OS thread
//     that lives as long as the process (a goroutine locked to its thread
//     that never exits). On Linux the child gets a parent-death signal:
//     the kernel sends it when the thread that forked the child ends,
//     which with that thread means when the process ends, however it ends
//     (kill -9 included). Any other thread could be retired by the Go
//     runtime while the process lives (a goroutine that exits while
//     locked to its thread takes the thread with it), killing the child
//     early; see go.dev/issue/27505.
//   - A parent-death signal reaches the direct child only, not what it
//     started. So on Linux the group's leader is a shim: pactum's own
//     executable started again (/proc/self/exe) with a private
//     environment variable, PACTUM_PROCGROUP_SHIM, which this package's
//     init recognizes before main runs. The shim starts the command as
//     its child in the same group, with the same standard input, output
//     and error (the files themselves, nothing copied) and the same
//     environment (less its variable), and exits as the command exits:
//     with its exit code, or killed by the same signal. Its parent-death
//     signal is SIGUSR2, which it catches: when pactum is gone it sends
//     SIGKILL to the whole group. Signals sent to the group (the SIGTERM
//     of a cancel) reach the command as a member of the group; the shim
//     survives them and follows the command's exit. A binary that uses
//     this package therefore has the shim in it; it must be a Go program
//     of its own (not a library loaded into another program), and a
//     probe at the first start checks that it is, falling back to
//     starting commands directly otherwise.
//   - Each running group is recorded in a directory on the machine (Dir),
//     one file per group, naming the group and the pactum process that
//     owns it, each with its start time so that a reused process id is
//     never mistaken for it. The owner removes the file once the group is
//     gone.
//   - Dir.Sweep kills (SIGKILL to the group) every recorded group whose
//     owner is no longer running and waits until it is gone. Runtimes sweep
//     when they are constructed, so a node sweeps before it claims any
//     work. Where there is no parent-death signal (systems other than
//     Linux) the sweep is what ends a crashed server's children; on Linux
//     it is a second line, for a shim that was itself killed (what the
//     command started then outlives it) and for what runs on for up to
//     kill_grace after its command exited.
package procgroup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// goneWait bounds how long killing a group waits for its processes to be
// gone. SIGKILL cannot be caught; only a process stuck in the kernel (an
// unreachable network file system, say) takes longer.
const goneWait = 10 * time.Second

// spawnReq is one Start handed to the spawner thread.
type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

var (
	spawnOnce sync.Once
	spawnCh   chan spawnReq
)

// spawner starts every child from one goroutine locked to its OS thread
// for good: that thread is the children's parent as far as the kernel's
// parent-death signal is concerned, and it lives as long as the process.
func spawner() {
	runtime.LockOSThread()
	// Never unlocked and never returns: a locked goroutine that exits
	// takes its thread with it, and the parent-death signal of every child
	// it started would fire.
	for req := range spawnCh {
		req.done <- req.cmd.Start()
	}
}

// Start starts cmd in a new process group, from the spawner thread. On
// Linux the group's leader is the shim (see the package doc), which runs
// the command as its child and passes its exit on: cmd.Process is the
// shim, its exit status the command's, and a command that cannot be
// started is reported by Start as os/exec reports it. Where the shim
// cannot be used (no /proc, or an executable that is not a Go program
// with this package in it, which a probe at the first start finds out)
// the command leads the group itself with SIGKILL as its parent-death
// signal. Elsewhere the command leads the
// group. Start keeps any other SysProcAttr fields cmd has; on Linux they
// apply to the shim, and the command inherits what a child inherits.
func Start(cmd *exec.Cmd) error { return startGroup(cmd, true) }

// startGroup is Start, through the shim only if shim is true.
func startGroup(cmd *exec.Cmd, shim bool) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0
	return start(cmd, shim)
}

// spawn starts cmd from the spawner thread.
func spawn(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnCh = make(chan spawnReq)
		go spawner()
	})
	req := spawnReq{cmd: cmd, done: make(chan error, 1)}
	spawnCh <- req
	return <-req.done
}

// Signal signals the process group pgid. A group that is gone is
// os.ErrProcessDone.
func Signal(pgid int, sig syscall.Signal) error {
	if pgid <= 0 {
		return fmt.Errorf("procgroup: invalid process group %d", pgid)
	}
	err := syscall.Kill(-pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// Kill sends SIGKILL to the group and waits, up to a bound, until no
// process of it is left running (zombies whose parent does not reap them
// count as gone: they run nothing). ctx ends the wait early.
func Kill(ctx context.Context, pgid int) error {
	if err := Signal(pgid, syscall.SIGKILL); errors.Is(err, os.ErrProcessDone) {
		return nil
	} else if err != nil {
		return fmt.Errorf("procgroup: kill group %d: %w", pgid, err)
	}
	return waitGone(ctx, pgid)
}

func waitGone(ctx context.Context, pgid int) error {
	deadline := time.Now().Add(goneWait)
	delay := time.Millisecond
	for {
		alive, err := groupAlive(pgid)
		if err != nil {
			return err
		}
		if !alive {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("procgroup: process group %d still running %s after SIGKILL", pgid, goneWait)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("procgroup: wait for process group %d: %w", pgid, ctx.Err())
		case <-t.C:
		}
		delay = min(delay*2, 50*time.Millisecond)
	}
}

// Label says what a group runs, for the record and the logs of a sweep.
type Label struct {
	Kind    string // "exec" or "mcp"
	Agent   string // the runtime's command, or the agent's name when known
	TaskID  string // exec attempts only
	Attempt int    // exec attempts only
}

// Dir is the directory of records of running groups on this machine.
type Dir struct {
	path string
}

// DefaultPath is the record directory used when none is configured:
// pactum/procs under the user's cache directory, or pactum-UID/procs
// under the temporary directory when there is no cache directory.
func DefaultPath() string {
	if d, err := os.UserCacheDir(); err == nil && filepath.IsAbs(d) {
		return filepath.Join(d, "pactum", "procs")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("pactum-%d", os.Getuid()), "procs")
}

// Open opens (creating it, mode 0700) the record directory at path, or at
// DefaultPath when path is "". The directory must belong to the current
// user and be writable by nobody else: a record names a process group to
// kill.
func Open(path string) (*Dir, error) {
	if path == "" {
		path = DefaultPath()
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, err
	}
	fi, err := os.Lstat(abs)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", abs)
	}
	if err := checkOwner(abs, fi); err != nil {
		return nil, err
	}
	return &Dir{path: abs}, nil
}

// Path is the directory's absolute path.
func (d *Dir) Path() string { return d.path }

// ErrRecord is returned by Dir.Start when the group started but could not
// be recorded (and was killed).
var ErrRecord = errors.New("procgroup: cannot record process group")

// Group is a started process group and its record.
type Group struct {
	// Pgid is the group's id, the process id of its leader.
	Pgid int
	file string // "" when no record could be written
}

// Start starts cmd as Start does and records its group before returning.
// When the record cannot be written the group is killed and the error
// returned: a group pactum could not find again after a crash must not
// run.
func (d *Dir) Start(cmd *exec.Cmd, l Label) (*Group, error) {
	if err := Start(cmd); err != nil {
		return nil, err
	}
	pid := cmd.Process.Pid
	g := &Group{Pgid: pid}
	rec, err := newRecord(pid, l)
	if err == nil {
		g.file = filepath.Join(d.path, fmt.Sprintf("%d-%d.json", rec.Owner.PID, pid))
		err = writeFileAtomic(g.file, rec.encode())
	}
	if err != nil {
		_ = Signal(pid, syscall.SIGKILL)
		_ = cmd.Wait()
		return nil, fmt.Errorf("%w %d in %s: %w", ErrRecord, pid, d.path, err)
	}
	return g, nil
}

// Done kills what is left of the group, waits until it is gone and removes
// its record. Call it once the leader has been waited for.
func (g *Group) Done(ctx context.Context) error {
	if err := Kill(ctx, g.Pgid); err != nil {
		return err // the record stays: the next sweep finishes the job
	}
	if g.file != "" {
		if err := os.Remove(g.file); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Sweep kills every recorded group whose owner is no longer running, waits
// until each is gone and removes its record. Records of running owners
// (this process included) are left alone, as are groups whose process ids
// now belong to someone else. It returns how many groups it killed.
func (d *Dir) Sweep(ctx context.Context, log *slog.Logger) (int, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	entries, err := os.ReadDir(d.path)
	if err != nil {
		return 0, err
	}
	killed := 0
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasSuffix(name, ".json") {
			continue
		}
		file := filepath.Join(d.path, name)
		b, err := readBounded(file)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed by its owner or another sweep meanwhile
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rec, err := parseRecord(b)
		if err != nil {
			log.Warn("procgroup: removing an unreadable record", "file", file, "err", err)
			_ = os.Remove(file)
			continue
		}
		if ownerRunning(rec) {
			continue
		}
		if ours, err := groupIsOurs(rec); err != nil {
			errs = append(errs, err)
			continue
		} else if ours {
			log.Warn("procgroup: killing a process group left by a pactum process that is gone",
				"pgid", rec.pgid(), "kind", rec.Kind, "agent", rec.Agent, "task", rec.TaskID, "attempt", rec.Attempt, "owner_pid", rec.Owner.PID)
			if err := Kill(ctx, rec.pgid()); err != nil {
				errs = append(errs, err)
				continue
			}
			killed++
		}
		if err := os.Remove(file); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return killed, errors.Join(errs...)
}

// maxRecordBytes bounds what a sweep reads of one record.
const maxRecordBytes = 4096

func readBounded(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, maxRecordBytes+1)
	n, err := f.Read(b)
	if err != nil && n == 0 {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	return b[:n], nil
}

// writeFileAtomic writes b to a temporary file and renames it into place,
// so that a sweep never reads half a record.
func writeFileAtomic(file string, b []byte) error {
	tmp := file + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, file); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}
