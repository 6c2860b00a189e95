package procgroup

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/pactum/pactum/agent/internal/procgroup/proctest"
)

// TestChildOutlivesTheCallersThread: the goroutine that asks for a child
// may be locked to its thread and exit, which ends the thread; the child
// must not get its parent-death signal then (it would with a plain
// cmd.Start on that thread).
func TestChildOutlivesTheCallersThread(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sleep", "60")
	type started struct {
		tid int
		err error
	}
	ch := make(chan started, 1)
	var s started
	for {
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			if tid := syscall.Gettid(); tid == os.Getpid() {
				// The main thread is never ended, only parked for good.
				ch <- started{tid: tid}
				return
			}
			ch <- started{syscall.Gettid(), Start(cmd)}
		}()
		if s = <-ch; s.tid != os.Getpid() {
			break
		}
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	t.Cleanup(func() {
		_ = Kill(context.Background(), cmd.Process.Pid)
		_ = cmd.Wait()
	})
	task := "/proc/self/task/" + strconv.Itoa(s.tid)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := os.Stat(task); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the caller's thread did not end")
		}
		time.Sleep(time.Millisecond)
	}
	if proctest.WaitStopped(cmd.Process.Pid, 2*time.Second) {
		t.Fatal("the child died when the thread of the goroutine that started it ended")
	}
}

// TestSweepSkipsReusedIDs: a record whose leader's process id now belongs
// to another process (another start time) kills nothing.
func TestSweepSkipsReusedIDs(t *testing.T) {
	t.Parallel()
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = Kill(context.Background(), cmd.Process.Pid); _ = cmd.Wait() })
	rec, err := newRecord(cmd.Process.Pid, Label{Kind: "exec"})
	if err != nil {
		t.Fatal(err)
	}
	rec.Owner = procID{PID: 999999999, Start: "1"} // gone
	rec.Leader.Start = "1"                         // not the running process's
	if err := os.WriteFile(filepath.Join(d.Path(), "x.json"), rec.encode(), 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := d.Sweep(context.Background(), nil)
	if err != nil || n != 0 {
		t.Fatalf("Sweep = %d, %v; want 0, nil", n, err)
	}
	if !proctest.Running(cmd.Process.Pid) {
		t.Fatal("the sweep killed a process whose id was only reused")
	}
	// The same record with the right start time is the process's: killed.
	rec.Leader.Start, _, _ = procStart(cmd.Process.Pid)
	if err := os.WriteFile(filepath.Join(d.Path(), "x.json"), rec.encode(), 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := d.Sweep(context.Background(), nil); err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want 1, nil", n, err)
	}
	if proctest.Running(cmd.Process.Pid) {
		t.Fatal("the sweep left the recorded group running")
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("12530 (sleep) Z 1 12526 5229 0 -1 422708 0 0 0 0 0 0 0 0 20 0 1 0 119714 0 0\n"))
	f.Add([]byte("1 (a) b)) S 0 0 0 0 -1 4194560 2 1 0 6 1 2 2 1 1 -1 1 0 9 1 1\n"))
	f.Add([]byte("x"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseStat(b)
		if err == nil && s.pid <= 0 {
			t.Fatalf("accepted pid %d", s.pid)
		}
	})
}
