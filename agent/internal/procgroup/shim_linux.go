package procgroup

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// The shim. On Linux a command is not started directly: pactum starts its
// own executable again (/proc/self/exe) as the group's leader, with
// shimEnv set, and that process (the shim) starts the command as its
// child in the same group and passes its exit on. The shim's parent-death
// signal is shimDeathSig, which it catches: when pactum is gone it kills
// the whole group, which a parent-death signal on the command alone could
// not do (it reaches the direct child only).
const (
	// shimEnv marks a process as the shim. Its value is
	// "PPID,NEXTRA": the pid of the pactum process that started it, and
	// how many extra files (fd 3 on) it passes on to the command; the
	// file descriptor after those is the report pipe.
	shimEnv = "PACTUM_PROCGROUP_SHIM"
	// shimArg0 is the shim's argv[0]; argv[1] is the command's path and
	// argv[2:] the command's own argv.
	shimArg0 = "pactum-procgroup-shim"
	// shimProbe as argv[1] asks the shim only to answer on the report
	// pipe: whether /proc/self/exe is a binary with this shim in it.
	shimProbe = "-probe"
	// shimDeathSig is the shim's parent-death signal. It is not one that
	// pactum sends to a group (SIGTERM, SIGKILL), so the shim can tell
	// pactum's end from pactum stopping the command; it checks that its
	// parent is really gone before it acts on it.
	shimDeathSig = syscall.SIGUSR2
	// selfExe is the running executable, even when the file has been
	// replaced or removed since it started.
	selfExe = "/proc/self/exe"
)

// init turns the process into the shim when shimEnv is set; the shim
// never returns from here.
func init() {
	v, ok := os.LookupEnv(shimEnv)
	if !ok {
		return
	}
	os.Exit(runShim(v, os.Args))
}

// shimSignals are the signals the shim catches so that it survives them:
// the ones whose default in a Go program would end it (or make it print a
// stack dump) when they are sent to the group. The command, a member of
// the group, gets them as well and decides; the shim follows its exit.
var shimSignals = []os.Signal{
	syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGILL, syscall.SIGTRAP,
	syscall.SIGABRT, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGSEGV, syscall.SIGPIPE,
	syscall.SIGTERM, syscall.SIGSYS, shimDeathSig,
}

// runShim is the shim: it starts the command, reports on the report pipe
// whether that worked (nothing and EOF when it did), and waits for the
// command's exit, which it returns as its own (dying of the same signal
// when the command was killed by one). It kills its group when pactum is
// gone.
func runShim(v string, args []string) int {
	ppidS, nS, ok := strings.Cut(v, ",")
	ppid, err1 := strconv.Atoi(ppidS)
	nextra, err2 := strconv.Atoi(nS)
	if !ok || err1 != nil || err2 != nil || ppid <= 0 || nextra < 0 || nextra > 1024 || len(args) < 2 {
		fmt.Fprintf(os.Stderr, "%s: bad %s=%q (a private variable of pactum's)\n", shimArg0, shimEnv, v)
		return 127
	}
	if syscall.Getpgrp() != os.Getpid() {
		// Killing its group would kill someone else's: pactum always
		// starts the shim as the leader of a new group.
		fmt.Fprintf(os.Stderr, "%s: not the leader of its process group; %s is a private variable of pactum's\n", shimArg0, shimEnv)
		return 127
	}
	report := os.NewFile(uintptr(3+nextra), "report")
	if report == nil {
		return 127
	}
	syscall.CloseOnExec(3 + nextra)
	if args[1] == shimProbe {
		_, _ = report.WriteString("ok")
		return 0
	}
	if len(args) < 3 {
		_, _ = fmt.Fprintf(report, "Mno command")
		return 127
	}
	// init runs on the main thread, which lives as long as the process:
	// a parent-death signal set here holds (pactum set it too, before
	// exec, but exec drops it for a binary with file capabilities).
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(shimDeathSig), 0)
	sigs := make(chan os.Signal, 16)
	var caught []os.Signal
	for _, s := range shimSignals {
		// One the shim inherited as ignored stays ignored for the
		// command too: catching it here would reset it to the default
		// in the command.
		if !signal.Ignored(s) {
			caught = append(caught, s)
		}
	}
	signal.Notify(sigs, caught...)
	// pactum may have died before the signal was caught (a parent-death
	// signal that arrives before Notify is lost).
	if os.Getppid() != ppid {
		killOwnGroup()
	}

	files := []*os.File{os.Stdin, os.Stdout, os.Stderr}
	for i := range nextra {
		files = append(files, os.NewFile(uintptr(3+i), "extra"))
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, shimEnv+"=") })
	p, err := os.StartProcess(args[1], args[2:], &os.ProcAttr{
		Env:   env,
		Files: files,
		// The command dies with the shim too, should the shim be killed
		// (SIGKILL after kill_grace goes to the leader).
		Sys: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		var errno syscall.Errno
		if errors.As(err, &errno) {
			fmt.Fprintf(report, "E%d", int(errno))
		} else {
			fmt.Fprintf(report, "M%s", err)
		}
		return 127
	}
	_ = report.Close()
	// The shim keeps no copy of the command's files: the end of the
	// command's output is seen when the command (and what it started)
	// closes it, as without a shim.
	if null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0); err == nil {
		for fd := range 3 {
			_ = syscall.Dup3(int(null.Fd()), fd, 0)
		}
		_ = null.Close()
	}
	for _, f := range files[3:] {
		_ = f.Close()
	}

	exited := make(chan *os.ProcessState, 1)
	go func() {
		st, err := p.Wait()
		if err != nil {
			os.Exit(127)
		}
		exited <- st
	}()
	for {
		select {
		case s := <-sigs:
			if s == shimDeathSig && os.Getppid() != ppid {
				killOwnGroup()
			}
			// Anything else went to the command too (a signal to the
			// group) or was meant for the shim alone: the command's exit
			// decides.
		case st := <-exited:
			ws := st.Sys().(syscall.WaitStatus)
			if ws.Signaled() {
				dieOf(ws.Signal())
			}
			return ws.ExitStatus()
		}
	}
}

