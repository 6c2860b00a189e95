package cli_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
	if code != 0 || stdout != lock+": locked 9 adapter contracts (configuration "+cfg+")\n" {
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

// TestToolSpecLockVerifyAgree reproduces the disagreement between lock and
// verify used with and without --config in a directory holding the
// pactum.yaml whose adapters: and toolspecs: the server reads: whichever
// way each is run, they read the same catalogues. Before, a bare `lock`
// left the configuration's catalogues out (and `verify --config` then
// failed on every one of them, "adapter_added"), and a bare `verify`
// after `lock --config` failed on each as "adapter_removed" (MAJOR). Not
// parallel: it changes the working directory.
func TestToolSpecLockVerifyAgree(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "adapters"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "adapters", "acme.yaml"), acmeV1)
	writeFile(t, filepath.Join(dir, "pactum.yaml"), "agents:\n  - {name: e, type: echo, toolspec: notify}\nadapters:\n  - adapters/acme.yaml\n"+acmeToolSpecs)
	t.Chdir(dir)
	const found = "configuration pactum.yaml, found in the current directory"

	// A bare lock reads ./pactum.yaml and says so; verify with --config
	// agrees with it.
	code, lockOut, stderr := runMain("toolspec", "lock")
	if code != 0 {
		t.Fatalf("lock: exit %d\n%s%s", code, lockOut, stderr)
	}
	code, stdout, stderr := runMain("toolspec", "verify", "--config", "pactum.yaml")
	if code != 0 {
		t.Fatalf("verify --config disagrees with a bare lock: exit %d\n%s%s", code, stdout, stderr)
	}
	if lockOut != "pactum-toolspec.lock.json: locked 9 adapter contracts ("+found+")\n" {
		t.Errorf("lock printed %q", lockOut)
	}
	if stdout != "pactum-toolspec.lock.json: ok (9 adapter contracts match the lock; configuration pactum.yaml)\n" {
		t.Errorf("verify --config printed %q", stdout)
	}
	bare, err := os.ReadFile("pactum-toolspec.lock.json")
	if err != nil {
		t.Fatal(err)
	}

	// lock --config, then a bare verify: the same.
	code, lockOut, stderr = runMain("toolspec", "lock", "--config", "pactum.yaml", "--out", "with-config.json")
	if code != 0 {
		t.Fatalf("lock --config: exit %d\n%s%s", code, lockOut, stderr)
	}
	code, stdout, stderr = runMain("toolspec", "verify", "--lock", "with-config.json")
	if code != 0 {
		t.Fatalf("a bare verify disagrees with lock --config: exit %d\n%s%s", code, stdout, stderr)
	}
	if lockOut != "with-config.json: locked 9 adapter contracts (configuration pactum.yaml)\n" {
		t.Errorf("lock --config printed %q", lockOut)
	}
	if stdout != "with-config.json: ok (9 adapter contracts match the lock; "+found+")\n" {
		t.Errorf("bare verify printed %q", stdout)
	}
	withConfig, err := os.ReadFile("with-config.json")
	if err != nil {
		t.Fatal(err)
	}
	if string(bare) != string(withConfig) {
		t.Errorf("the bare lock and lock --config differ:\n%s\n%s", bare, withConfig)
	}

	// verify --live finds the configuration too (it has no mcp agent).
	code, stdout, stderr = runMain("toolspec", "verify", "--live")
	if code != 0 || stdout != "pactum-toolspec.lock.json: ok (0 MCP servers match the lock)\n" {
		t.Fatalf("bare verify --live: exit %d\n%s%s", code, stdout, stderr)
	}

	// A breaking change: both find it, with the configuration's ToolSpecs,
	// and name the lock command that reads the same catalogues.
	writeFile(t, filepath.Join(dir, "adapters", "acme.yaml"), strings.Replace(acmeV1, "required: [to]", "required: [to, body]", 1))
	code, bareOut, bareErr := runMain("toolspec", "verify")
	if code != 1 {
		t.Fatalf("bare verify after a breaking change: exit %d\n%s%s", code, bareOut, bareErr)
	}
	wantLines(t, bareOut, "MAJOR acme-mail.send input_required_added: input.body: property \"body\" became required\n  affects ToolSpecs: notify\n")
	wantLines(t, bareErr, "run `pactum toolspec lock` and commit pactum-toolspec.lock.json")
	code, cfgOut, cfgErr := runMain("toolspec", "verify", "--config", "pactum.yaml")
	if code != 1 || cfgOut != bareOut {
		t.Fatalf("verify --config after a breaking change: exit %d\n%s%s\nwant the bare verify's:\n%s", code, cfgOut, cfgErr, bareOut)
	}
	wantLines(t, cfgErr, "run `pactum toolspec lock --config pactum.yaml` and commit pactum-toolspec.lock.json")
}

