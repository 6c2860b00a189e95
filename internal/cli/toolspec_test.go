package cli_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pactum/pactum/toolspec"
)

const acmeV1 = `adapters:
  - adapter_id: acme-mail
    version: 1.0.0
    status: frozen
    operations:
      send:
        description: Send a mail.
        input_schema:
          type: object
          properties:
            to: {type: string}
            body: {type: string}
          required: [to]
`

const acmeToolSpecs = `toolspecs:
  - tool_id: notify
    execution_mode: remote
    adapter_id: acme-mail
    adapter_operation: send
    adapter_contract_version: 1.0.0
  - tool_id: vector-search
    execution_mode: remote
    adapter_id: qdrant-vector
    adapter_operation: search
`

func wantLines(t *testing.T, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("output lacks %q:\n%s", w, got)
		}
	}
}

// TestToolSpecLockVerify walks the CI workflow: lock, verify clean, change
// a frozen contract without a bump (refused, with the ToolSpecs it
// affects), bump it (still a finding until relocked), relock, verify clean.
func TestToolSpecLockVerify(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cat := filepath.Join(dir, "acme.yaml")
	specs := filepath.Join(dir, "toolspecs.yaml")
	lock := filepath.Join(dir, "pactum-toolspec.lock.json")
	writeFile(t, cat, acmeV1)
	writeFile(t, specs, acmeToolSpecs)

	code, stdout, stderr := runMain("toolspec", "lock", "--catalogue", cat, "--out", lock)
	if code != 0 || stdout != lock+": locked 9 adapter contracts\n" {
		t.Fatalf("lock: exit %d\n%s%s", code, stdout, stderr)
	}
	data, err := os.ReadFile(lock)
	if err != nil {
		t.Fatal(err)
	}
	l, err := toolspec.DecodeLock(data)
	if err != nil {
		t.Fatalf("written lock: %v", err)
	}
	if e := l.Adapters["acme-mail"]; e.Version != "1.0.0" || len(e.SHA256) != 64 {
		t.Fatalf("lock entry %+v", e)
	}
	if _, ok := l.Adapters["qdrant-vector"]; !ok {
		t.Fatal("the default catalogue is not in the lock")
	}

	verify := func(extra ...string) (int, string, string) {
		return runMain(append([]string{"toolspec", "verify", "--lock", lock, "--toolspecs", specs}, extra...)...)
	}
	code, stdout, stderr = verify("--catalogue", cat)
	if code != 0 || stdout != lock+": ok (9 adapter contracts match the lock)\n" {
		t.Fatalf("verify clean: exit %d\n%s%s", code, stdout, stderr)
	}

	// The catalogue file left out: its adapter is removed.
	code, stdout, _ = verify()
	if code != 1 {
		t.Fatalf("verify without the catalogue: exit %d", code)
	}
	wantLines(t, stdout,
		"MAJOR acme-mail adapter_removed: adapter \"acme-mail\" (version 1.0.0) removed\n  affects ToolSpecs: notify\n",
		`assertion 5 (contract immutability) failed for adapter "acme-mail": adapter_id: frozen adapter contract "acme-mail" (version 1.0.0) was removed`)

	// A required input added without a bump.
	writeFile(t, cat, strings.Replace(acmeV1, "required: [to]", "required: [to, body]", 1))
	code, stdout, stderr = verify("--catalogue", cat)
	if code != 1 {
		t.Fatalf("verify after a breaking change: exit %d\n%s", code, stdout)
	}
	wantLines(t, stdout,
		"MAJOR acme-mail.send input_required_added: input.body: property \"body\" became required\n  affects ToolSpecs: notify\n",
		`assertion 5 (contract immutability) failed for adapter "acme-mail": version: frozen adapter contract "acme-mail" changed without the version bump it needs`,
		"needs a MAJOR bump, but the version went 1.0.0 → 1.0.0 (NONE); fix: set version: 2.0.0, or undo the change\n  affects ToolSpecs: notify\n")
	wantLines(t, stderr, "2 findings against "+lock, "pactum toolspec lock")
	if strings.Contains(stdout, "vector-search") {
		t.Errorf("an unchanged adapter's ToolSpec is listed:\n%s", stdout)
	}

	// Bumped: the change is still a finding (the lock is stale), the
	// bump is not.
	bumped := strings.Replace(strings.Replace(acmeV1, "required: [to]", "required: [to, body]", 1), "version: 1.0.0", "version: 2.0.0", 1)
	writeFile(t, cat, bumped)
	code, stdout, _ = verify("--catalogue", cat)
	if code != 1 || strings.Contains(stdout, "assertion 5") || !strings.Contains(stdout, "MAJOR acme-mail.send input_required_added") {
		t.Fatalf("verify after a bumped change: exit %d\n%s", code, stdout)
	}

	// Relock: clean again.
	if code, stdout, stderr := runMain("toolspec", "lock", "--catalogue", cat, "--out", lock); code != 0 {
		t.Fatalf("relock: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, _ := verify("--catalogue", cat); code != 0 {
		t.Fatalf("verify after relock: exit %d\n%s", code, stdout)
	}

	// A version bump alone leaves the lock out of date.
	writeFile(t, cat, strings.Replace(bumped, "version: 2.0.0", "version: 2.0.1", 1))
	code, stdout, _ = verify("--catalogue", cat)
	if code != 1 || stdout != "LOCK acme-mail: version 2.0.0 → 2.0.1 with no change to the contract; the lock is out of date\n" {
		t.Fatalf("verify after a bare bump: exit %d\n%q", code, stdout)
	}
}

// TestToolSpecVerifyDefaultChanged: a lock holding an operation the
// default catalogue lacks (the seed's example 2, seen from the other
// side) reports the operation removed and the missing MAJOR bump.
func TestToolSpecVerifyDefaultChanged(t *testing.T) {
	t.Parallel()
	old := toolspec.Default()
	for i, a := range old.Adapters {
		if a.AdapterID == "qdrant-vector" {
			ops := map[string]toolspec.Operation{"drop_all_collections": {Description: "drop everything"}}
			for k, v := range a.Operations {
				ops[k] = v
			}
			old.Adapters[i].Operations = ops
		}
	}
	l, err := toolspec.NewLock(old)
	if err != nil {
		t.Fatal(err)
	}
	data, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(t.TempDir(), "lock.json")
	writeFile(t, lock, string(data))
	code, stdout, _ := runMain("toolspec", "verify", "--lock", lock)
	if code != 1 {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	want := "MAJOR qdrant-vector.drop_all_collections operation_removed: operation \"drop_all_collections\" removed\n" +
		`assertion 5 (contract immutability) failed for adapter "qdrant-vector": version: frozen adapter contract "qdrant-vector" changed without the version bump it needs: ` +
		"operation_removed (operation \"drop_all_collections\" removed) needs a MAJOR bump, but the version went 1.0.0 → 1.0.0 (NONE); fix: set version: 2.0.0, or undo the change\n"
	if stdout != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s", stdout, want)
	}
}

// TestToolSpecVerifyBadLock: a missing or corrupt lock is an error, not a
// pass.
func TestToolSpecVerifyBadLock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.json")
	code, _, stderr := runMain("toolspec", "verify", "--lock", missing)
	if code != 1 || !strings.Contains(stderr, "pactum toolspec lock") {
		t.Fatalf("missing lock: exit %d, %s", code, stderr)
	}
	bad := filepath.Join(dir, "bad.json")
	writeFile(t, bad, `{"version": 1, "adapters": {"x": {"version": "1.0.0", "sha256": "00", "contract": {"adapter_id": "x", "version": "1.0.0", "status": "draft", "operations": {}}}}}`)
	code, _, stderr = runMain("toolspec", "verify", "--lock", bad)
	if code != 1 || !strings.Contains(stderr, bad+": toolspec lock: entry \"x\": sha256 00 does not match") {
		t.Fatalf("tampered lock: exit %d, %s", code, stderr)
	}
	cat := filepath.Join(dir, "broken.yaml")
	writeFile(t, cat, "adapters:\n  - adapter_id: Bad_Id\n    version: 1\n")
	code, _, stderr = runMain("toolspec", "lock", "--catalogue", cat, "--out", filepath.Join(dir, "l.json"))
	if code != 1 || !strings.Contains(stderr, cat+":") {
		t.Fatalf("broken catalogue: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "l.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a lock was written for a broken catalogue: %v", err)
	}
}

// TestToolSpecDiff: classified changes between two catalogue files (or a
// lock and a file), with the ToolSpecs they affect.
func TestToolSpecDiff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	oldF, newF, specs := filepath.Join(dir, "old.yaml"), filepath.Join(dir, "new.yaml"), filepath.Join(dir, "specs.yaml")
	writeFile(t, oldF, acmeV1)
	writeFile(t, specs, acmeToolSpecs)
	writeFile(t, newF, strings.Replace(strings.Replace(acmeV1, "            body: {type: string}\n",
		"            body: {type: string}\n            cc: {type: string}\n", 1), "Send a mail.", "Send one mail.", 1))

	code, stdout, stderr := runMain("toolspec", "diff", oldF, newF, "--toolspecs", specs)
	want := "PATCH acme-mail.send description_changed: description of operation \"send\" changed\n  affects ToolSpecs: notify\n" +
		"MINOR acme-mail.send input_property_added: input.cc: optional property \"cc\" added\n  affects ToolSpecs: notify\n" +
		`assertion 5 (contract immutability) failed for adapter "acme-mail": version: frozen adapter contract "acme-mail" changed without the version bump it needs: ` +
		"input_property_added (input.cc: optional property \"cc\" added) (and 1 more) needs a MINOR bump, but the version went 1.0.0 → 1.0.0 (NONE); fix: set version: 1.1.0, or undo the change\n  affects ToolSpecs: notify\n"
	if code != 0 || stdout != want {
		t.Fatalf("diff: exit %d\n%s\nwant:\n%s\n%s", code, stdout, want, stderr)
	}

	if code, stdout, _ := runMain("toolspec", "diff", oldF, oldF); code != 0 || stdout != "no changes\n" {
		t.Fatalf("diff of a file with itself: exit %d %q", code, stdout)
	}

	// A lock file as OLD.
	lock := filepath.Join(dir, "lock.json")
	if code, out, errOut := runMain("toolspec", "lock", "--catalogue", oldF, "--out", lock); code != 0 {
		t.Fatalf("lock: %d %s %s", code, out, errOut)
	}
	code, stdout, _ = runMain("toolspec", "diff", lock, newF)
	if code != 0 || !strings.Contains(stdout, "MINOR acme-mail.send input_property_added") ||
		!strings.Contains(stdout, "MAJOR qdrant-vector adapter_removed") {
		t.Fatalf("diff lock → file: exit %d\n%s", code, stdout)
	}

	if code, _, stderr := runMain("toolspec", "diff", oldF, filepath.Join(dir, "none.yaml")); code != 1 || !strings.Contains(stderr, "none.yaml") {
		t.Fatalf("diff with a missing file: exit %d %s", code, stderr)
	}
	if code, _, _ := runMain("toolspec", "diff", oldF); code != 1 {
		t.Fatalf("diff with one argument: exit %d", code)
	}
}

