// Package langgraphtest starts a real LangGraph Agent Server for tests: the
// pinned JS server (`langgraphjs dev`, npm @langchain/langgraph-cli) on a
// free loopback port, serving the test graphs of agent/langgraph/testdata
// (echo, slow, ask, form, fail), in its own process group that is killed
// when the test ends. It is for tests only.
//
// When node or the npm packages are missing the test is skipped, or fails
// when PACTUM_REQUIRE_INTEROP=1 (CI sets it). The packages are installed
// with `npm ci --legacy-peer-deps` in agent/langgraph/testdata/js
// (.ci/run does it; Start tries once when they are missing).
package langgraphtest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Install is the command that installs the pinned server, run in
// agent/langgraph/testdata/js.
const Install = "npm ci --legacy-peer-deps --no-audit --no-fund"

// startWithin bounds the server's start (it compiles the graphs first).
const startWithin = 90 * time.Second

// Server is a running Agent Server.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1:PORT.
	URL string
	// Log is the file the server's output goes to.
	Log string
	cmd *exec.Cmd
}

// testdata returns agent/langgraph/testdata.
func testdata() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata")
}

var (
	installOnce sync.Once
	installErr  error
)

// Start starts a server of the test graphs and registers its end with
// t.Cleanup.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartWith(t, nil)
}

// StartWith starts a server of the graphs in files (file name → content:
// langgraph.json, the graphs' modules; nil for the test graphs) and
// registers its end with t.Cleanup. The graphs can import the pinned npm
// packages (@langchain/langgraph, @langchain/core).
func StartWith(t testing.TB, files map[string][]byte) *Server {
	t.Helper()
	s, err := start(t.TempDir(), files)
	if err != nil {
		if Missing(err) {
			missing(t, err.Error())
		}
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// StartIn starts a server whose files live in dir, for a server that
// several tests share; the caller stops it. Missing(err) tells a missing
// dependency from a failure.
func StartIn(dir string) (*Server, error) {
	return start(dir, nil)
}

// errMissing marks a missing dependency.
type errMissing struct{ why string }

func (e errMissing) Error() string { return e.why }

// Missing reports whether err says a dependency is missing (skip, unless
// PACTUM_REQUIRE_INTEROP=1).
func Missing(err error) bool { _, ok := err.(errMissing); return ok }

func start(dir string, files map[string][]byte) (*Server, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, errMissing{fmt.Sprintf("node is not on PATH (%v)", err)}
	}
	js := filepath.Join(testdata(), "js")
	cli := filepath.Join(js, "node_modules", "@langchain", "langgraph-cli", "dist", "cli", "cli.mjs")
	if _, err := os.Stat(cli); err != nil {
		installOnce.Do(func() { installErr = npmCI(js) })
		if _, err := os.Stat(cli); err != nil {
			return nil, errMissing{fmt.Sprintf("the LangGraph Agent Server is not installed (%v; npm ci: %v); run in agent/langgraph/testdata/js: %s", err, installErr, Install)}
		}
	}
	// The graphs run from a copy, so that the server's own files
	// (.langgraph_api) stay out of the repository.
	if files == nil {
		files = map[string][]byte{}
		for _, f := range []string{"graph.js", "langgraph.json", "package.json"} {
			b, err := os.ReadFile(filepath.Join(testdata(), "graphs", f))
			if err != nil {
				return nil, err
			}
			files[f] = b
		}
	}
	if _, ok := files["package.json"]; !ok {
		files["package.json"] = []byte(`{"private": true, "type": "module"}`)
	}
	for f, b := range files {
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			return nil, err
		}
	}
	if err := os.Symlink(filepath.Join(js, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{URL: fmt.Sprintf("http://127.0.0.1:%d", port), Log: filepath.Join(dir, "server.log")}
	logf, err := os.Create(s.Log)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	s.cmd = exec.Command(node, cli, "dev", "--port", fmt.Sprint(port), "--host", "127.0.0.1", "--no-browser")
	s.cmd.Dir = dir
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.Env = append(os.Environ(), "LANGSMITH_TRACING=false", "LANGCHAIN_TRACING_V2=false", "NO_COLOR=1")
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(startWithin)
	for {
		resp, err := http.Get(s.URL + "/ok")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		if time.Now().After(deadline) {
			s.Stop()
			out, _ := os.ReadFile(s.Log)
			return s, fmt.Errorf("the Agent Server did not answer within %s:\n%s", startWithin, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Stop kills the server's process group and waits for it. Stopping twice
// is safe.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	_ = s.cmd.Wait()
	s.cmd = nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func npmCI(dir string) error {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--legacy-peer-deps", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	return nil
}

func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("PACTUM_REQUIRE_INTEROP") == "1" {
		t.Fatalf("%s, and PACTUM_REQUIRE_INTEROP=1", why)
	}
	t.Skipf("%s; set PACTUM_REQUIRE_INTEROP=1 to make this a failure", why)
}