// TestToolSpecRelockHint: verify's advice names the lock command with the
// flags verify was given, so that following it writes the lock of the
// catalogues verify read.
func TestToolSpecRelockHint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cat, lock := filepath.Join(dir, "acme.yaml"), filepath.Join(dir, "l.json")
	writeFile(t, cat, acmeV1)
	if code, stdout, stderr := runMain("toolspec", "lock", "--catalogue", cat, "--out", lock); code != 0 {
		t.Fatalf("lock: exit %d\n%s%s", code, stdout, stderr)
	}
	writeFile(t, cat, strings.Replace(acmeV1, "version: 1.0.0", "version: 1.0.1", 1))
	code, _, stderr := runMain("toolspec", "verify", "--catalogue", cat, "--lock", lock)
	advised := "pactum toolspec lock --catalogue " + cat + " --out " + lock
	if want := "run `" + advised + "` and commit " + lock; code != 1 || !strings.Contains(stderr, want) {
		t.Fatalf("exit %d, stderr:\n%s\nwant it to contain %q", code, stderr, want)
	}
	code, stdout, stderr := runMain(strings.Fields(advised)[1:]...)
	if code != 0 {
		t.Fatalf("the advised command: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := runMain("toolspec", "verify", "--catalogue", cat, "--lock", lock); code != 0 {
		t.Fatalf("verify after the advised lock: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestToolSpecCheck: `toolspec check` with no configuration and no
// server checks ToolSpecs files against the default catalogue plus the
// catalogues given (assertions 1 to 4) and each catalogue on its own;
// each problem at FILE:LINE: PATH on stderr, "ok" lines on stdout, exit
// status 1 when any check fails.
func TestToolSpecCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cat, specs := filepath.Join(dir, "acme.yaml"), filepath.Join(dir, "tools.yaml")
	writeFile(t, cat, acmeV1)
	writeFile(t, specs, acmeToolSpecs+`  - tool_id: echo
    execution_mode: remote
    adapter_id: mcp
    adapter_operation: echo
`)

	// Everything holds: the ToolSpec of acme-mail needs acme.yaml; the
	// mcp one is checked where its server is.
	code, stdout, stderr := runMain("toolspec", "check", cat, specs)
	wantOut := cat + ": ok (1 adapter contract)\n" +
		specs + ": ok (3 ToolSpecs; 1 with adapter_id mcp, checked against its server by `pactum toolspec verify --live`)\n"
	if code != 0 || stdout != wantOut || stderr != "" {
		t.Fatalf("exit %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", code, stdout, wantOut, stderr)
	}

	// Without the catalogue, the ToolSpec naming acme-mail fails
	// assertion 2, at its adapter_id's line.
	code, stdout, stderr = runMain("toolspec", "check", specs)
	if code != 1 || stdout != "" {
		t.Fatalf("without the catalogue: exit %d\n%s%s", code, stdout, stderr)
	}
	wantErr := specs + `:4: toolspecs[0].adapter_id: assertion 2 (adapter existence) failed for ToolSpec "notify": adapter_id: adapter "acme-mail" does not exist; fix: use an adapter of the registry (cloudflare-r2, grafana, livekit, loki, meilisearch, prometheus, qdrant-vector, supabase-postgres), or add a catalogue that defines acme-mail` + "\n" +
		"pactum: 1 of 1 file failed the check\n"
	if stderr != wantErr {
		t.Fatalf("stderr:\n%s\nwant:\n%s", stderr, wantErr)
	}

	// Assertions 1, 3 and 4, each at its field's line; every file is
	// checked and reported.
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, `toolspecs:
  - tool_id: no-adapter
    execution_mode: remote
    adapter_operation: search
  - tool_id: wrong-op
    execution_mode: remote
    adapter_id: qdrant-vector
    adapter_operation: drop_all_collections
  - tool_id: new-major
    execution_mode: remote
    adapter_id: acme-mail
    adapter_operation: send
    adapter_contract_version: 2.0.0
  - tool_id: extra-input
    execution_mode: remote
    adapter_id: acme-mail
    adapter_operation: send
    input_schema:
      type: object
      required: [to, cc]
  - tool_id: live-local
    execution_mode: local
    adapter_id: mcp
`)
	code, stdout, stderr = runMain("toolspec", "check", cat, bad, specs)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, stdout, stderr)
	}
	if want := cat + ": ok (1 adapter contract)\n" + specs + ": ok (3 ToolSpecs; 1 with adapter_id mcp, checked against its server by `pactum toolspec verify --live`)\n"; stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout, want)
	}
	wantErr = bad + `:2: toolspecs[0].adapter_id: assertion 1 (required adapter_id) failed for ToolSpec "no-adapter": adapter_id: REMOTE tools MUST specify adapter_id; fix: add adapter_id naming the adapter the tool calls (acme-mail, cloudflare-r2, grafana, livekit, loki, meilisearch, prometheus, qdrant-vector, supabase-postgres), or set execution_mode: local` + "\n" +
		bad + `:8: toolspecs[1].adapter_operation: assertion 3 (adapter operation) failed for ToolSpec "wrong-op": adapter_operation: invalid operation "drop_all_collections" for adapter "qdrant-vector" (v1.0.0); fix: use one of: create_collection, health_check, search, upsert` + "\n" +
		bad + `:13: toolspecs[2].adapter_contract_version: assertion 4 (contract version) failed for ToolSpec "new-major": adapter_contract_version: contract version mismatch: adapter v1.0.0 != ToolSpec v2.0.0; fix: review the mapping against adapter acme-mail v1.0.0 and set adapter_contract_version: 1.0.0` + "\n" +
		bad + `:20: toolspecs[3].input_schema.required[1]: assertion 4 (contract version) failed for ToolSpec "extra-input": input_schema.required[1]: requires input "cc", which operation send of adapter acme-mail v1.0.0 does not accept (its inputs: body, to); fix: remove "cc" from the ToolSpec's input_schema, or map the tool to an operation that takes it` + "\n" +
		bad + `:22: toolspecs[4].execution_mode: assertion 1 (required adapter_id) failed for ToolSpec "live-local": execution_mode: adapter_id "mcp" (the MCP server) is for remote ToolSpecs, this one is "local"; fix: set execution_mode: remote` + "\n" +
		"pactum: 1 of 3 files failed the check\n"
	if stderr != wantErr {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr, wantErr)
	}
}

