package mcpagent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pactum/pactum/agent/agenttest"
	"github.com/pactum/pactum/agent/internal/procgroup/proctest"
)

func TestMain(m *testing.M) {
	proctest.Main(m, map[string]proctest.Helper{"server": serverHelper})
}

// silentServer stands for a stdio server that does not exit when its
// standard input closes: it starts a child that records its process id
// in grandchild, records its own in server, and sleeps.
func silentServer(dir string) Settings {
	return Settings{Command: "sh", Args: []string{"-c", `sleep 300 & echo $! > "$0/grandchild"; echo $$ > "$0/server"; exec sleep 60`, dir}, Tool: "x"}
}

// serverHelper starts a stdio server in the helper process (the call waits
// for its answer to initialize, which never comes), then retires threads
// as a Go program may.
func serverHelper(dir string) error {
	r, err := New(silentServer(dir))
	if err != nil {
		return err
	}
	go func() { _, _ = r.Invoke(context.Background(), agenttest.Request("hi")) }()
	for !fileHasPID(filepath.Join(dir, "server")) {
		time.Sleep(5 * time.Millisecond)
	}
	proctest.ChurnThreads(200)
	return nil
}

func fileHasPID(file string) bool {
	var pid int
	b, err := readFile(file)
	if err != nil {
		return false
	}
	_, err = fmt.Sscanf(string(b), "%d\n", &pid)
	return err == nil && pid > 0
}

// TestStdioServerDiesWithServer: a stdio server survives the Go runtime
// retiring threads and dies as soon as its pactum process is killed with
// SIGKILL, even one that ignores the end of its standard input, and so
// does what it started, with no sweep.
func TestStdioServerDiesWithServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	helper := proctest.Start(t, "server", dir)
	server := proctest.ReadPID(t, filepath.Join(dir, "server"))
	grandchild := proctest.ReadPID(t, filepath.Join(dir, "grandchild"))
	t.Cleanup(func() { proctest.KillIfRunning(grandchild) })
	if !proctest.Running(server) || !proctest.Running(grandchild) {
		t.Fatal("the server died while its pactum process was still running (after threads were retired)")
	}
	proctest.KillAndWait(t, helper)
	if !proctest.WaitStopped(server, 10*time.Second) {
		t.Fatalf("the stdio server (pid %d) still runs 10s after its pactum process was killed", server)
	}
	if !proctest.WaitStopped(grandchild, 10*time.Second) {
		t.Fatalf("what the stdio server started (pid %d) still runs 10s after its pactum process was killed", grandchild)
	}
}

// TestCloseKillsSilentServer: Close ends a stdio server that ignores the
// end of its standard input (after SIGTERM), and Close returns only once
// it is gone.
func TestCloseKillsSilentServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r, err := New(silentServer(dir))
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = r.Invoke(context.Background(), agenttest.Request("hi")) }()
	server := proctest.ReadPID(t, filepath.Join(dir, "server"))
	grandchild := proctest.ReadPID(t, filepath.Join(dir, "grandchild"))
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if proctest.Running(server) || proctest.Running(grandchild) {
		t.Fatalf("the stdio server (pid %d) or its child (pid %d) still runs after Close returned", server, grandchild)
	}
}

func readFile(name string) ([]byte, error) { return os.ReadFile(name) }
