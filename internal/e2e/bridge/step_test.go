package bridge

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
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
// the test's directory. It returns the node's address.
func bridgeNode(t *testing.T, tl tools, remote string) string {
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
	addr := nodeproc.FreeAddr(t)
	nodeproc.Start(t, tl.pactum, addr, filepath.Join(dir, "node.log"), "serve", "--config", path, "--listen", addr, "--base-url", "http://"+addr)
	return addr
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
			addr := bridgeNode(t, tl, url)

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
		})
	}
}
