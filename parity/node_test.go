package parity

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/server"
	"github.com/pactum/pactum/task"
)

// node is a real pactum node, assembled as `pactum serve` assembles it, on
// a loopback port over its own SQLite file.
type node struct {
	url   string
	srv   *server.Server
	store task.Store
}

// startNode starts a node named name (recorded on its execution records)
// serving testdata/pactum.yaml. It stops when the test ends.
func startNode(t *testing.T, name string) *node {
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
	srv, err := server.New(ctx, cfg, dir, nil, nil)
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
	return &node{url: "http://" + ln.Addr().String(), srv: srv, store: srv.Coordinator().Store()}
}
