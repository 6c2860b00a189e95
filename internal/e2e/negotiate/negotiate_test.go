// Package negotiate runs contract negotiations between two real pactum
// nodes: node A's CLI proposes a contract to node B's agent, B
// counter-proposes, A accepts (or counters and rejects), and a task on B
// that cites the accepted negotiation is verified against exactly that
// contract; B killed with SIGKILL in the middle of a negotiation loses
// nothing; a tampered accepted contract is refused.
package negotiate

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pactum/pactum/contract/negotiation"
	"github.com/pactum/pactum/internal/e2e/mdblock"
	"github.com/pactum/pactum/internal/e2e/nodeproc"
	_ "github.com/pactum/pactum/store/sqlite" // the "sqlite" database/sql driver
)

// node is one pactum node of a test: its files and its process.
type node struct {
	dir, cfg, addr string
	proc           *nodeproc.Process
}

// nodeB's agent echo has a contract: its answers create a message and
// must not be empty.
const configB = `listen: %[1]s
base_url: http://%[1]s
store: %[3]s
negotiation: {signing_key_file: b.pem}
agents:
  - name: echo
    type: echo
    contract:
      creates: [answer]
      resources: [{id: answer, type: message}]
      assertions:
        - type: assert
          message: the answer is not empty
          check: {type: regex, target: output, pattern: "."}
`

const configA = `listen: %[1]s
base_url: http://%[1]s
store: sqlite://%[2]s/a.db
negotiation: {signing_key_file: a.pem}
agents:
  - name: echo
    type: echo
`

// proposal is A's contract: a step for an agent B does not have, without
// B's own assertion; B counters both.
const proposal = `version: "1.0"
id: greeting
steps:
  - id: greet
    agent: greeter
    assertions:
      - type: assert
        message: says hello
        check: {type: regex, target: output, pattern: hello}
`

type setup struct {
	bin  string
	a, b *node
}

// newSetup starts nodes A and B, B on the store storeB returns for its
// directory (nil: a SQLite file there).
func newSetup(t *testing.T, storeB func(dir string) string) *setup {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs real nodes; skipped with -short")
	}
	if storeB == nil {
		storeB = func(dir string) string { return "sqlite://" + filepath.Join(dir, "b.db") }
	}
	s := &setup{bin: nodeproc.Build(t, nodeproc.Pactum)}
	s.a = s.node(t, "a", configA, nil)
	s.b = s.node(t, "b", configB, storeB)
	if err := os.WriteFile(filepath.Join(s.a.dir, "proposal.yaml"), []byte(proposal), 0o600); err != nil {
		t.Fatal(err)
	}
	return s
}

// node writes a node's configuration and key and starts it; store, when
// not nil, returns the DSN of its store (configB's third verb).
func (s *setup) node(t *testing.T, name, cfg string, store func(dir string) string) *node {
	t.Helper()
	n := &node{dir: t.TempDir(), addr: nodeproc.FreeAddr(t)}
	n.cfg = filepath.Join(n.dir, name+".yaml")
	args := []any{n.addr, n.dir}
	if store != nil {
		args = append(args, store(n.dir))
	}
	if err := os.WriteFile(n.cfg, []byte(fmt.Sprintf(cfg, args...)), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := s.pactum(t, "card", "keygen", filepath.Join(n.dir, name+".pem")); code != 0 {
		t.Fatalf("keygen: %s", out)
	}
	s.start(t, n)
	return n
}

func (s *setup) start(t *testing.T, n *node) {
	t.Helper()
	n.proc = nodeproc.Start(t, s.bin, n.addr, filepath.Join(n.dir, "node.log"), "serve", "--config", n.cfg)
}

// pactum runs the CLI and returns its stdout and exit status.
func (s *setup) pactum(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(s.bin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		t.Logf("pactum %s: exit %d: %s", strings.Join(args, " "), ee.ExitCode(), errOut.String())
		return out.String(), ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), 0
}

// negotiate runs `pactum contract negotiate` as node A against B's agent
// with args, and returns the negotiation it prints (--json) and the exit
// status.
func (s *setup) negotiate(t *testing.T, args ...string) (*negotiation.View, int) {
	t.Helper()
	base := []string{"contract", "negotiate", "http://" + s.b.addr + "/agents/echo", "--config", s.a.cfg, "--json"}
	out, code := s.pactum(t, append(base, args...)...)
	var v negotiation.View
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("negotiate printed %q: %v", out, err)
	}
	return &v, code
}

