package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/node"
)

// summaryAssertion is the message of the contract's one assertion: the
// feedback a retried agent looks for.
const summaryAssertion = "the answer is a JSON object with a summary"

// contractNode starts a node whose agent "summarize" is an exec agent
// running script (sh) behind an inline contract: its answer must be a JSON
// object with a summary, onViolation policy.
func contractNode(t *testing.T, policy, script string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "summarize.sh"), []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	yaml := fmt.Sprintf(`agents:
  - name: summarize
    type: exec
    retry: {max_attempts: 3, initial_backoff: 10ms, max_backoff: 10ms}
    exec: {command: [sh, summarize.sh]}
    contract:
      onViolation: %s
      assertions:
        - type: assert
          message: %s
          check: {type: schema_match, target: output, schema: {type: object, required: [summary]}}
`, policy, summaryAssertion)
	return startLogged(t, dir, yaml, nil)
}

// a2aClient returns an a2a-go client of the agent at base/agents/name.
func a2aClient(ctx context.Context, t *testing.T, base, name string) *a2aclient.Client {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(ctx, base+"/agents/"+name)
	if err != nil {
		t.Fatalf("card: %v", err)
	}
	c, err := a2aclient.NewFromCard(ctx, card)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

func sendText(ctx context.Context, t *testing.T, c *a2aclient.Client, text string, to *a2a.Task) *a2a.Task {
	t.Helper()
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	if to != nil {
		msg.TaskID, msg.ContextID = to.ID, to.ContextID
	}
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	tk, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("SendMessage answered %T", res)
	}
	return tk
}

// verifiedResult is the part of a verified result the tests read, as the
// wire carries it.
type verifiedResult struct {
	Contract     string `json:"contract"`
	Step         string `json:"step"`
	Executed     bool   `json:"executed"`
	Verification struct {
		Passed   bool `json:"passed"`
		PostGate struct {
			Passed  bool `json:"passed"`
			Results []struct {
				Check   string `json:"check"`
				Message string `json:"message"`
				Passed  bool   `json:"passed"`
				Reason  string `json:"reason"`
			} `json:"results"`
			FailedAssertions []struct {
				Message string `json:"message"`
			} `json:"failedAssertions"`
		} `json:"postGate"`
		Timing struct {
			TotalMs float64 `json:"totalMs"`
		} `json:"timing"`
	} `json:"verification"`
}

// decodeVerified re-decodes v, a verified result as a client decoded it
// (nested maps), into verifiedResult; it fails the test when v is absent.
func decodeVerified(t *testing.T, where string, v any) verifiedResult {
	t.Helper()
	if v == nil {
		t.Fatalf("%s: no verified result", where)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var vr verifiedResult
	if err := json.Unmarshal(b, &vr); err != nil {
		t.Fatalf("%s: %v: %s", where, err, b)
	}
	if vr.Contract != "summarize" || vr.Step != "summarize" || vr.Verification.Timing.TotalMs <= 0 {
		t.Errorf("%s: verified result %s", where, b)
	}
	return vr
}

// a2aVerified returns metadata.pactum.verifiedResult of an A2A task.
func a2aVerified(t *testing.T, tk *a2a.Task) verifiedResult {
	t.Helper()
	p, _ := tk.Metadata["pactum"].(map[string]any)
	return decodeVerified(t, "A2A task metadata.pactum.verifiedResult", p["verifiedResult"])
}

func mcpSession(ctx context.Context, t *testing.T, base string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = session.Close() })
	return session
}

func callTool(ctx context.Context, t *testing.T, s *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %+v", name, err, res)
	}
	out, ok := res.StructuredContent.(map[string]any)
	if !ok {
		t.Fatalf("%s: structured content %T", name, res.StructuredContent)
	}
	return out
}

// TestContractViolationFails: an answer that breaks the contract's schema
// with onViolation fail fails the task with contract_violation; its
// verified result, with the failed assertion and the reason, is read over
// A2A (task and artifact metadata) and over MCP (get_task).
func TestContractViolationFails(t *testing.T) {
	t.Parallel()
	base := contractNode(t, "fail", "cat >/dev/null\necho 'this is not JSON'\n")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := a2aClient(ctx, t, base, "summarize")
	tk := sendText(ctx, t, c, "summarize the report", nil)
	p, _ := tk.Metadata["pactum"].(map[string]any)
	if tk.Status.State != a2a.TaskStateFailed || p["errorCode"] != "contract_violation" {
		t.Fatalf("state %s, metadata.pactum %v", tk.Status.State, p)
	}
	if reason, _ := p["reason"].(string); !strings.Contains(reason, summaryAssertion) {
		t.Errorf("reason %q does not name the failed assertion", reason)
	}
	for _, vr := range []verifiedResult{a2aVerified(t, tk), a2aVerified(t, getTask(ctx, t, c, tk.ID))} {
		if !vr.Executed || vr.Verification.Passed || vr.Verification.PostGate.Passed ||
			len(vr.Verification.PostGate.FailedAssertions) != 1 || vr.Verification.PostGate.FailedAssertions[0].Message != summaryAssertion {
			t.Errorf("A2A verified result %+v", vr)
		}
		if r := vr.Verification.PostGate.Results; len(r) != 1 || r[0].Passed || r[0].Check != "schema_match" || r[0].Reason == "" {
			t.Errorf("A2A post-gate results %+v: want the failed schema_match with its reason", r)
		}
	}

	s := mcpSession(ctx, t, base)
	out := callTool(ctx, t, s, "get_task", map[string]any{"task_id": string(tk.ID)})
	if out["state"] != "failed" || out["error_code"] != "contract_violation" {
		t.Fatalf("get_task: %v", out)
	}
	vr := decodeVerified(t, "get_task verified_result", out["verified_result"])
	if vr.Verification.Passed || len(vr.Verification.PostGate.FailedAssertions) != 1 ||
		vr.Verification.PostGate.FailedAssertions[0].Message != summaryAssertion || vr.Verification.PostGate.Results[0].Reason == "" {
		t.Errorf("MCP verified result %+v", vr)
	}
}

