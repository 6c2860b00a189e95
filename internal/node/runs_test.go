package node_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/node"
)

// runExample copies examples/contract-run (a three-step contract on three
// exec agents: shell scripts) into a temporary directory and returns it
// with its configuration, without the store line (the tests set theirs).
func runExample(t *testing.T) (dir, yaml string) {
	t.Helper()
	dir = t.TempDir()
	src := filepath.Join("..", "..", "examples", "contract-run")
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "pactum.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "store:") {
			lines = append(lines, l)
		}
	}
	return dir, strings.Join(lines, "\n")
}

// runResults is the data of a run's verified-results artifact as the wire
// carries it.
type runResults struct {
	Contract string `json:"contract"`
	Passed   bool   `json:"passed"`
	Steps    []struct {
		Step           string          `json:"step"`
		Task           string          `json:"task"`
		Agent          string          `json:"agent"`
		VerifiedResult *verifiedResult `json:"verifiedResult"`
	} `json:"steps"`
}

func a2aRunResults(t *testing.T, tk *a2a.Task) (runResults, string) {
	t.Helper()
	for _, a := range tk.Artifacts {
		if a.Name != "verified-results" {
			continue
		}
		var rr runResults
		var text string
		for _, p := range a.Parts {
			switch c := p.Content.(type) {
			case a2a.Data:
				b, _ := json.Marshal(c.Value)
				if err := json.Unmarshal(b, &rr); err != nil {
					t.Fatal(err)
				}
			case a2a.Text:
				text = string(c)
			}
		}
		return rr, text
	}
	t.Fatalf("no verified-results artifact: %+v", tk.Artifacts)
	return runResults{}, ""
}

// TestContractRunOverA2A: the contract served as the agent "report" runs
// its three steps on the real exec agents over A2A: step 3 consumes step
// 1's data (the plan, given to the reviewer as its argument) and step 2's
// draft; the final artifact holds three verified results.
func TestContractRunOverA2A(t *testing.T) {
	t.Parallel()
	dir, yaml := runExample(t)
	base := startLogged(t, dir, yaml, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := a2aClient(ctx, t, base, "report")
	tk := sendText(ctx, t, c, "the river", nil)
	if tk.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("run: %s %v", tk.Status.State, tk.Metadata)
	}
	rr, text := a2aRunResults(t, tk)
	if rr.Contract != "report" || !rr.Passed || len(rr.Steps) != 3 {
		t.Fatalf("results: %+v", rr)
	}
	for i, want := range []string{"plan", "draft", "review"} {
		s := rr.Steps[i]
		if s.Step != want || s.Agent != "report/"+want || s.VerifiedResult == nil || !s.VerifiedResult.Verification.Passed {
			t.Errorf("step %d: %+v", i, s)
		}
	}
	if !strings.Contains(text, "review: succeeded") {
		t.Errorf("summary: %q", text)
	}
	// The review read the plan: its answer quotes it. (A step's task is
	// read over MCP: over A2A each endpoint shows its own agent's tasks.)
	review := callTool(ctx, t, mcpSession(ctx, t, base), "get_task", map[string]any{"task_id": rr.Steps[2].Task})
	if got, _ := json.Marshal(review["artifacts"]); !strings.Contains(string(got), "approved") || !strings.Contains(string(got), `\"title\":\"On the river\"`) {
		t.Errorf("review's answer: %s", got)
	}
	if review["parent_task_id"] != string(tk.ID) || review["step"] != "review" {
		t.Errorf("review task: %v", review)
	}
	// The run's own verified result is every step's, on the task.
	p, _ := tk.Metadata["pactum"].(map[string]any)
	b, _ := json.Marshal(p["verifiedResult"])
	var onTask runResults
	if err := json.Unmarshal(b, &onTask); err != nil || len(onTask.Steps) != 3 || !onTask.Passed {
		t.Errorf("metadata.pactum.verifiedResult: %s (%v)", b, err)
	}
	// The card: the contract's description, a skill per step; the step
	// agents are not published.
	var card struct {
		Description string `json:"description"`
		Skills      []struct {
			ID string `json:"id"`
		} `json:"skills"`
	}
	if code := getJSON(t, base+"/agents/report/.well-known/agent-card.json", &card); code != http.StatusOK ||
		!strings.HasPrefix(card.Description, "Plans a short report") || len(card.Skills) != 3 || card.Skills[0].ID != "plan" {
		t.Errorf("card (%d): %+v", code, card)
	}
	for _, u := range []string{"/agents/report%2Fplan/.well-known/agent-card.json", "/agents/report/plan/.well-known/agent-card.json"} {
		if code := getJSON(t, base+u, nil); code == http.StatusOK {
			t.Errorf("%s: a step agent's card is published", u)
		}
	}
}

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if v != nil && resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode
}

