package cli_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestContractCheckExample runs the exact command docs/contracts.md and
// examples/contract.yaml show, from the repository's root, with the real
// binary: the example must stay valid.
func TestContractCheckExample(t *testing.T) {
	t.Parallel()
	bin := pactumBinary(t)
	cmd := exec.Command(bin, "contract", "check", "examples/contract.yaml")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pactum contract check examples/contract.yaml: %v\n%s", err, out)
	}
	if want := "examples/contract.yaml: ok (3 steps, 9 assertions)\n"; string(out) != want {
		t.Fatalf("printed %q, want %q", out, want)
	}
}

const goodContract = `version: "1.0"
id: good
steps:
  - id: write
    agent: echo
    creates: [draft]
    assertions:
      - type: assert
        message: the answer is not empty
        check: {type: regex, pattern: '\S'}
  - id: check
    agent: slow-echo
    dependsOn: [write]
    consumes: [draft]
`

// TestContractCheck: good files print "ok", every error of a bad file is
// printed as FILE:LINE: PATH: message on stderr, and any bad file makes
// the exit status 1; every file is checked.
func TestContractCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	writeFile(t, good, goodContract)
	goodJSON := filepath.Join(dir, "good.json")
	writeFile(t, goodJSON, `{"version": "1.0", "id": "one", "steps": [{"id": "only"}]}`)
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, `version: "1.0"
id: bad
steps:
  - id: build
    agent: echo
    dependsOn: [tset]
  - id: test
    agent: echo
    depends_on: [build]
    consumes: [binary]
    assertions:
      - type: assert
        message: it passed
        check: {type: regexp, pattern: ok}
`)
	missing := filepath.Join(dir, "missing.yaml")

	code, stdout, stderr := runMain("contract", "check", good, bad, goodJSON, missing)
	if code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	wantOut := good + ": ok (2 steps, 1 assertion)\n" + goodJSON + ": ok (1 step, 0 assertions)\n"
	if stdout != wantOut {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout, wantOut)
	}
	wantErr := []string{
		bad + `:6: steps[0].dependsOn[0]: unknown step "tset" (did you mean "test"?)`,
		bad + `:9: steps[1].depends_on: unknown field "depends_on" (did you mean "dependsOn"?)`,
		bad + `:10: steps[1].consumes[0]: no step creates "binary" and no resource declares it as an input`,
		bad + `:14: steps[1].assertions[0].check.type: unknown check type "regexp" (did you mean "regex"?)`,
		missing + ": contract: open " + missing + ": no such file or directory",
		"pactum: 2 of 4 contract files invalid",
	}
	if got := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(wantErr, "\n") {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr, strings.Join(wantErr, "\n"))
	}

	if code, stdout, stderr := runMain("contract", "check", good); code != 0 || stdout != good+": ok (2 steps, 1 assertion)\n" || stderr != "" {
		t.Errorf("a good file alone: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestContractCheckConfig: with --config every step's agent must be a
// configured agent; without it agents are not checked.
func TestContractCheckConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "pactum.yaml")
	writeFile(t, cfg, "agents:\n  - name: echo\n    type: echo\n")
	file := filepath.Join(dir, "c.yaml")
	writeFile(t, file, goodContract)

	mustRun(t, "contract", "check", file)
	code, stdout, stderr := runMain("contract", "check", "--config", cfg, file)
	want := file + `:12: steps[1].agent: agent "slow-echo" is not configured`
	if code != 1 || stdout != "" || !strings.HasPrefix(stderr, want+"\n") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, stdout, stderr, want)
	}

	writeFile(t, cfg, "agents:\n  - name: echo\n    type: echo\n  - name: slow-echo\n    type: echo\n")
	if out := mustRun(t, "contract", "check", "-c", cfg, file); out != file+": ok (2 steps, 1 assertion)\n" {
		t.Errorf("printed %q", out)
	}

	writeFile(t, cfg, "agents:\n  - name: echo\n    tipe: echo\n")
	code, _, stderr = runMain("contract", "check", "--config", cfg, file)
	if code != 1 || !strings.Contains(stderr, cfg+":3:5: agents[0].tipe: unknown field") {
		t.Errorf("a broken config: exit %d, stderr %q", code, stderr)
	}

	if code, _, stderr := runMain("contract", "check"); code != 1 || !strings.Contains(stderr, "requires at least 1 arg(s)") {
		t.Errorf("no files: exit %d, stderr %q", code, stderr)
	}
}

// TestContractCheckMultilineMessage: a compiler's message of several lines
// keeps its continuation lines indented under its FILE:LINE.
func TestContractCheckMultilineMessage(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "c.yaml")
	writeFile(t, file, "version: \"1.0\"\nid: c\nsteps:\n  - id: a\n    assertions:\n      - type: assert\n        message: m\n        check: {type: cel, expression: \"data.x +\"}\n")
	code, _, stderr := runMain("contract", "check", file)
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if code != 1 || len(lines) < 3 || !strings.HasPrefix(lines[0], file+":8: steps[0].assertions[0].check.expression: ") || lines[len(lines)-1] != "pactum: 1 of 1 contract file invalid" {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	for _, l := range lines[1 : len(lines)-1] {
		if !strings.HasPrefix(l, "\t") {
			t.Errorf("continuation line %q is not indented", l)
		}
	}
}