func getTask(ctx context.Context, t *testing.T, c *a2aclient.Client, id a2a.TaskID) *a2a.Task {
	t.Helper()
	tk, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
	if err != nil {
		t.Fatalf("GetTask: %v", err)
	}
	return tk
}

// retryScript answers valid JSON only when its input (stdin) carries the
// feedback naming the failed assertion.
const retryScript = `input=$(cat)
case "$input" in
  *"` + summaryAssertion + `"*) echo '{"summary": "fixed after feedback"}' ;;
  *) echo 'this is not JSON' ;;
esac
`

// TestContractRetryWithFeedback: onViolation retry runs the agent again
// with the failed assertion as its input; the exec agent reads it on stdin
// and answers valid JSON, so the task succeeds on its second attempt.
func TestContractRetryWithFeedback(t *testing.T) {
	t.Parallel()
	base := contractNode(t, "retry", retryScript)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := a2aClient(ctx, t, base, "summarize")
	tk := sendText(ctx, t, c, "summarize the report", nil)
	p, _ := tk.Metadata["pactum"].(map[string]any)
	if tk.Status.State != a2a.TaskStateCompleted || fmt.Sprint(p["attempt"]) != "2" {
		t.Fatalf("state %s attempt %v, want completed on attempt 2 (metadata %v)", tk.Status.State, p["attempt"], p)
	}
	if len(tk.Artifacts) != 1 || !strings.Contains(partsText(tk.Artifacts[0].Parts), "fixed after feedback") {
		t.Fatalf("artifacts %+v", tk.Artifacts)
	}
	vr := a2aVerified(t, tk)
	if !vr.Verification.Passed || !vr.Verification.PostGate.Passed {
		t.Errorf("verified result of the second attempt %+v", vr)
	}
	ap, _ := tk.Artifacts[0].Metadata["pactum"].(map[string]any)
	decodeVerified(t, "artifact metadata.pactum.verifiedResult", ap["verifiedResult"])
	// The feedback is in the history, as the user turn the second attempt got.
	var users []string
	for _, m := range tk.History {
		if m.Role == a2a.MessageRoleUser {
			users = append(users, partsText(m.Parts))
		}
	}
	if len(users) != 2 || !strings.Contains(users[1], summaryAssertion) {
		t.Errorf("user turns %q: want the input, then the feedback naming the assertion", users)
	}
}

// escalateScript answers valid JSON only when its input is the caller's
// answer to the escalated violation.
const escalateScript = `input=$(cat)
case "$input" in
  *"use JSON"*) echo '{"summary": "as you asked"}' ;;
  *) echo 'this is not JSON' ;;
esac
`

