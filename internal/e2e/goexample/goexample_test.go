//go:build unix

package goexample_test

import (
	"bytes"
	"context"
	"go/format"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/pactum/pactum/a2aserver"
	"github.com/pactum/pactum/internal/e2e/mdblock"
	"github.com/pactum/pactum/internal/syncbuf"
)

const (
	beginMarker = "<!-- go-example:begin -->"
	endMarker   = "<!-- go-example:end -->"

	// exampleAddr is the listen address the README's example uses; the
	// test replaces it with a free one.
	exampleAddr = "127.0.0.1:9000"

	// buildTimeout bounds building the example: with a cold build cache it
	// compiles pactum and the SQLite driver, which takes minutes on a
	// loaded two-core machine.
	buildTimeout = 10 * time.Minute
	// runTimeout bounds the example's run, from start to exit.
	runTimeout = time.Minute
)

func TestREADMEGoExample(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the README's Go example (skipped under -short)")
	}
	root := moduleRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := extractExample(string(readme))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	if formatted, err := format.Source([]byte(src)); err != nil || string(formatted) != src {
		t.Fatalf("the README's Go example is not gofmt-formatted (%v); gofmt gives:\n%s", err, formatted)
	}
	for _, a := range loopbackAddr.FindAllString(src, -1) {
		if a != exampleAddr {
			t.Fatalf("the example uses %s; only %s is given a free port", a, exampleAddr)
		}
	}
	if !strings.Contains(src, exampleAddr) {
		t.Fatalf("the example no longer listens on %s", exampleAddr)
	}
	addr := freeAddr(t)
	src = strings.ReplaceAll(src, exampleAddr, addr)

	dir := t.TempDir()
	writeModule(t, root, dir, src)
	bin := filepath.Join(dir, "greeter")
	build(t, dir, bin)

	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	var out syncbuf.Buffer // written by the process's copier, read by failures
	cmd := exec.Command(bin)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		// Whatever happened, nothing of the example outlives the test.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})

	base := "http://" + addr
	waitReady(ctx, t, base, exited, &out)

	// The card, fetched over HTTP by the official resolver, says what the
	// example set and what is true of a server without auth.
	card, err := agentcard.DefaultResolver.Resolve(ctx, base+"/agents/greeter")
	if err != nil {
		t.Fatalf("resolve the example's card: %v\noutput:\n%s", err, out.String())
	}
	if card.Name != "greeter" || card.Version != "1.0.0" {
		t.Errorf("card: name %q, version %q; want greeter, 1.0.0", card.Name, card.Version)
	}
	trusted := false
	for _, e := range card.Capabilities.Extensions {
		trusted = trusted || (e.URI == a2aserver.TrustModelURI && e.Params["authentication"] == "none" && e.Params["actor"] == "self-asserted")
	}
	if !trusted || len(card.SecurityRequirements) != 0 {
		t.Errorf("card of a server without auth: extensions %+v, security %+v", card.Capabilities.Extensions, card.SecurityRequirements)
	}

	// One request, as the README says: "world" is answered "hello, world".
	client, err := a2aclient.NewFromCard(ctx, card)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Destroy()
	res, err := client.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("world"))})
	if err != nil {
		t.Fatalf("send: %v\noutput:\n%s", err, out.String())
	}
	tk, ok := res.(*a2a.Task)
	if !ok || tk.Status.State != a2a.TaskStateCompleted || len(tk.Artifacts) == 0 || tk.Artifacts[0].Parts[0].Text() != "hello, world" {
		t.Fatalf("send \"world\" = %+v, want a completed task answering \"hello, world\"", res)
	}

	// SIGTERM: the example drains and exits 0, and frees its port.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("the example exited with %v after SIGTERM\noutput:\n%s", err, out.String())
		}
	case <-ctx.Done():
		t.Fatalf("the example did not exit within %v of its start\noutput:\n%s", runTimeout, out.String())
	}
	if ln, err := net.Listen("tcp", addr); err != nil {
		t.Errorf("port %s still held after the example exited: %v", addr, err)
	} else {
		ln.Close()
	}
	if _, err := os.Stat(filepath.Join(dir, "pactum.db")); err != nil {
		t.Errorf("the example kept no store in ./pactum.db, as the README says: %v", err)
	}
}

// extractExample returns the body of the one ```go block between the markers.
func extractExample(readme string) (string, error) {
	return mdblock.Extract(readme, beginMarker, endMarker, "go", "the example's")
}

var loopbackAddr = regexp.MustCompile(`127\.0\.0\.1:[0-9]+`)

// freeAddr returns a loopback address that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// moduleRoot finds the directory of pactum's go.mod above the test's.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(b, []byte("module github.com/pactum/pactum\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod of github.com/pactum/pactum above the test's directory")
		}
		dir = parent
	}
}

// writeModule writes the example as main.go of a new module in dir that
// requires pactum, replaced by the checkout at root. The module lists
// pactum's own requirements and go.sum, so that it builds from the module
// cache without a network (GOPROXY=off), as a user's module would after
// `go get github.com/pactum/pactum`.
func writeModule(t *testing.T, root, dir, src string) {
	t.Helper()
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	const self = "module github.com/pactum/pactum\n"
	if strings.Contains(string(gomod), "\nreplace ") {
		t.Fatal("pactum's go.mod has replace directives; teach writeModule to carry them over")
	}
	mod := "module example.com/greeter\n" + strings.TrimPrefix(string(gomod), self) +
		"\nrequire github.com/pactum/pactum v0.0.0\n\nreplace github.com/pactum/pactum => " + root + "\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"go.mod": []byte(mod), "go.sum": sum, "main.go": []byte(src)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// build compiles the module in dir into bin, offline and outside any
// workspace.
func build(t *testing.T, dir, bin string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOPROXY=off", "GOFLAGS=-mod=readonly")
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build of the README's Go example: %v\n%s", err, out)
	}
	t.Logf("built the example in %v", time.Since(start).Round(time.Millisecond))
}

// waitReady polls /readyz until the example answers, failing the test if
// it exits first or ctx ends.
func waitReady(ctx context.Context, t *testing.T, base string, exited <-chan error, out *syncbuf.Buffer) {
	t.Helper()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/readyz", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("the example exited before it was ready: %v\noutput:\n%s", err, out.String())
		case <-ctx.Done():
			t.Fatalf("the example was not ready within %v\noutput:\n%s", runTimeout, out.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
