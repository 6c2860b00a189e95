package cli_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pactum/pactum/workflow"
)

// The role bodies of the two definitions: each is the system prompt of
// every request its agent makes, which is how the fake model server
// tells the agents apart.
const (
	plannerBody  = "You are the planner. Turn the task into a numbered plan and end with a handoff."
	reviewerBody = "You are the code reviewer. Check the plan against the task and end with a handoff."
)

// The fake model's answers.
const (
	plannerAnswer = `## HANDOFF: planner -> code-reviewer

### Context
Planned the task.

### Findings
1. Add the --json flag to tasks list.
2. Test it.

### Files Modified
- internal/cli/tasks.go

### Open Questions
None

### Recommendations
- code-reviewer: check each numbered item.`
	// reviewerMalformed lacks "### Open Questions".
	reviewerMalformed = `Looks good to me.

## HANDOFF: code-reviewer -> done

### Context
Reviewed the plan.

### Findings
- Both items are observable.

### Files Modified
None

### Recommendations
None`
	reviewerFixed = `Here is the handoff again, with every section.

## HANDOFF: code-reviewer -> done

### Context
Reviewed the plan.

### Findings
- Both items are observable.

### Files Modified
None

### Open Questions
None

### Recommendations
None

### Test Results
PASS: 2 of 2 plan items have a test.`
)

// priorHandoff is what the code reviewer's message must hold of the
// planner's handoff.
var priorHandoff = []string{
	"# Prior handoffs\n## HANDOFF: planner -> code-reviewer\n",
	"### Findings\n\n1. Add the --json flag to tasks list.\n2. Test it.\n",
	"### Files Modified\n\n- internal/cli/tasks.go\n",
	"### Open Questions\n\nNone\n",
	"### Recommendations\n\n- code-reviewer: check each numbered item.\n",
}

