// Package nodeproc builds, starts and kills real pactum node processes for
// the end-to-end tests (crashtest, multinode): a binary built once per
// test, a free loopback port, a process in its own process group that is
// ready when /readyz answers, SIGKILL or SIGTERM by the test, and nothing
// left running when the test ends. It is for tests only.
package nodeproc

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
)

// Pactum is the package path of the pactum command.
const Pactum = "github.com/pactum/pactum/cmd/pactum"

// Build builds the main package pkg into a temporary directory of t and
// returns the binary's path.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// FreeAddr returns a loopback address whose port was free a moment ago.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// readyWithin bounds how long Start waits for /readyz.
const readyWithin = 60 * time.Second

// Process is a running node.
type Process struct {
	Addr string
	Cmd  *exec.Cmd
	// Log is the file the node's output goes to ("" for the test's
	// stderr).
	Log string

	done chan struct{} // closed when the process has exited and been reaped
}

// Start runs bin with args as a node listening on addr, in its own process
// group, with its output appended to logPath (or the test's stderr when
// logPath is ""), and waits until its /readyz answers 200. The node's
// group is killed when the test ends if it still runs.
func Start(t testing.TB, bin, addr, logPath string, args ...string) *Process {
	t.Helper()
	p := &Process{Addr: addr, Log: logPath, done: make(chan struct{})}
	p.Cmd = exec.Command(bin, args...)
	p.Cmd.Stdout, p.Cmd.Stderr = os.Stderr, os.Stderr
	if logPath != "" {
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close() // the child has its own descriptor
		p.Cmd.Stdout, p.Cmd.Stderr = f, f
	}
	p.Cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.Cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(p.Kill)
	deadline := time.Now().Add(readyWithin)
	for time.Now().Before(deadline) && !p.Exited() {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.Kill()
	var out []byte
	if logPath != "" {
		out, _ = os.ReadFile(logPath)
	}
	t.Fatalf("%s %v did not become ready on %s (exited: %v)\n%s", bin, args, addr, p.Cmd.ProcessState, out)
	return nil
}

// Pid is the node's process id (and its process group's).
func (p *Process) Pid() int { return p.Cmd.Process.Pid }

// Exited reports whether the node has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits until the node has exited.
func (p *Process) Wait() { <-p.done }

// Kill sends SIGKILL to the node's process group and waits for the node to
// exit. Killing an exited node does nothing.
func (p *Process) Kill() { p.signal(-p.Pid(), syscall.SIGKILL) }

// KillServer sends SIGKILL to the node's process alone, not its group (what
// it started must die with it by itself), and waits for it to exit.
func (p *Process) KillServer() { p.signal(p.Pid(), syscall.SIGKILL) }

// Stop sends SIGTERM to the node's process group and waits for the node to
// exit (it drains first).
func (p *Process) Stop() { p.signal(-p.Pid(), syscall.SIGTERM) }

func (p *Process) signal(pid int, sig syscall.Signal) {
	if p.Exited() {
		return
	}
	_ = syscall.Kill(pid, sig)
	<-p.done
}

// Client returns an official a2a-go client for agent on the node at addr,
// from the agent's card.
func Client(t testing.TB, ctx context.Context, addr, agent string) *a2aclient.Client {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(ctx, fmt.Sprintf("http://%s/agents/%s", addr, agent))
	if err != nil {
		t.Fatal(err)
	}
	c, err := a2aclient.NewFromCard(ctx, card)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