// TestToolSpecBinary runs the real binary as CI would: lock, then verify
// after a breaking change, and checks the exit status.
func TestToolSpecBinary(t *testing.T) {
	t.Parallel()
	bin := pactumBinary(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "acme.yaml"), acmeV1)
	run := func(args ...string) (int, string) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), string(out)
		}
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return 0, string(out)
	}
	if code, out := run("toolspec", "lock", "--catalogue", "acme.yaml"); code != 0 || out != "pactum-toolspec.lock.json: locked 9 adapter contracts\n" {
		t.Fatalf("lock: %d %s", code, out)
	}
	if code, out := run("toolspec", "verify", "--catalogue", "acme.yaml"); code != 0 {
		t.Fatalf("verify: %d %s", code, out)
	}
	writeFile(t, filepath.Join(dir, "acme.yaml"), strings.Replace(acmeV1, "            to: {type: string}\n", "            to: {type: integer}\n", 1))
	code, out := run("toolspec", "verify", "--catalogue", "acme.yaml")
	if code != 1 || !strings.Contains(out, "MAJOR acme-mail.send input_type_changed: input.to: type string → integer") {
		t.Fatalf("verify after a breaking change: %d %s", code, out)
	}
}

// TestToolSpecConfig: with --config, lock and verify take the
// configuration's adapters: files (relative to the configuration file)
// and its toolspecs:, as serve does.
func TestToolSpecConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "adapters"), 0o755); err != nil {
		t.Fatal(err)
	}
	cat := filepath.Join(dir, "adapters", "acme.yaml")
	writeFile(t, cat, acmeV1)
	cfg := filepath.Join(dir, "pactum.yaml")
	writeFile(t, cfg, "store: sqlite://p.db\nagents:\n  - {name: e, type: echo, toolspec: notify}\nadapters:\n  - adapters/acme.yaml\n"+acmeToolSpecs)
	lock := filepath.Join(dir, "lock.json")

	code, stdout, stderr := runMain("toolspec", "lock", "--config", cfg, "--out", lock)
	if code != 0 || stdout != lock+": locked 9 adapter contracts\n" {
		t.Fatalf("lock: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runMain("toolspec", "verify", "--config", cfg, "--lock", lock)
	if code != 0 {
		t.Fatalf("verify: exit %d\n%s%s", code, stdout, stderr)
	}
	writeFile(t, cat, strings.Replace(acmeV1, "required: [to]", "required: [to, body]", 1))
	code, stdout, _ = runMain("toolspec", "verify", "--config", cfg, "--lock", lock)
	if code != 1 {
		t.Fatalf("verify after a breaking change: exit %d\n%s", code, stdout)
	}
	wantLines(t, stdout, "MAJOR acme-mail.send input_required_added: input.body: property \"body\" became required\n  affects ToolSpecs: notify\n",
		"needs a MAJOR bump, but the version went 1.0.0 → 1.0.0 (NONE); fix: set version: 2.0.0, or undo the change\n  affects ToolSpecs: notify\n")
}