// TestToolSpecCheckCatalogues: a catalogue is checked on its own (its
// problems at FILE:LINE: PATH) and against the default catalogue and the
// other files (an adapter defined twice); while a catalogue has
// problems, ToolSpecs are not checked against the catalogues (an adapter
// it defines would look missing) and the output says so.
func TestToolSpecCheckCatalogues(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	broken, typo, specs := filepath.Join(dir, "broken.yaml"), filepath.Join(dir, "typo.yaml"), filepath.Join(dir, "tools.yaml")
	writeFile(t, broken, `adapters:
  - adapter_id: acme-mail
    version: "1.0"
    status: thawed
    operations:
      send: {}
`)
	writeFile(t, typo, `adapters:
  - adapter_id: acme-sms
    version: 1.0.0
    status: draft
    operations:
      send:
        inputSchema: {type: object}
`)
	writeFile(t, specs, acmeToolSpecs)
	code, stdout, stderr := runMain("toolspec", "check", broken, typo, specs)
	if code != 1 || stdout != "" {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	want := broken + `:3: adapters[0].version: "1.0" is not a semantic version MAJOR.MINOR.PATCH: invalid semantic version` + "\n" +
		broken + `:4: adapters[0].status: "thawed" is not a status: frozen or draft` + "\n" +
		typo + `:7: adapters[0].operations.send.inputSchema: unknown field "inputSchema" (did you mean "input_schema"?)` + "\n" +
		specs + ": ToolSpecs not checked against the catalogues until their problems are fixed (" + broken + ", " + typo + ")\n" +
		"pactum: 3 of 3 files failed the check\n"
	if stderr != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr, want)
	}

	// An adapter of the default catalogue, or of another file, defined
	// again.
	dup, again := filepath.Join(dir, "dup.yaml"), filepath.Join(dir, "again.yaml")
	writeFile(t, dup, strings.Replace(acmeV1, "acme-mail", "qdrant-vector", 1))
	writeFile(t, filepath.Join(dir, "acme.yaml"), acmeV1)
	writeFile(t, again, "# the same adapter again\n"+acmeV1)
	code, stdout, stderr = runMain("toolspec", "check", filepath.Join(dir, "acme.yaml"), dup, again)
	if code != 1 || stdout != filepath.Join(dir, "acme.yaml")+": ok (1 adapter contract)\n" {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	want = dup + `:2: adapters[0].adapter_id: adapter "qdrant-vector" is defined both in default (built in) and in ` + dup + "; keep one\n" +
		again + `:3: adapters[0].adapter_id: adapter "acme-mail" is defined both in ` + filepath.Join(dir, "acme.yaml") + " and in " + again + "; keep one\n" +
		"pactum: 2 of 3 files failed the check\n"
	if stderr != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr, want)
	}
}

