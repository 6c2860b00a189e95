package mcpagent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pactum/pactum/agent/internal/procgroup"
	"github.com/pactum/pactum/agent/internal/tail"
)

const (
	// stopGrace is how long a server program may take to exit after its
	// standard input is closed, and then after SIGTERM, before it is
	// killed.
	stopGrace = 5 * time.Second
	// stderrTailBytes is how much of the end of a server's standard error
	// errors quote.
	stderrTailBytes = 2048
	// stderrWaitDelay bounds how long reaping a server waits for something
	// it started to close standard error.
	stderrWaitDelay = 2 * time.Second
)

// proc is a stdio server program: its pipes, its standard error and its
// exit. The pipes are plain os.Pipe files, so that reaping the program
// never closes standard output under the SDK's reader: pactum closes its
// end itself once the program is gone.
type proc struct {
	cmd    *exec.Cmd
	group  *procgroup.Group
	stdin  *os.File // pactum's end, written by the SDK
	stdout *os.File // pactum's end, read by the SDK through a progressTap
	stderr *tail.Lines
	// exited is closed when the program has exited and been reaped;
	// waitErr is then what Wait returned.
	exited   chan struct{}
	waitErr  error
	stopOnce sync.Once
}

// startProc starts the program in its own process group, recorded in
// procs: the group is killed when the program is gone, a terminal's
// signals are for pactum, not for it, and the program dies with pactum
// (see package procgroup).
func startProc(procs *procgroup.Dir, label procgroup.Label, name string, args []string, dir string, env []string, logLine func(string)) (*proc, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		_, _ = inR.Close(), inW.Close()
		return nil, err
	}
	p := &proc{stdin: inW, stdout: outR, stderr: &tail.Lines{Max: stderrTailBytes, Log: logLine}, exited: make(chan struct{})}
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, p.stderr
	cmd.WaitDelay = stderrWaitDelay
	p.group, err = procs.Start(cmd, label)
	// The program holds its own copies now.
	_, _ = inR.Close(), outW.Close()
	if err != nil {
		_, _ = inW.Close(), outR.Close()
		return nil, err
	}
	p.cmd = cmd
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// pid is the program's process id.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// wait reports whether the program exits within d.
func (p *proc) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// signal signals the program's process group.
func (p *proc) signal(sig syscall.Signal) {
	_ = procgroup.Signal(p.pid(), sig)
}

// stop shuts the program down as the MCP specification asks of a client:
// close its standard input, wait for it to exit, then SIGTERM, then
// SIGKILL. Whatever it left running in its group is killed. stop returns
// once the program is reaped; it is safe to call more than once.
func (p *proc) stop() {
	p.stopOnce.Do(func() {
		_ = p.stdin.Close()
		if !p.wait(stopGrace) {
			p.signal(syscall.SIGTERM)
			if !p.wait(stopGrace) {
				p.signal(syscall.SIGKILL)
				<-p.exited
			}
		}
		// Whatever it left running in its group goes too; its record
		// goes once the group is gone.
		_ = p.group.Done(context.Background())
		_ = p.stdout.Close()
	})
}

// detail describes how the program ended, for errors: its exit status
// (once it is reaped; detail waits up to d for that) and the end of its
// standard error.
func (p *proc) detail(d time.Duration) string {
	var b strings.Builder
	if p.wait(d) {
		var exit *exec.ExitError
		switch {
		case errors.As(p.waitErr, &exit):
			fmt.Fprintf(&b, " (%s)", exit.ProcessState)
		case p.waitErr == nil:
			b.WriteString(" (exit status 0)")
		}
	}
	if tail := p.stderr.String(); tail != "" {
		b.WriteString(": ")
		b.WriteString(tail)
	}
	return b.String()
}