// cite sends a task to B's agent citing negotiation id and returns the
// task's state, its verified result's contract digest and its status
// text.
func (s *setup) cite(t *testing.T, id, text string) (state, digest, status string) {
	t.Helper()
	meta := "{}"
	if id != "" {
		meta = fmt.Sprintf(`{"pactum.negotiation":%q}`, id)
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":%q,"role":"ROLE_USER","parts":[{"text":%q}]},"metadata":%s,"configuration":{"blocking":true}}}`,
		"m-"+id+"-"+text, text, meta)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+s.b.addr+"/agents/echo/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Result struct {
			Task struct {
				Status struct {
					State   string `json:"state"`
					Message struct {
						Parts []struct {
							Text string `json:"text"`
						} `json:"parts"`
					} `json:"message"`
				} `json:"status"`
				Metadata struct {
					Pactum struct {
						VerifiedResult struct {
							ContractDigest string `json:"contractDigest"`
						} `json:"verifiedResult"`
					} `json:"pactum"`
				} `json:"metadata"`
			} `json:"task"`
		} `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	tk := r.Result.Task
	if len(tk.Status.Message.Parts) > 0 {
		status = tk.Status.Message.Parts[0].Text
	}
	return tk.Status.State, tk.Metadata.Pactum.VerifiedResult.ContractDigest, status
}

func TestTwoNodesNegotiateThenVerify(t *testing.T) {
	s := newSetup(t, nil)
	file := filepath.Join(s.a.dir, "proposal.yaml")

	// Validate first: B says what it would counter.
	out, code := s.pactum(t, "contract", "validate", "http://"+s.b.addr+"/agents/echo", file)
	if code != 1 || !strings.Contains(out, "would counter-propose") || !strings.Contains(out, `change /steps/0/agent "echo"`) {
		t.Fatalf("validate: exit %d\n%s", code, out)
	}

	// Two rounds: A proposes, B counters, A accepts.
	acceptedFile := filepath.Join(s.a.dir, "accepted.json")
	v, code := s.negotiate(t, file, "--accept-counter", "--out", acceptedFile)
	if code != 0 || v.Status != negotiation.StatusAccepted || v.Accepted == nil {
		t.Fatalf("negotiate: exit %d, %+v", code, v)
	}
	acc := v.Accepted
	if acc.Parties[0].URL != "http://"+s.a.addr || acc.Parties[1].URL != "http://"+s.b.addr {
		t.Errorf("parties = %+v", acc.Parties)
	}

	// A task citing it is verified against exactly that digest, and
	// holds the assertion the provider added.
	state, digest, _ := s.cite(t, v.ID, "hello there")
	if state != "TASK_STATE_COMPLETED" || digest != acc.Digest {
		t.Fatalf("citing task: %s, digest %s, want completed under %s", state, digest, acc.Digest)
	}
	// The accepted contract says hello: an answer without it violates it.
	if state, _, status := s.cite(t, v.ID, "good morning"); state != "TASK_STATE_FAILED" || !strings.Contains(status, "says hello") {
		t.Errorf("citing task without hello: %s %q", state, status)
	}
	// Without a citation the agent's own contract holds.
	if state, digest, _ := s.cite(t, "", "good morning"); state != "TASK_STATE_COMPLETED" || digest == acc.Digest {
		t.Errorf("uncited task: %s under %s", state, digest)
	}

	// Three rounds ending in a rejection: A counters B's counter (dropping
	// B's assertion), B counters again (adding it back), A rejects.
	mods := filepath.Join(s.a.dir, "mods.json")
	if err := os.WriteFile(mods, []byte(`[{"op":"remove","path":"/steps/0/assertions/1","reason":"we check answers ourselves"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	r, code := s.negotiate(t, file, "--counter", mods, "--reject", "your assertion is not negotiable for us")
	if code != 1 || r.Status != negotiation.StatusRejected || r.Round != 2 || !strings.Contains(r.Reason, "not negotiable") {
		t.Fatalf("rejected negotiation: exit %d, %+v", code, r)
	}
	if state, _, status := s.cite(t, r.ID, "hello"); state != "TASK_STATE_FAILED" || !strings.Contains(status, "not accepted") {
		t.Errorf("task citing a rejected negotiation: %s %q", state, status)
	}

	// Tampering: a byte of the accepted contract A holds.
	b, _ := os.ReadFile(acceptedFile)
	var held negotiation.Accepted
	if err := json.Unmarshal(bytes.Replace(b, []byte(`hello`), []byte(`hellO`), 1), &held); err != nil {
		t.Fatal(err)
	}
	if _, err := held.Verify(); err == nil {
		t.Error("a tampered copy verified")
	}
	// ... and the one B stores: stop B, change its store, restart.
	s.b.proc.Stop()
	s.b.proc.Wait()
	tamper(t, filepath.Join(s.b.dir, "b.db"), v.ID)
	s.start(t, s.b)
	if state, _, status := s.cite(t, v.ID, "hello again"); state != "TASK_STATE_FAILED" || !strings.Contains(status, "contract_violation") {
		t.Errorf("task citing a tampered negotiation: %s %q", state, status)
	}
	if out, code := s.pactum(t, "contract", "negotiate", "http://"+s.b.addr+"/agents/echo", "--config", s.a.cfg, "--negotiation", v.ID); code != 1 {
		t.Errorf("reading a tampered negotiation: exit %d\n%s", code, out)
	}
}

// tamper swaps the two signatures of negotiation id's accepted contract
// in the store at path.
func tamper(t *testing.T, path, id string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var art string
	if err := db.QueryRowContext(t.Context(), `SELECT artifact FROM task_artifacts WHERE task_id = ? AND artifact_id = ?`, id, negotiation.AcceptedArtifact).Scan(&art); err != nil {
		t.Fatal(err)
	}
	var a struct {
		Parts []struct {
			Data negotiation.Accepted `json:"data"`
		} `json:"parts"`
	}
	if err := json.Unmarshal([]byte(art), &a); err != nil || len(a.Parts) == 0 {
		t.Fatalf("stored artifact %s: %v", art, err)
	}
	p := a.Parts[0].Data.Parties
	swapped := strings.NewReplacer(p[0].Signature, p[1].Signature, p[1].Signature, p[0].Signature).Replace(art)
	if swapped == art {
		t.Fatal("nothing swapped")
	}
	if _, err := db.ExecContext(t.Context(), `UPDATE task_artifacts SET artifact = ? WHERE task_id = ? AND artifact_id = ?`, swapped, id, negotiation.AcceptedArtifact); err != nil {
		t.Fatal(err)
	}
}

func TestKill9MidNegotiationLosesNothing(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { kill9MidNegotiation(t, nil) })
	t.Run("postgres", func(t *testing.T) {
		dsn := nodeproc.PostgresDSN(t)
		kill9MidNegotiation(t, func(string) string { return nodeproc.SchemaDSN(t, dsn, "negotiate_") })
	})
}