// TestContractEscalateResumes: onViolation escalate pauses the task in
// input_required with the violation as its question; an answer resumes
// it, over A2A (a message to the task) and over MCP (continue_task).
func TestContractEscalateResumes(t *testing.T) {
	t.Parallel()
	base := contractNode(t, "escalate", escalateScript)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	t.Run("A2A", func(t *testing.T) {
		c := a2aClient(ctx, t, base, "summarize")
		tk := sendText(ctx, t, c, "summarize the report", nil)
		if tk.Status.State != a2a.TaskStateInputRequired || tk.Status.Message == nil ||
			!strings.Contains(partsText(tk.Status.Message.Parts), summaryAssertion) {
			t.Fatalf("state %s, question %+v: want input_required asking about the violation", tk.Status.State, tk.Status.Message)
		}
		if vr := a2aVerified(t, tk); vr.Verification.Passed {
			t.Errorf("verified result while waiting %+v", vr)
		}
		done := sendText(ctx, t, c, "please use JSON", tk)
		if done.ID != tk.ID || done.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("after the answer: %s %s", done.ID, done.Status.State)
		}
		if vr := a2aVerified(t, done); !vr.Verification.Passed {
			t.Errorf("verified result after the answer %+v", vr)
		}
	})
	t.Run("MCP", func(t *testing.T) {
		s := mcpSession(ctx, t, base)
		out := callTool(ctx, t, s, "submit_task", map[string]any{"agent": "summarize", "text": "summarize the report", "wait": true})
		if out["state"] != "input_required" || !strings.Contains(fmt.Sprint(out["status_message"]), summaryAssertion) {
			t.Fatalf("submit_task: %v", out)
		}
		if vr := decodeVerified(t, "submit_task verified_result", out["verified_result"]); vr.Verification.Passed {
			t.Errorf("verified result while waiting %+v", vr)
		}
		id := out["task_id"].(string)
		out = callTool(ctx, t, s, "continue_task", map[string]any{"task_id": id, "text": "please use JSON", "wait": true})
		if out["state"] != "succeeded" {
			t.Fatalf("continue_task: %v", out)
		}
		out = callTool(ctx, t, s, "get_task", map[string]any{"task_id": id})
		if vr := decodeVerified(t, "get_task verified_result", out["verified_result"]); !vr.Verification.Passed {
			t.Errorf("verified result after the answer %+v", vr)
		}
	})
}

// TestNoContractNoVerifiedResult: an agent without a contract answers no
// verified result.
func TestNoContractNoVerifiedResult(t *testing.T) {
	t.Parallel()
	base := startServer(t, "agents:\n  - name: echo\n    type: echo\n")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tk := sendText(ctx, t, a2aClient(ctx, t, base, "echo"), "hi", nil)
	if p, _ := tk.Metadata["pactum"].(map[string]any); p["verifiedResult"] != nil {
		t.Errorf("echo task has a verified result: %v", p)
	}
	out := callTool(ctx, t, mcpSession(ctx, t, base), "get_task", map[string]any{"task_id": string(tk.ID)})
	if _, ok := out["verified_result"]; ok {
		t.Errorf("get_task of an echo task has a verified_result: %v", out)
	}
}

// TestCheckContracts: config check reports bad contracts where they are:
// an inline contract's unknown fields and check types at its file:line,
// a contract file that is not there at `file`, an unknown step at `step`.
func TestCheckContracts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ok.yaml"), []byte(`version: "1.0"
id: reports
steps:
  - id: write
    assertions:
      - type: assert
        message: says ok
        check: {type: contains, value: ok}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	src := `agents:
  - name: a
    type: echo
    contract:
      onViolation: retry
      assertions:
        - type: assert
          mesage: typo
          check: {type: regex, pattern: "x"}
  - name: b
    type: echo
    contract:
      assertions:
        - type: assert
          message: m
          check: {type: no_such_check}
  - name: c
    type: echo
    contract: {file: missing.yaml, step: write}
  - name: d
    type: echo
    contract: {file: ok.yaml, step: read}
  - name: e
    type: echo
    contract: {file: ok.yaml, step: write}
  - name: f
    type: echo
    contract: {file: ok.yaml, nodes: true}
  - name: h
    type: echo
    contract: {remote: "sha256:0000000000000000000000000000000000000000000000000000000000000000"}
  - name: g
    type: langgraph
    langgraph: {url: "http://127.0.0.1:1", assistant: x}
    contract: {file: ok.yaml, nodes: true}
`
	cfg, err := config.Parse([]byte(src), filepath.Join(dir, "pactum.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	err = node.Check(context.Background(), cfg, "")
	if err == nil {
		t.Fatal("Check passed")
	}
	got := err.Error()
	for _, want := range []string{
		"pactum.yaml:8:11: agents[0].contract.assertions[0].mesage: unknown field \"mesage\"",
		`agents[1].contract.assertions[0].check.type: unknown check type "no_such_check"`,
		"pactum.yaml:19:22: agents[2].contract.file: ",
		"missing.yaml",
		"pactum.yaml:22:37: agents[3].contract.step: ",
		`no step "read"`,
		`pactum.yaml:28:38: agents[5].contract.nodes: agent type "echo" does not report the nodes of a graph; nodes: true needs a runtime that does (langgraph)`,
		`agents[6].contract.remote: agent type "echo" has no remote card; remote pins the contract a remote A2A agent's card declares (type a2a)`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Check's errors lack %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "no_such_check"); n != 1 {
		t.Errorf("the unknown check type is reported %d times, want once:\n%s", n, got)
	}
	for _, fine := range []string{"agents[4]", "agents[7]"} {
		if strings.Contains(got, fine) {
			t.Errorf("the contract of %s is fine, but:\n%s", fine, got)
		}
	}
}

// partsText joins the text parts of A2A parts.
func partsText(ps a2a.ContentParts) string {
	var out []string
	for _, p := range ps {
		if p != nil && p.Text() != "" {
			out = append(out, p.Text())
		}
	}
	return strings.Join(out, "\n")
}