// killOwnGroup sends SIGKILL to the shim's group, the shim included.
func killOwnGroup() {
	_ = syscall.Kill(-syscall.Getpgrp(), syscall.SIGKILL)
	time.Sleep(time.Second) // SIGKILL is on its way
	os.Exit(128 + int(syscall.SIGKILL))
}

// dieOf ends the process with signal s, so that its parent sees the same
// wait status as for the command. The Go runtime catches most signals
// itself, so the default disposition is restored with a raw sigaction
// first. No core is dumped (RLIMIT_CORE is set to 0): the shim's would
// be of no use. A signal whose default is to be ignored cannot end a
// process; the shim then exits with 128+s, as a shell reports it.
func dieOf(s syscall.Signal) {
	_ = syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
	if s != syscall.SIGKILL && s != syscall.SIGSTOP {
		// A zeroed struct sigaction is SIG_DFL, no flags, an empty mask,
		// whatever the architecture's layout; the buffer is larger than
		// any. The kernel's sigset_t is 8 bytes, 16 on mips.
		var act [16]uint64
		for _, size := range []uintptr{8, 16} {
			_, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(s), uintptr(unsafe.Pointer(&act)), 0, size, 0, 0)
			if e != syscall.EINVAL {
				break
			}
		}
	}
	_ = syscall.Kill(os.Getpid(), s)
	time.Sleep(time.Second)
	os.Exit(128 + int(s))
}

var shimProbed struct {
	sync.Mutex
	known, ok bool
}

// shimWorks reports whether this executable can be the shim: it starts
// it in probe mode and waits for its answer, once (again at the next
// start if the probe could not be started for a passing reason, such as
// too many processes). /proc may not be mounted, or the executable may
// not be a Go program that links this package (a Go library loaded into
// another program); commands are then started directly, with a
// parent-death signal on the command only.
func shimWorks() bool {
	shimProbed.Lock()
	defer shimProbed.Unlock()
	if !shimProbed.known {
		shimProbed.ok, shimProbed.known = probeShim(selfExe)
	}
	return shimProbed.ok
}

// probeShim runs the probe on exe; final is false when its outcome says
// nothing lasting.
func probeShim(exe string) (ok, final bool) {
	r, w, err := os.Pipe()
	if err != nil {
		return false, false
	}
	defer r.Close()
	cmd := exec.Command(exe, shimProbe)
	cmd.Args[0] = shimArg0
	cmd.Env = []string{shimEnv + "=" + strconv.Itoa(os.Getpid()) + ",0"}
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	err = spawn(cmd)
	_ = w.Close()
	if err != nil {
		lasting := errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ENOEXEC)
		return false, lasting
	}
	b, _ := io.ReadAll(io.LimitReader(r, 16))
	_ = cmd.Wait()
	return string(b) == "ok" && cmd.ProcessState.Success(), true
}

// start starts cmd (already set for its own group) through the shim, or
// directly when shim is false or the shim cannot be used.
func start(cmd *exec.Cmd, shim bool) error {
	a := cmd.SysProcAttr
	if !shim || cmd.Err != nil || cmd.Path == "" || a.Chroot != "" || a.Cloneflags != 0 || !shimWorks() {
		// cmd.Err: Start reports it without starting anything. A chroot
		// or new namespaces would have the shim look for itself, or for
		// its parent, in the wrong place.
		a.Pdeathsig = syscall.SIGKILL
		return spawn(cmd)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	path, args, origEnv, extra := cmd.Path, cmd.Args, cmd.Env, cmd.ExtraFiles
	env := origEnv
	if env == nil {
		// What os/exec would give the command: the environment, and PWD
		// when Dir is set.
		env = os.Environ()
		if cmd.Dir != "" {
			if pwd, err := filepath.Abs(cmd.Dir); err == nil {
				env = append(env, "PWD="+pwd)
			}
		}
	}
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, shimEnv+"=") })
	cmd.Path = selfExe
	cmd.Args = append([]string{shimArg0, path}, args...)
	cmd.Env = append(env, shimEnv+"="+strconv.Itoa(os.Getpid())+","+strconv.Itoa(len(extra)))
	cmd.ExtraFiles = append(slices.Clip(extra), w)
	a.Pdeathsig = shimDeathSig
	err = spawn(cmd)
	_ = w.Close()
	cmd.Path, cmd.Args, cmd.Env, cmd.ExtraFiles = path, args, origEnv, extra
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == selfExe {
			pe.Path = path
		}
		return err
	}
	b, err := io.ReadAll(io.LimitReader(r, 4096))
	if err != nil || len(b) == 0 {
		// Started, or the shim was killed before it could tell (a
		// cancel that came at once): Wait reports that.
		return nil
	}
	_ = cmd.Wait()
	if b[0] == 'E' {
		if n, err := strconv.Atoi(string(b[1:])); err == nil {
			return &fs.PathError{Op: "fork/exec", Path: path, Err: syscall.Errno(n)}
		}
	}
	return fmt.Errorf("fork/exec %s: %s", path, b[1:])
}
