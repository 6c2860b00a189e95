//go:build unix

package tour_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pactum/pactum/internal/e2e/mdblock"
)

const (
	beginMarker = "<!-- tour:begin -->"
	endMarker   = "<!-- tour:end -->"

	// tourTimeout bounds the tour itself, build included.
	tourTimeout = 3 * time.Minute
	// warmTimeout bounds warming the build cache before the tour's clock
	// starts: a cold cache compiles the SQLite driver, which on a loaded
	// two-core CI machine takes minutes on its own.
	warmTimeout = 10 * time.Minute
)

// tourAddrs are the fixed addresses the README's tour uses; the test
// replaces each with a free one (see the package doc).
var tourAddrs = []string{"127.0.0.1:9000", "127.0.0.1:9001"}

func TestREADMETour(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the README tour: go install and real servers (skipped under -short)")
	}
	for _, tool := range []string{"bash", "curl", "sed", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the README tour needs %s on PATH: %v", tool, err)
		}
	}
	root := moduleRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := extractTour(string(readme))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	script, addrs := substituteAddrs(t, script)

	tmp := t.TempDir()
	clone := filepath.Join(tmp, "clone")
	gobin := filepath.Join(tmp, "gobin")
	if err := os.MkdirAll(gobin, 0o755); err != nil {
		t.Fatal(err)
	}
	copyRepo(t, root, clone)
	scriptPath := filepath.Join(tmp, "tour.sh")
	if err := os.WriteFile(scriptPath, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOBIN="+gobin, "PATH="+gobin+string(os.PathListSeparator)+os.Getenv("PATH"))

	warmBuildCache(t, clone, env)

	logPath := filepath.Join(tmp, "tour.log")
	code, pgid, runErr := runTour(t, clone, scriptPath, logPath, env)
	out, _ := os.ReadFile(logPath)

	// Nothing the tour started may outlive it, whether it passed or not:
	// bash runs background jobs in its own process group (no job
	// control), so an empty group means every server was stopped and
	// reaped.
	if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		t.Errorf("processes of the tour's group %d still ran after it ended (kill -0: %v)", pgid, err)
	}
	if runErr != nil || code != 0 {
		t.Fatalf("the tour failed (exit %d, %v); the script:\n%s\noutput:\n%s", code, runErr, script, out)
	}
	for _, a := range addrs {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			t.Errorf("port %s is still held after the tour: %v\noutput:\n%s", a, err, out)
			continue
		}
		ln.Close()
	}
	// The tour's go install wrote into the temporary GOBIN, not the
	// user's.
	if _, err := os.Stat(filepath.Join(gobin, "pactum")); err != nil {
		t.Errorf("go install did not put pactum into GOBIN: %v", err)
	}
	if t.Failed() {
		t.Fatalf("the tour's output:\n%s", out)
	}
	if !bytes.Contains(out, []byte("SHIP")) {
		t.Errorf("the tour's last command printed no SHIP report; output:\n%s", out)
	}
}

// extractTour returns the body of the one ```sh block between the markers.
func extractTour(readme string) (string, error) {
	return mdblock.Extract(readme, beginMarker, endMarker, "sh", "the tour's")
}

var loopbackAddr = regexp.MustCompile(`127\.0\.0\.1:[0-9]+`)

// substituteAddrs replaces each of tourAddrs in script by a free loopback
// address and returns the script and the addresses used. Every loopback
// address in the tour must be one of tourAddrs, so a new fixed port cannot
// slip in unsubstituted.
func substituteAddrs(t *testing.T, script string) (string, []string) {
	t.Helper()
	for _, a := range loopbackAddr.FindAllString(script, -1) {
		known := false
		for _, k := range tourAddrs {
			known = known || a == k
		}
		if !known {
			t.Fatalf("the tour uses %s; add it to tourAddrs so the test gives it a free port", a)
		}
	}
	var used []string
	for _, a := range tourAddrs {
		if !strings.Contains(script, a) {
			t.Fatalf("the tour no longer uses %s; remove it from tourAddrs", a)
		}
		free := freeAddr(t, used)
		script = strings.ReplaceAll(script, a, free)
		used = append(used, free)
	}
	return script, used
}