// kill9MidNegotiation kills B between its counter-proposal and A's
// answer, B's store being what storeB returns.
func kill9MidNegotiation(t *testing.T, storeB func(dir string) string) {
	s := newSetup(t, storeB)
	file := filepath.Join(s.a.dir, "proposal.yaml")
	// A proposes; B counters; the CLI leaves the counter unanswered.
	v, code := s.negotiate(t, file)
	if code != 3 || v.Status != negotiation.StatusCounter {
		t.Fatalf("proposal: exit %d, %+v", code, v)
	}
	// B dies at once, nothing flushed by a shutdown.
	s.b.proc.Kill()
	s.b.proc.Wait()
	s.start(t, s.b)
	// The negotiation is still there, as it was.
	again, code := s.negotiate(t, "--negotiation", v.ID)
	if code != 3 || again.Status != negotiation.StatusCounter || again.Digest != v.Digest || again.Signature != v.Signature {
		t.Fatalf("after the restart: exit %d, %+v", code, again)
	}
	// The accept completes it.
	done, code := s.negotiate(t, "--negotiation", v.ID, "--accept-counter")
	if code != 0 || done.Status != negotiation.StatusAccepted || done.Accepted.Digest != v.Digest {
		t.Fatalf("accept after the restart: exit %d, %+v", code, done)
	}
	if state, digest, _ := s.cite(t, v.ID, "hello"); state != "TASK_STATE_COMPLETED" || digest != v.Digest {
		t.Errorf("citing task: %s under %s", state, digest)
	}
	// pactum send cites it too.
	out, code := s.pactum(t, "send", "--json", "--negotiation", v.ID, "http://"+s.b.addr+"/agents/echo", "hello from send")
	if code != 0 || !strings.Contains(out, v.Digest) {
		t.Errorf("pactum send --negotiation: exit %d\n%s", code, out)
	}
}

// TestNegotiateDoc runs docs/contracts.md's validation example against a
// real node configured as the doc shows, and compares what it prints.
func TestNegotiateDoc(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a real node; skipped with -short")
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "contracts.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := func(name, lang string) string {
		t.Helper()
		s, err := mdblock.Extract(string(doc), "<!-- "+name+":begin -->", "<!-- "+name+":end -->", lang, "the "+name+" example's")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := &setup{bin: nodeproc.Build(t, nodeproc.Pactum)}
	n := &node{dir: t.TempDir(), addr: nodeproc.FreeAddr(t)}
	n.cfg = filepath.Join(n.dir, "pactum.yaml")
	cfg := fmt.Sprintf("listen: %s\nstore: sqlite://%s/b.db\n", n.addr, n.dir) + block("negotiate-config", "yaml")
	if err := os.WriteFile(n.cfg, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(n.dir, "proposal.yaml"), []byte(block("negotiate-proposal", "yaml")), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := s.pactum(t, "card", "keygen", filepath.Join(n.dir, "b.pem")); code != 0 {
		t.Fatal(out)
	}
	s.start(t, n)
	args := strings.Fields(strings.ReplaceAll(strings.TrimSpace(block("negotiate-validate", "sh")), "127.0.0.1:9000", n.addr))
	if args[0] != "pactum" {
		t.Fatalf("%v: the example runs pactum only", args)
	}
	cmd := exec.Command(s.bin, args[1:]...)
	cmd.Dir = n.dir
	out, _ := cmd.Output()
	if want := block("negotiate-validate-output", "text"); string(out) != want {
		t.Fatalf("the example printed:\n%s\ndocs/contracts.md shows:\n%s", out, want)
	}
}
