package interop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	buildTimeout = 5 * time.Minute
	readyTimeout = 30 * time.Second
	stopTimeout  = 10 * time.Second
)

var (
	buildOnce sync.Once
	buildDir  string
	binPath   string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// pactumBinary builds cmd/pactum once per test binary and returns its path.
func pactumBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "pactum-interop-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(buildDir, "pactum")
		ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", binPath, "github.com/pactum/pactum/cmd/pactum")
		cmd.Dir = ".." // the module root
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build ./cmd/pactum: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// pactumServer is a pactum subprocess serving pactum-interop.yaml on
// a loopback port with its own SQLite file.
type pactumServer struct {
	// URL is the server's base URL, http://127.0.0.1:PORT.
	URL string
	// GRPC is the address of its gRPC listener, 127.0.0.1:PORT ("" when
	// it serves no gRPC).
	GRPC string
	logs *lockedBuffer
}

// AgentURL is the A2A base URL of the named agent; its card is at
// AgentURL/.well-known/agent-card.json.
func (s *pactumServer) AgentURL(name string) string { return s.URL + "/agents/" + name }

var errAddrInUse = errors.New("address already in use")

// setup starts a pactum server for t and stops it when t ends, passed or
// failed; its log is printed if t failed (or always with PACTUM_INTEROP_LOG=1).
func setup(t *testing.T) *pactumServer {
	t.Helper()
	cfg, err := filepath.Abs("pactum-interop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return setupWith(t, cfg)
}

// setupWith is setup with the configuration file cfg and extra environment
// variables (NAME=value) for the server process.
func setupWith(t *testing.T, cfg string, env ...string) *pactumServer {
	t.Helper()
	return launch(t, cfg, false, env...)
}

// setupGRPC is setupWith for a server that also serves A2A over gRPC on
// a loopback port of its own (--grpc-listen).
func setupGRPC(t *testing.T, cfg string, env ...string) *pactumServer {
	t.Helper()
	return launch(t, cfg, true, env...)
}

func launch(t *testing.T, cfg string, grpc bool, env ...string) *pactumServer {
	t.Helper()
	bin := pactumBinary(t)
	// The port is picked free and then handed over, so another process can
	// take it in between; try again in that case.
	for attempt := 1; ; attempt++ {
		srv, err := startServer(t, bin, cfg, grpc, env...)
		if err == nil {
			return srv
		}
		if attempt < 3 && errors.Is(err, errAddrInUse) {
			t.Logf("retrying with another port: %v", err)
			continue
		}
		t.Fatal(err)
	}
}

func startServer(t *testing.T, bin, cfg string, grpc bool, env ...string) (*pactumServer, error) {
	t.Helper()
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	srv := &pactumServer{URL: "http://" + addr, logs: &lockedBuffer{}}
	dsn := "sqlite://" + filepath.Join(t.TempDir(), "pactum.db")
	args := []string{"serve", "--config", cfg, "--listen", addr, "--base-url", srv.URL, "--store", dsn}
	if grpc {
		gport, err := freePort()
		if err != nil {
			return nil, err
		}
		srv.GRPC = fmt.Sprintf("127.0.0.1:%d", gport)
		args = append(args, "--grpc-listen", srv.GRPC)
	}
	cmd := exec.Command(bin, args...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout = srv.logs
	cmd.Stderr = srv.logs
	configureProcess(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start pactum: %w", err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		stopProcess(t, cmd, exited)
		if t.Failed() || os.Getenv("PACTUM_INTEROP_LOG") == "1" {
			t.Logf("pactum log (%s):\n%s", srv.URL, srv.logs.String())
		}
	})

	if err := waitReady(srv.URL, exited); err != nil {
		status := "still running"
		select {
		case <-exited:
			status = fmt.Sprintf("exited: %v", waitErr)
		case <-time.After(time.Second):
		}
		logs := srv.logs.String()
		if strings.Contains(logs, "address already in use") {
			return nil, fmt.Errorf("%w: %s", errAddrInUse, addr)
		}
		return nil, fmt.Errorf("pactum on %s not ready: %v (%s)\n%s", addr, err, status, logs)
	}
	return srv, nil
}

// stopProcess asks pactum to shut down (SIGINT drains) and kills it if it
// has not exited within stopTimeout.
func stopProcess(t *testing.T, cmd *exec.Cmd, exited <-chan struct{}) {
	select {
	case <-exited:
		return
	default:
	}
	_ = cmd.Process.Signal(os.Interrupt)
	select {
	case <-exited:
	case <-time.After(stopTimeout):
		t.Logf("pactum did not stop within %s; killing it", stopTimeout)
		_ = cmd.Process.Kill()
		<-exited
	}
}

// waitReady polls /readyz until it answers 200, the process exits, or
// readyTimeout passes.
func waitReady(base string, exited <-chan struct{}) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.NewTimer(readyTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		resp, err := client.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-exited:
			return errors.New("process exited")
		case <-deadline.C:
			return fmt.Errorf("/readyz not 200 after %s (last: %s)", readyTimeout, last)
		case <-tick.C:
		}
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// lockedBuffer is an io.Writer safe for the two output streams of a
// subprocess and concurrent readers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