// chatMessage is one message of a chat completions request.
type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// scriptedModel is an OpenAI-compatible chat completions server written
// for this test: no model runs on this machine. It checks each request
// against what the workflow must send (the definition's body as the
// system prompt, the alias's model, the task and the prior handoff in
// the user message, a retry's feedback after the agent's own answer,
// stream as configured), answers from a script (the code reviewer's
// first answer misses a section), and records which call each request
// was.
func scriptedModel(t *testing.T, desc, wantModel string, wantStream bool) (url string, calls func() []string) {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req struct {
			Model    string        `json:"model"`
			Stream   bool          `json:"stream"`
			Messages []chatMessage `json:"messages"`
		}
		if r.URL.Path != "/v1/chat/completions" || json.Unmarshal(b, &req) != nil || len(req.Messages) < 2 {
			t.Errorf("unexpected request %s %s", r.URL.Path, b)
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		if req.Model != wantModel {
			t.Errorf("model %q, want %q (the alias sonnet's target)", req.Model, wantModel)
		}
		if req.Stream != wantStream {
			t.Errorf("stream %v, want %v", req.Stream, wantStream)
		}
		ms := req.Messages
		if ms[0].Role != "system" || ms[1].Role != "user" {
			t.Errorf("messages start %s, %s; want system, user", ms[0].Role, ms[1].Role)
		}
		task := "# Task\n" + desc + "\n"
		var call, answer string
		switch sys, user := ms[0].Content, ms[1].Content; {
		case sys == plannerBody && len(ms) == 2:
			call, answer = "planner", plannerAnswer
			for _, want := range []string{task, "# Prior handoffs\nNone: you are the first agent.", "Expected heading: ## HANDOFF: planner -> code-reviewer"} {
				if !strings.Contains(user, want) {
					t.Errorf("planner's message lacks %q:\n%s", want, user)
				}
			}
		case sys == reviewerBody && len(ms) == 2:
			call, answer = "code-reviewer", reviewerMalformed
			// The prior handoff as pactum renders it: its heading, then
			// each section's title and body.
			for _, want := range append(priorHandoff, task, "Expected heading: ## HANDOFF: code-reviewer -> done") {
				if !strings.Contains(user, want) {
					t.Errorf("code-reviewer's message lacks %q:\n%s", want, user)
				}
			}
		case sys == reviewerBody && len(ms) == 4:
			call, answer = "code-reviewer retry", reviewerFixed
			if !strings.Contains(user, task) || !strings.Contains(user, priorHandoff[0]) {
				t.Errorf("the retry's first user message is not the step's message:\n%s", user)
			}
			if ms[2].Role != "assistant" || ms[2].Content != reviewerMalformed {
				t.Errorf("the retry's third message is %s %q, want the agent's previous answer", ms[2].Role, ms[2].Content)
			}
			if fb := ms[3].Content; ms[3].Role != "user" ||
				!strings.HasPrefix(fb, "Your previous answer did not meet its contract") || !strings.Contains(fb, `section "Open Questions" is missing`) {
				t.Errorf("the retry's last message is %s %q, want the feedback naming the missing section", ms[3].Role, fb)
			}
		default:
			t.Errorf("a request the workflow should not make: %d messages: %+v", len(ms), ms)
			call = fmt.Sprintf("unexpected (%d messages)", len(ms))
		}
		mu.Lock()
		seen = append(seen, call)
		mu.Unlock()
		if answer == "" {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"c","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":%q}}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`, req.Model, answer)
			return
		}
		// Streamed: the answer in chunks of lines, then the finish and
		// usage chunks, as OpenAI-compatible servers send them.
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta, finish, usage string) {
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":%q,\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]%s}\n\n", req.Model, delta, finish, usage)
		}
		for i, line := range strings.SplitAfter(answer, "\n") {
			c, _ := json.Marshal(line)
			role := ""
			if i == 0 {
				role = `"role":"assistant",`
			}
			chunk(fmt.Sprintf(`{%s"content":%s}`, role, c), "null", "")
		}
		chunk("{}", `"stop"`, "")
		fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":%q,\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":5,\"total_tokens\":15}}\n\n", req.Model)
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// TestWorkflowRunOnOpenAIDefinitions runs a configured workflow of two
// agent definitions (planner, code-reviewer; model: sonnet) on an openai
// runtime, streamed and not: the model server gets each definition's
// body as the system prompt and the alias's model, the code reviewer the
// planner's handoff, and after its malformed answer the feedback; the
// run ends SHIP with the code reviewer's second attempt, and the server
// saw exactly three requests, in order.
func TestWorkflowRunOnOpenAIDefinitions(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			t.Parallel()
			desc := "Add a --json flag to tasks list"
			const target = "qwen2.5-coder:32b"
			url, calls := scriptedModel(t, desc, target, stream)
			dir := t.TempDir()
			defs := filepath.Join(dir, "agents")
			if err := os.Mkdir(defs, 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(defs, "planner.md"), "---\nname: planner\ndescription: Plans.\nmodel: sonnet\n---\n\n"+plannerBody+"\n")
			writeFile(t, filepath.Join(defs, "code-reviewer.md"), "---\nname: code-reviewer\ndescription: Reviews.\nmodel: sonnet\ntools: Read, Grep\n---\n"+reviewerBody+"\n")
			cfg := filepath.Join(dir, "pactum.yaml")
			writeFile(t, cfg, fmt.Sprintf(`definitions:
  dirs: [agents]
  runtime: local
  runtimes:
    local:
      type: openai
      retry: {max_attempts: 2, initial_backoff: 10ms}
      openai:
        base_url: %s/v1
        model: base-model
        max_retries: 0
        stream: %v
        models: {sonnet: %q, haiku: small-model}
workflows:
  - name: plan-review
    steps: [planner, code-reviewer]
`, url, stream, target))
			dsn := tempStore(t)
			r := pactumRun(t, dsn, cfg, "plan-review", desc)
			if r.code != 0 {
				t.Fatalf("exit %d, want 0 (SHIP)", r.code)
			}
			if want := []string{"planner", "code-reviewer", "code-reviewer retry"}; !slices.Equal(calls(), want) {
				t.Errorf("the model server saw %q, want %q", calls(), want)
			}
			if !regexp.MustCompile(`(?m)^  planner +valid +handoff valid, 1 attempt, `).MatchString(r.stdout) ||
				!regexp.MustCompile(`(?m)^  code-reviewer +retried +attempt 1: .*section "Open Questions" is missing`).MatchString(r.stdout) ||
				!regexp.MustCompile(`(?m)^  code-reviewer +valid +handoff valid, 2 attempts, `).MatchString(r.stdout) {
				t.Errorf("live lines: want planner valid in 1 attempt, code-reviewer retried then valid in 2")
			}
			rep, _ := printedReport(t, r.stdout)
			if rep.Recommendation != workflow.Ship || !slices.Equal(rep.Agents, []string{"planner", "code-reviewer"}) ||
				!slices.Equal(rep.FilesChanged, []string{"internal/cli/tasks.go"}) || rep.TestResults != "PASS: 2 of 2 plan items have a test." {
				t.Errorf("report: %+v", rep)
			}

			// The stored report: the code reviewer took two attempts, the
			// planner one.
			code, out, errOut := runMain("runs", "report", runID(t, r.stdout), "--json", "--config", cfg, "--store", dsn)
			var stored workflow.Report
			if err := json.Unmarshal([]byte(out), &stored); code != 0 || err != nil {
				t.Fatalf("runs report --json: exit %d, %v: %s%s", code, err, out, errOut)
			}
			attempts := map[string]int{}
			for _, s := range stored.Steps {
				attempts[s.Agent] = s.Attempts
			}
			if attempts["planner"] != 1 || attempts["code-reviewer"] != 2 || len(stored.Steps) != 2 {
				t.Errorf("steps' attempts %v (%d steps)", attempts, len(stored.Steps))
			}
		})
	}
}