// freeAddr returns a loopback address free a moment ago, with a port below
// the kernel's ephemeral range: ports other tests get with :0, and the
// source ports of outgoing connections, come from that range, so no other
// test can take this port between now and the tour's serve.
func freeAddr(t *testing.T, taken []string) string {
	t.Helper()
	lo := ephemeralLow()
	const floor = 20000
	if lo <= floor+1000 {
		t.Fatalf("ephemeral port range starts at %d: no room below it for the tour's ports", lo)
	}
	for range 100 {
		a := net.JoinHostPort("127.0.0.1", strconv.Itoa(floor+rand.IntN(lo-floor)))
		dup := false
		for _, x := range taken {
			dup = dup || x == a
		}
		if dup {
			continue
		}
		ln, err := net.Listen("tcp", a)
		if err != nil {
			continue
		}
		ln.Close()
		return a
	}
	t.Fatal("no free port found below the ephemeral range")
	return ""
}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux),
// or 32768, the common default elsewhere.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return 32768
	}
	return n
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

// copyRepo copies the files of the checkout at root into dst, as a fresh
// clone would hold them: the files git tracks or would track (ignored ones
// such as databases and node_modules left out), as they are in the working
// tree, so an edited README is tested before it is committed. Without git
// it copies the tree without .git, node_modules and databases.
func copyRepo(t *testing.T, root, dst string) {
	t.Helper()
	files, err := gitFiles(root)
	if err != nil {
		t.Logf("git ls-files: %v; copying the tree instead", err)
		files = walkFiles(t, root)
	}
	if len(files) == 0 {
		t.Fatal("no files to copy")
	}
	for _, rel := range files {
		src := filepath.Join(root, rel)
		fi, err := os.Lstat(src)
		if errors.Is(err, fs.ErrNotExist) { // deleted in the working tree
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, to); err != nil {
				t.Fatal(err)
			}
		case fi.Mode().IsRegular():
			if err := copyFile(src, to, fi.Mode().Perm()); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func gitFiles(root string) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files in %s: %w", root, err)
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, filepath.FromSlash(f))
		}
	}
	return files, nil
}

func walkFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == ".git" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".db") || strings.Contains(name, ".db-") || strings.HasSuffix(name, ".test") {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		files = append(files, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return out.Close()
}

// warmBuildCache compiles cmd/pactum in the copy, as the tour's go install
// will, so the tour's own clock does not pay for a cold build cache.
func warmBuildCache(t *testing.T, dir string, env []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), warmTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", os.DevNull, "./cmd/pactum")
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("warming the build cache: go build ./cmd/pactum: %v\n%s", err, out)
	}
}

// runTour runs the script with bash -euo pipefail in dir, in a process
// group of its own whose leader is bash, its output in logPath. It returns
// bash's exit code and the group's id. When tourTimeout passes, the whole
// group is killed.
func runTour(t *testing.T, dir, script, logPath string, env []string) (code, pgid int, err error) {
	t.Helper()
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	ctx, cancel := context.WithTimeout(context.Background(), tourTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", script)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = nil
	// A file, not a pipe: a server left running must not hold Wait up.
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid = cmd.Process.Pid
	err = cmd.Wait()
	t.Logf("the tour ran %v", time.Since(start).Round(time.Millisecond))
	if ctx.Err() != nil {
		// Killed for running too long: nothing of it may stay behind.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		return -1, pgid, fmt.Errorf("the tour ran longer than %v: %w", tourTimeout, ctx.Err())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), pgid, nil
	}
	if err != nil {
		return -1, pgid, err
	}
	return 0, pgid, nil
}

// TestREADMETourComments checks that every command line of the tour says
// what it does: the brief for the tour is "every command with its expected
// effect in a comment".
func TestREADMETourComments(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join(moduleRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := extractTour(string(readme))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	sc := bufio.NewScanner(strings.NewReader(script))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if !strings.Contains(line, " # ") {
			t.Errorf("tour line %d has no comment saying what it does: %s", n, line)
		}
	}
}
