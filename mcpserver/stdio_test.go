package mcpserver_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/mcpserver"
	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/task"
)

// TestRunOverPipes serves a session over an in-process pipe pair, the
// transport RunStdio uses over stdin and stdout.
func TestRunOverPipes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	ctx, cancel := context.WithCancel(testCtx(t))
	done := make(chan error, 1)
	go func() { done <- b.srv.Run(ctx, &mcp.IOTransport{Reader: serverIn, Writer: serverOut}) }()

	client := mcp.NewClient(&mcp.Implementation{Name: "pipe-client", Version: "v0.0.1"}, nil)
	cs, err := client.Connect(testCtx(t), &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	out := call[mcpserver.SubmitTaskOutput](t, cs, mcpserver.ToolSubmitTask, map[string]any{"agent": "echo", "text": "over a pipe", "wait": true})
	if out.State != "succeeded" || out.Artifacts[0].Text != "over a pipe" {
		t.Fatalf("submit over a pipe answered %+v", out)
	}
	_ = cs.Close()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after the client left")
	}
}

// TestRunStdio runs RunStdio in a child process (this test binary, started
// again) and talks to it over its stdin and stdout, as a desktop client
// does.
func TestRunStdio(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestStdioChild$")
	cmd.Env = append(os.Environ(), "MCPSERVER_STDIO_CHILD="+filepath.Join(t.TempDir(), "pactum.db"))
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "desktop", Version: "v0.0.1"}, nil)
	cs, err := client.Connect(testCtx(t), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to pactum over stdio: %v", err)
	}
	defer cs.Close()
	out := call[mcpserver.SubmitTaskOutput](t, cs, mcpserver.ToolSubmitTask, map[string]any{"agent": "echo", "text": "over stdio", "wait": true})
	if out.State != "succeeded" || out.Artifacts[0].Text != "over stdio" {
		t.Fatalf("submit over stdio answered %+v", out)
	}
	got := call[mcpserver.TaskInfo](t, cs, mcpserver.ToolGetTask, map[string]any{"task_id": out.TaskID})
	if got.TaskID != out.TaskID || got.State != "succeeded" {
		t.Errorf("get over stdio answered %+v", got)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
}

// TestStdioChild is the child process of TestRunStdio: a pactum node that
// serves MCP on stdin and stdout until stdin closes. It does nothing unless
// MCPSERVER_STDIO_CHILD names its database.
func TestStdioChild(t *testing.T) {
	dbPath := os.Getenv("MCPSERVER_STDIO_CHILD")
	if dbPath == "" {
		t.Skip("only runs as TestRunStdio's child process")
	}
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+dbPath, nil)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	b := &bundle{t: t, gate: make(chan struct{}), started: make(chan string, 16)}
	coord, err := task.NewCoordinator(task.Options{Store: st, Agents: testAgents(b)})
	if err != nil {
		t.Fatal(err)
	}
	if err := coord.Start(ctx); err != nil {
		t.Fatal(err)
	}
	err = mcpserver.New(coord, mcpserver.Options{}).RunStdio(ctx)
	_ = coord.Stop(ctx)
	_ = st.Close()
	if err != nil {
		os.Stderr.WriteString("RunStdio: " + err.Error() + "\n")
		os.Exit(1)
	}
	// Exit before the testing package prints its verdict on stdout, which
	// belongs to the protocol.
	os.Exit(0)
}