// TestContractRunStopsOnViolation: the writer breaks its step's contract
// (onViolation fail): the run fails naming the step and the assertion,
// and the review is never spawned.
func TestContractRunStopsOnViolation(t *testing.T) {
	t.Parallel()
	dir, yaml := runExample(t)
	base := startLogged(t, dir, yaml, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := a2aClient(ctx, t, base, "report")
	tk := sendText(ctx, t, c, "a report with no title", nil)
	p, _ := tk.Metadata["pactum"].(map[string]any)
	reason, _ := p["reason"].(string)
	if tk.Status.State != a2a.TaskStateFailed || p["errorCode"] != "contract_violation" {
		t.Fatalf("run: %s %v", tk.Status.State, p)
	}
	for _, want := range []string{"step draft", "the draft starts with a title"} {
		if !strings.Contains(reason, want) {
			t.Errorf("reason %q lacks %q", reason, want)
		}
	}
	b, _ := json.Marshal(p["verifiedResult"])
	var rr runResults
	if err := json.Unmarshal(b, &rr); err != nil {
		t.Fatal(err)
	}
	if rr.Passed || len(rr.Steps) != 2 || rr.Steps[1].Step != "draft" || rr.Steps[1].VerifiedResult == nil ||
		len(rr.Steps[1].VerifiedResult.Verification.PostGate.FailedAssertions) != 1 ||
		rr.Steps[1].VerifiedResult.Verification.PostGate.FailedAssertions[0].Message != "the draft starts with a title" {
		t.Fatalf("verified results: %s", b)
	}

	// Over MCP, run_contract runs the contract to the end and answers
	// the steps' verified results.
	s := mcpSession(ctx, t, base)
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "run_contract", Arguments: map[string]any{"contract": "report", "text": "the sea"}})
	if err != nil || res.IsError {
		t.Fatalf("run_contract: %v %+v", err, res)
	}
	out, _ := res.StructuredContent.(map[string]any)
	vr, _ := out["verified_result"].(map[string]any)
	steps, _ := vr["steps"].([]any)
	if out["state"] != "succeeded" || vr["passed"] != true || len(steps) != 3 {
		t.Fatalf("run_contract: %v", out)
	}
	bad, _ := s.CallTool(ctx, &mcp.CallToolParams{Name: "run_contract", Arguments: map[string]any{"contract": "nope", "text": "x"}})
	if bad == nil || !bad.IsError {
		t.Errorf("run_contract of an unknown contract: %+v", bad)
	}
	agents := callTool(ctx, t, s, "list_agents", map[string]any{})
	for _, a := range agents["agents"].([]any) {
		if name := a.(map[string]any)["name"].(string); strings.Contains(name, "/") {
			t.Errorf("list_agents shows the step agent %s", name)
		}
	}
}

// TestContractsCheck: a contract file that does not load, an id that an
// agent already has, and an actor's action that is neither an agent's
// nor a contract's are reported by Check, placed.
func TestContractsCheck(t *testing.T) {
	t.Parallel()
	dir, yaml := runExample(t)
	if err := os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte("version: \"1.0\"\nid: broken\nsteps:\n  - id: a\n    agent: ghost\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "taken.yaml"), []byte("version: \"1.0\"\nid: planner\nsteps:\n  - {id: a, agent: planner}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A bridge into an MCP tool on an agent that is not an mcp agent.
	if err := os.WriteFile(filepath.Join(dir, "bridge.yaml"), []byte("version: \"1.0\"\nid: bridged\nsteps:\n  - {id: a, agent: planner, metadata: {bridge: mcp}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	yaml += "  - broken.yaml\n  - {file: taken.yaml}\n  - missing.yaml\n  - bridge.yaml\nactors:\n  - {name: ops, actions: [report, nope]}\n"
	cfg, err := config.Parse([]byte("store: \"sqlite://"+filepath.Join(dir, "p.db")+"\"\n"+yaml), filepath.Join(dir, "pactum.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	err = node.Check(context.Background(), cfg, "")
	if err == nil {
		t.Fatal("no errors")
	}
	got := err.Error()
	for _, want := range []string{
		`broken.yaml:5: steps[0].agent: agent "ghost" is not configured`,
		`contracts[2].file: contract id "planner" is already the name of agent "planner"`,
		"contracts[3]: contract: open ",
		`actors[0].actions[1]: unknown action "nope"`,
		`contracts[4]: contract bridged: step "a" is a bridge into an MCP tool (metadata bridge: mcp), but its agent "planner" is of type "exec", not "mcp"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("errors lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, `"report"`) {
		t.Errorf("the contract's id is reported as an unknown action:\n%s", got)
	}
}
