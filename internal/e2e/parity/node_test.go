package parity

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pactum/pactum/agent/function"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/node"
	"github.com/pactum/pactum/task"
)

// testNode is a real pactum node, assembled as `pactum serve` assembles it, on
// a loopback port over its own SQLite file.
type testNode struct {
	url   string
	srv   *node.Server
	store task.Store
}

// startNode starts a node named name (recorded on its execution records)
// serving testdata/pactum.yaml and, given in code as pactum.Agent gives
// one, the agent ask (askAgent). It stops when the test ends.
func startNode(t *testing.T, name string) *testNode {
	t.Helper()
	base, err := os.ReadFile(filepath.Join("testdata", "pactum.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := fmt.Sprintf("listen: %s\nstore: sqlite://%s\nnode: %s\n%s", ln.Addr(), filepath.Join(dir, "pactum.db"), name, base)
	cfg, err := config.Parse([]byte(src), "testdata/pactum.yaml")
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	extra := []node.Extra{{Config: config.NewAgent("ask"), Agent: askAgent()}}
	srv, err := node.New(ctx, cfg, dir, extra, nil)
	if err != nil {
		cancel()
		ln.Close()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.ServeListener(ctx, ln, 10*time.Second) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("node %s: %v", name, err)
		}
	})
	return &testNode{url: "http://" + ln.Addr().String(), srv: srv, store: srv.Coordinator().Store()}
}

// askAgent asks for a name on the first turn (input_required, the question
// as its message) and greets it on the next; an answer of "again" makes it
// ask once more. Configuration cannot select a function, so the node gets
// it in code.
func askAgent() *function.Runtime {
	return function.New("ask", func(ctx context.Context, req *task.Request) (*task.Result, error) {
		if len(req.History) == 1 || req.Message.Text() == "again" {
			return &task.Result{InputRequired: true, Message: &task.Message{Parts: []task.Part{task.TextPart("what is your name?")}}}, nil
		}
		return &task.Result{Artifacts: []task.Artifact{{ID: "greeting", Parts: []task.Part{task.TextPart("hello " + req.Message.Text())}}}}, nil
	})
}
