package langgraph

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/pactum/pactum/agent/agenttest"
	"github.com/pactum/pactum/agent/langgraph/langgraphtest"
	"github.com/pactum/pactum/internal/syncbuf"
)

// callTimeout bounds one attempt in the tests.
const callTimeout = 60 * time.Second

// The tests of this package share one Agent Server, started on first use
// and stopped by TestMain.
var (
	serverOnce sync.Once
	server     *langgraphtest.Server
	serverErr  error
	serverDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if server != nil {
		server.Stop()
	}
	if serverDir != "" {
		_ = os.RemoveAll(serverDir)
	}
	os.Exit(code)
}

// serverURL returns the shared server's URL, skipping the test when the
// server cannot run here (failing it when PACTUM_REQUIRE_INTEROP=1).
func serverURL(t *testing.T) string {
	t.Helper()
	serverOnce.Do(func() {
		serverDir, serverErr = os.MkdirTemp("", "pactum-langgraph-")
		if serverErr == nil {
			server, serverErr = langgraphtest.StartIn(serverDir)
		}
	})
	if serverErr != nil {
		if langgraphtest.Missing(serverErr) && os.Getenv("PACTUM_REQUIRE_INTEROP") != "1" {
			t.Skipf("%v; set PACTUM_REQUIRE_INTEROP=1 to make this a failure", serverErr)
		}
		t.Fatalf("agent server: %v", serverErr)
	}
	return server.URL
}

// bundle is what a test needs.
type bundle struct {
	r    *Runtime
	url  string
	ctx  context.Context
	logs *syncbuf.Buffer
}

// setup builds a runtime for the assistant from YAML settings (appended to
// url and assistant) the way configuration does.
func setup(t *testing.T, assistant, extra string) *bundle {
	t.Helper()
	b := &bundle{url: serverURL(t), logs: &syncbuf.Buffer{}}
	settings := fmt.Sprintf("url: %s\nassistant: %s\n%s", b.url, assistant, extra)
	spec := agenttest.Spec(t, Type, settings)
	var s Settings
	if err := spec.DecodeInto(&s); err != nil {
		t.Fatalf("decode settings: %v", err)
	}
	log := slog.New(slog.NewTextHandler(b.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r, err := New(s, WithName(t.Name()), WithLogger(log))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	b.r = r
	ctx, cancel := context.WithTimeout(context.Background(), 2*callTimeout)
	b.ctx = ctx
	t.Cleanup(func() {
		cancel()
		_ = r.Close()
		if t.Failed() {
			t.Logf("runtime logs:\n%s", b.logs.String())
		}
	})
	return b
}