// TestToolSpecCheckUnusable: a file that cannot be read, is not YAML, or
// is neither a catalogue nor a ToolSpecs file (a configuration among
// them) makes the exit status 2, each named; the other files are still
// checked.
func TestToolSpecCheckUnusable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"notyaml.yaml": "toolspecs: [\n",
		"empty.yaml":   "",
		"other.yaml":   "tools: []\n",
		"both.json":    `{"adapters": [], "toolspecs": []}`,
		"pactum.yaml":  "agents:\n  - {name: e, type: echo}\ntoolspecs: []\n",
		"ok.json":      `{"toolspecs": [{"tool_id": "t", "execution_mode": "local"}]}`,
	}
	for name, content := range files {
		writeFile(t, filepath.Join(dir, name), content)
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	code, stdout, stderr := runMain("toolspec", "check", p("missing.yaml"), p("notyaml.yaml"), p("empty.yaml"), p("other.yaml"), p("both.json"), p("pactum.yaml"), p("ok.json"))
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	if want := p("ok.json") + ": ok (1 ToolSpec)\n"; stdout != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
	want := "open " + p("missing.yaml") + ": no such file or directory\n" +
		p("notyaml.yaml") + ":2: invalid YAML: did not find expected node content\n" +
		p("empty.yaml") + ": empty document: neither a catalogue {adapters: [...]} nor a ToolSpecs file {toolspecs: [...]}\n" +
		p("other.yaml") + ": neither a catalogue {adapters: [...]} nor a ToolSpecs file {toolspecs: [...]}\n" +
		p("both.json") + ": has both adapters: and toolspecs:; a catalogue has adapters: only, a ToolSpecs file toolspecs: only\n" +
		p("pactum.yaml") + ": a configuration (it has agents:), not a catalogue or ToolSpecs file; check it with `pactum config check`\n" +
		"pactum: 6 of 7 files cannot be checked\n"
	if stderr != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr, want)
	}

	// Both kinds of failure: exit 2, both counted.
	writeFile(t, p("bad.yaml"), "toolspecs:\n  - {tool_id: x, execution_mode: remote, adapter_id: nope, adapter_operation: y}\n")
	code, _, stderr = runMain("toolspec", "check", p("missing.yaml"), p("bad.yaml"))
	if code != 2 || !strings.HasSuffix(stderr, "pactum: 1 of 2 files cannot be checked, 1 failed\n") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	if code, _, stderr := runMain("toolspec", "check"); code != 1 || !strings.Contains(stderr, "requires at least 1 arg") {
		t.Errorf("no file: exit %d, stderr %s", code, stderr)
	}
}

