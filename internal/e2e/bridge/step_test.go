package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/internal/e2e/nodeproc"
)

// bridgeNode serves examples/bridge (pactum.yaml, add.yaml) as they are,
// but for where things are on this machine: the remote A2A agent's URL,
// the absolute paths of server-everything and of add.yaml, a store in
// the test's directory. It returns the node's address and store.
func bridgeNode(t *testing.T, tl tools, remote string) (addr, store string) {
	t.Helper()
	ex, err := filepath.Abs(filepath.Join("..", "..", "..", "examples", "bridge"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(ex, "pactum.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := string(b)
	for _, r := range [][2]string{
		{"url: http://127.0.0.1:9001/agents/echo", "url: " + remote},
		{"../../agent/mcp/testdata/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js", tl.everything},
		{"command: node", "command: " + tl.node},
		{"  - add.yaml", "  - " + filepath.Join(ex, "add.yaml")},
		{"store: sqlite://bridge.db", "store: sqlite://" + filepath.Join(dir, "bridge.db")},
	} {
		if !strings.Contains(cfg, r[0]) {
			t.Fatalf("examples/bridge/pactum.yaml no longer holds %q", r[0])
		}
		cfg = strings.Replace(cfg, r[0], r[1], 1)
	}
	path := filepath.Join(dir, "pactum.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	addr = nodeproc.FreeAddr(t)
	nodeproc.Start(t, tl.pactum, addr, filepath.Join(dir, "node.log"), "serve", "--config", path, "--listen", addr, "--base-url", "http://"+addr)
	return addr, "sqlite://" + filepath.Join(dir, "bridge.db")
}

// verifyOffline exports the run's trace from store (pactum tasks export)
// and checks it against examples/bridge/add.yaml (pactum verify --json),
// without the MCP server: it returns what verify said of step sum, and
// verify's exit status.
func verifyOffline(t *testing.T, tl tools, store, id string) (*contract.VerifiedResult, int) {
	t.Helper()
	trace := filepath.Join(t.TempDir(), "run.json")
	if out, err := exec.Command(tl.pactum, "tasks", "export", id, "--store", store, "--out", trace).CombinedOutput(); err != nil {
		t.Fatalf("tasks export: %v\n%s", err, out)
	}
	cmd := exec.Command(tl.pactum, "verify", "--contract", filepath.Join("..", "..", "..", "examples", "bridge", "add.yaml"), "--trace", trace, "--json")
	out, err := cmd.Output()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var report struct {
		Steps []struct {
			Step     string                   `json:"step"`
			Verified *contract.VerifiedResult `json:"verifiedResult"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("verify --json printed %s: %v", out, err)
	}
	for _, s := range report.Steps {
		if s.Step == "sum" {
			return s.Verified, code
		}
	}
	t.Fatalf("verify --json says nothing of step sum: %s", out)
	return nil, code
}

// run sends numbers as a data part to the contract agent add at addr and
// returns the run's task once it has settled.
func run(t *testing.T, addr string, numbers map[string]any) *a2a.Task {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	card, err := agentcard.DefaultResolver.Resolve(ctx, "http://"+addr+"/agents/add")
	if err != nil {
		t.Fatal(err)
	}
	c, err := a2aclient.NewFromCard(ctx, card)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Destroy()
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(numbers))})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("answer %#v, want a task", res)
	}
	for !task.Status.State.Terminal() {
		if task, err = c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}); err != nil {
			t.Fatal(err)
		}
	}
	return task
}

// verified returns the run's verified results: the run task's
// metadata.pactum.verifiedResult (docs/contracts.md, "Multi-step runs").
func verified(t *testing.T, task *a2a.Task) contract.RunResults {
	t.Helper()
	md, _ := task.Metadata["pactum"].(map[string]any)
	b, err := json.Marshal(md["verifiedResult"])
	if err != nil {
		t.Fatal(err)
	}
	var rr contract.RunResults
	if err := json.Unmarshal(b, &rr); err != nil || len(rr.Steps) == 0 {
		t.Fatalf("verified result %s: %v (task metadata %v)", b, err, task.Metadata)
	}
	return rr
}

func step(rr contract.RunResults, id string) *contract.VerifiedResult {
	for _, s := range rr.Steps {
		if s.Step == id {
			return s.VerifiedResult
		}
	}
	return nil
}

// TestBridgeStep serves examples/bridge with each real remote A2A agent
// as the remote: numbers that fit get-sum's inputSchema are added by the
// real server-everything, behind a passing gate; numbers that do not are
// refused by the bridge step's pre-gate, naming the schema path, and the
// tool never runs (the step was not executed).
func TestBridgeStep(t *testing.T) {
	t.Parallel()
	tl := setup(t)
	remotes := map[string]string{"pactum": remotePactum(t, tl), "js-sdk": jsAgent(t, tl)}
	for name, url := range remotes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			addr, store := bridgeNode(t, tl, url)

			task := run(t, addr, map[string]any{"a": 2, "b": 3})
			rr := verified(t, task)
			if task.Status.State != a2a.TaskStateCompleted || !rr.Passed {
				t.Fatalf("run %s, passed %v: %+v", task.Status.State, rr.Passed, rr)
			}
			sum := step(rr, "sum")
			if sum == nil || !sum.Executed || !sum.Verification.Passed || sum.Tool == nil || sum.Tool.Name != "get-sum" {
				t.Fatalf("step sum: %+v", sum)
			}
			bridged := false
			for _, r := range sum.Verification.PreGate.Results {
				bridged = bridged || r.Check == "bridge" && r.Passed
			}
			if !bridged {
				t.Fatalf("the pre-gate of sum has no passed bridge check: %+v", sum.Verification.PreGate)
			}
			// Offline, without the MCP server: the recorded schema.
			off, code := verifyOffline(t, tl, store, string(task.ID))
			if code != 0 || off == nil || !off.Verification.Passed || !reflect.DeepEqual(off.Verification.PreGate, sum.Verification.PreGate) {
				t.Fatalf("pactum verify (exit %d) says %+v, live said %+v", code, off, sum)
			}

			task = run(t, addr, map[string]any{"a": "2", "b": 3})
			const want = "bridge refused: the arguments do not match the input schema of tool get-sum: /a: got string, want number (schema /properties/a/type)"
			var reason string
			if task.Status.Message != nil {
				for _, p := range task.Status.Message.Parts {
					reason += p.Text()
				}
			}
			if task.Status.State != a2a.TaskStateFailed || !strings.Contains(reason, want) {
				t.Fatalf("run %s: %q, want failed with %q", task.Status.State, reason, want)
			}
			t.Logf("refused: %s", reason)
			rr = verified(t, task)
			sum = step(rr, "sum")
			if rr.Passed || sum == nil || sum.Executed || sum.Verification.PreGate.Passed || !strings.Contains(sum.Error, want) {
				t.Fatalf("step sum after a refusal (the tool must not run): %+v", sum)
			}
			off, code = verifyOffline(t, tl, store, string(task.ID))
			if code == 0 || off == nil || off.Executed || off.Error != sum.Error || !reflect.DeepEqual(off.Verification.PreGate, sum.Verification.PreGate) {
				t.Fatalf("pactum verify (exit %d) says %+v, live said %+v", code, off, sum)
			}
		})
	}
}
