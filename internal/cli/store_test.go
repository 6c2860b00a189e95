package cli_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
)

// readCommands are the commands that only read the store, with the
// arguments they need besides --store/--config.
var readCommands = [][]string{
	{"tasks", "list"},
	{"tasks", "get", "t1"},
	{"tasks", "timeline", "t1"},
	{"tasks", "export", "t1"},
	{"runs", "list"},
	{"runs", "report", "t1"},
	{"audit", "verify"},
}

// agentsYAML is the one agent a configuration file needs.
const agentsYAML = "agents:\n  - {name: echo, type: echo}\n"

// seedStore creates a store at path holding n tasks whose inputs are a few
// KiB each, so the file spans many pages, and closes it.
func seedStore(t *testing.T, path string, n int) {
	t.Helper()
	s, err := sqlite.Open(t.Context(), "sqlite://"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("lorem ipsum ", 300)
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for i := range n {
		id := fmt.Sprintf("t%d", i)
		_, err := s.CreateTask(t.Context(), task.CreateParams{
			Task: &task.Task{ID: id, ContextID: "c", Agent: "echo", MaxAttempts: 1, Envelope: task.Envelope{
				TaskID: id, Actor: "alice", Action: "echo",
				Input: task.Message{ID: "m" + id, Role: task.RoleUser, Parts: []task.Part{task.TextPart(fmt.Sprintf("%d %s", i, text))}},
			}},
			Steps: []task.Step{{To: task.StateValidated}, {To: task.StateQueued}},
			Audit: []task.AuditInput{{Kind: task.AuditSubmitted, TaskID: id, Actor: "alice"}},
			Now:   now,
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestStoreRelativeToConfig: a relative sqlite path in a configuration
// file, written or the default, names a file beside the configuration,
// whatever the working directory; without a configuration the default is
// in the working directory. (Not parallel: it changes the working
// directory.)
func TestStoreRelativeToConfig(t *testing.T) {
	cfgDir, elsewhere := t.TempDir(), t.TempDir()
	named := filepath.Join(cfgDir, "named.yaml")
	if err := os.WriteFile(named, []byte("store: sqlite://pactum-workflows.db\n"+agentsYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	defaulted := filepath.Join(cfgDir, "defaulted.yaml")
	if err := os.WriteFile(defaulted, []byte("listen: 127.0.0.1:0\n"+agentsYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(elsewhere)

	mustRun(t, "migrate", "--config", named)
	seedStore(t, filepath.Join(cfgDir, "pactum.db"), 2)
	if _, err := os.Stat(filepath.Join(cfgDir, "pactum-workflows.db")); err != nil {
		t.Fatalf("migrate --config %s from another directory: %v (want the store beside the config)", named, err)
	}
	// The read-only commands find the same stores from here.
	if out := mustRun(t, "tasks", "list", "--config", named); strings.Contains(out, "t0") {
		t.Errorf("tasks list --config named.yaml listed the other store's tasks:\n%s", out)
	}
	if out := mustRun(t, "tasks", "list", "--config", defaulted); !strings.Contains(out, "t0") || !strings.Contains(out, "t1") {
		t.Errorf("tasks list --config defaulted.yaml: want the tasks of %s beside it, got:\n%s", filepath.Join(cfgDir, "pactum.db"), out)
	}
	mustRun(t, "audit", "verify", "--config", named)

	// Without a configuration the default is ./pactum.db, here: absent, so
	// the read-only command says where it looked and creates nothing.
	_, err := run(t, "tasks", "list")
	want := filepath.Join(elsewhere, "pactum.db")
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--config") {
		t.Errorf("tasks list without a config in an empty directory: err %v, want one naming %s and --config", err, want)
	}
	entries, rerr := os.ReadDir(elsewhere)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if len(entries) != 0 {
		t.Errorf("commands run in %s created %v there", elsewhere, entries)
	}
}

// TestReadOnlyCommandsMissingStore: every read-only command refuses a
// store that does not exist, naming its path, and creates nothing.
func TestReadOnlyCommandsMissingStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "missing.db")
	cfg := filepath.Join(dir, "pactum.yaml")
	if err := os.WriteFile(cfg, []byte("store: sqlite://missing.db\n"+agentsYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range readCommands {
		for _, how := range [][]string{{"--store", "sqlite://" + path}, {"--config", cfg}} {
			code, stdout, stderr := runMain(append(append([]string{}, args...), how...)...)
			if code == 0 || !strings.Contains(stderr, path) || !strings.Contains(stderr, "does not exist") || !strings.Contains(stderr, "--store") {
				t.Errorf("pactum %s %s: exit %d, stderr %q; want a failure naming %s and --store", strings.Join(args, " "), how[0], code, stderr, path)
			}
			if strings.Contains(stdout, "OK") {
				t.Errorf("pactum %s: printed %q on a missing store", strings.Join(args, " "), stdout)
			}
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("read-only commands left %v in %s; want only pactum.yaml", entries, dir)
	}
}

// TestReadOnlyCommandsOnReadOnlyStore: with the file 0444 and its
// directory 0555 the read-only commands work and change no byte of the
// file. As root chmod stops nothing, so there the test checks what still
// holds: the commands work and leave the file as it was.
func TestReadOnlyCommandsOnReadOnlyStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "pactum.db")
	seedStore(t, path, 3)
	before := fileSum(t, path)
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755); _ = os.Chmod(path, 0o644) })
	root := os.Geteuid() == 0
	dsn := "sqlite://" + path

	out := mustRun(t, "tasks", "list", "--store", dsn)
	for _, id := range []string{"t0", "t1", "t2"} {
		if !strings.Contains(out, id) {
			t.Errorf("tasks list on a read-only store: no %s in\n%s", id, out)
		}
	}
	if out := mustRun(t, "tasks", "get", "t1", "--store", dsn); !strings.Contains(out, "t1") {
		t.Errorf("tasks get t1: %s", out)
	}
	mustRun(t, "tasks", "timeline", "t1", "--store", dsn)
	mustRun(t, "tasks", "export", "t1", "--store", dsn)
	mustRun(t, "runs", "list", "--store", dsn)
	if out := mustRun(t, "audit", "verify", "--store", dsn); !strings.HasPrefix(out, "audit chain OK: 9 entries") {
		t.Errorf("audit verify on a read-only store:\n%s", out)
	}
	if after := fileSum(t, path); after != before {
		t.Error("read-only commands changed the store file")
	}
	if !root {
		// A writing command is refused by the file system, not by pactum.
		if _, err := run(t, "tasks", "cancel", "t0", "--store", dsn); err == nil {
			t.Error("tasks cancel succeeded on a 0444 file in a 0555 directory")
		}
		if after := fileSum(t, path); after != before {
			t.Error("tasks cancel changed a 0444 store file")
		}
	}
}

// corrupt writes garbage over pages pages in the middle of the file.
func corrupt(t *testing.T, path string, pages int) {
	t.Helper()
	const pageSize = 4096
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() < int64(4*pages*pageSize) {
		t.Fatalf("store is %d bytes, too small to corrupt %d pages in the middle", fi.Size(), pages)
	}
	off := (fi.Size() / 2 / pageSize) * pageSize
	garbage := bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef, 0x01, 0x7f, 0x00}, pages*pageSize/7+1)[:pages*pageSize]
	if _, err := f.WriteAt(garbage, off); err != nil {
		t.Fatal(err)
	}
}

// TestCorruptStore: a store whose pages are damaged is refused by serve
// before it listens, by tasks list and by audit verify, each naming the
// file and the check.
func TestCorruptStore(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "pactum.db")
	seedStore(t, path, 200)
	corrupt(t, path, 3)
	dsn := "sqlite://" + path

	code, stdout, stderr := runMain("serve", "--store", dsn, "--listen", "127.0.0.1:0")
	if code == 0 || !strings.Contains(stderr, path) || !strings.Contains(stderr, "store is corrupt") || !strings.Contains(stderr, "quick_check") {
		t.Errorf("serve on a corrupt store: exit %d, stderr %q; want a refusal naming %s and quick_check", code, stderr, path)
	}
	if stdout != "" {
		t.Errorf("serve on a corrupt store printed %q (it got as far as announcing agents)", stdout)
	}
	code, stdout, stderr = runMain("tasks", "list", "--store", dsn)
	if code == 0 || !strings.Contains(stderr, path) || !strings.Contains(stderr, "store is corrupt") {
		t.Errorf("tasks list on a corrupt store: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, stderr = runMain("audit", "verify", "--store", dsn)
	if code == 0 || strings.Contains(stdout, "OK") || !strings.Contains(stderr, "store is corrupt") {
		t.Errorf("audit verify on a corrupt store: exit %d, stdout %q, stderr %q; want non-zero and no OK", code, stdout, stderr)
	}
}