// TestToolSpecDocsConsole runs every console example of docs/toolspecs.md
// as written, with the real binary, and compares what it prints (standard
// output and standard error, in the order a terminal shows them) with
// the page. Each example runs in a new directory holding the page's files
// so far (the yaml blocks that begin "# file NAME") and, for a command
// that names one, the repository's examples/ file; "$ echo $?" prints the
// previous command's exit status.
func TestToolSpecDocsConsole(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	data, err := os.ReadFile(filepath.Join(root, "docs", "toolspecs.md"))
	if err != nil {
		t.Fatal(err)
	}
	bin := pactumBinary(t)
	files := map[string]string{}
	var block *strings.Builder
	lang, start, consoles := "", 0, 0
	for i, l := range strings.Split(string(data), "\n") {
		switch {
		case block == nil && strings.HasPrefix(l, "```"):
			block, lang, start = &strings.Builder{}, strings.TrimPrefix(l, "```"), i+1
		case block != nil && l == "```":
			text := block.String()
			block = nil
			first, _, _ := strings.Cut(text, "\n")
			switch {
			case lang == "yaml" && strings.HasPrefix(first, "# file "):
				// The whole block, comment included: the lines the
				// page prints are the block's.
				files[strings.TrimPrefix(first, "# file ")] = text
			case lang == "console":
				consoles++
				runConsole(t, bin, root, "docs/toolspecs.md:"+strconv.Itoa(start), text, files)
			}
		case block != nil:
			block.WriteString(l + "\n")
		}
	}
	if consoles < 2 {
		t.Fatalf("ran %d console examples; the page has check's and lock's", consoles)
	}
}

// runConsole runs one console example: "$ pactum ARGS" lines and the
// output each must print.
func runConsole(t *testing.T, bin, root, where, text string, files map[string]string) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		writeFile(t, filepath.Join(dir, name), content)
	}
	type step struct {
		args []string
		want string
	}
	var steps []step
	for _, l := range strings.SplitAfter(text, "\n") {
		if cmd, ok := strings.CutPrefix(l, "$ "); ok {
			steps = append(steps, step{args: strings.Fields(cmd)})
			continue
		}
		if len(steps) == 0 {
			t.Fatalf("%s: output before the first command: %q", where, l)
		}
		steps[len(steps)-1].want += l
	}
	last := 0
	for _, s := range steps {
		var got string
		switch {
		case len(s.args) == 2 && s.args[0] == "echo" && s.args[1] == "$?":
			got = strconv.Itoa(last) + "\n"
		case s.args[0] == "pactum":
			for _, a := range s.args[1:] {
				if strings.HasPrefix(a, "examples/") {
					content, err := os.ReadFile(filepath.Join(root, a))
					if err != nil {
						t.Fatal(err)
					}
					if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(a)), 0o755); err != nil {
						t.Fatal(err)
					}
					writeFile(t, filepath.Join(dir, a), string(content))
				}
			}
			cmd := exec.Command(bin, s.args[1:]...)
			cmd.Dir = dir
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			last = 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				last = ee.ExitCode()
			} else if err != nil {
				t.Fatalf("%s: %v: %v", where, s.args, err)
			}
			got = out.String()
		default:
			t.Fatalf("%s: a command this test does not run: %v", where, s.args)
		}
		if got != s.want {
			t.Errorf("%s: $ %s printed:\n%s\nthe page says:\n%s", where, strings.Join(s.args, " "), got, s.want)
		}
	}
}
