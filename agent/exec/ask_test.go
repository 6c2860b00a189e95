package exec_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/agenttest"
	_ "github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
)

const askSettings = "command: [./ask.sh]\noutput: json\nanswer: /output\ninput_required: /needs_input"

// TestInputRequiredTurns drives ask.sh through two turns the way the core
// does: the first asks, the second gets the caller's reply as its message.
func TestInputRequiredTurns(t *testing.T) {
	t.Parallel()
	b := setup(t, askSettings)
	req := agenttest.Request("What's the weather?")
	res, err := b.agent.Invoke(b.ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !res.InputRequired || res.Message == nil || res.Message.Text() != "Which city?" || res.Message.Role != task.RoleAgent {
		t.Fatalf("first turn = %+v (message %+v), want a question", res, res.Message)
	}
	if len(res.Artifacts) != 0 {
		t.Errorf("a question came with artifacts: %+v", res.Artifacts)
	}

	reply := task.Message{ID: "msg-2", Role: task.RoleUser, TaskID: "task-1", ContextID: "ctx-1", Parts: []task.Part{task.TextPart("in Paris")}}
	req.Attempt = 2
	req.History = append(req.History, *res.Message, reply)
	req.Message = reply
	res, err = b.agent.Invoke(b.ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.InputRequired {
		t.Fatal("the second turn asked again")
	}
	if got := agenttest.ResultText(t, res); got != "Sunny in Paris" || res.Message.Text() != "Sunny in Paris" {
		t.Errorf("second turn = %q, message %q", got, res.Message.Text())
	}
}

func TestInputRequiredValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, out string
		// ask: the result asks; err: a permanent error containing it.
		ask       bool
		kind      task.PartKind
		text, err string
	}{
		{name: "true", out: `{"output":"Which city?","needs_input":true}`, ask: true, kind: task.PartText, text: "Which city?"},
		{name: "true with data", out: `{"output":{"choose":["Paris","Rome"]},"needs_input":true}`, ask: true, kind: task.PartData, text: `{"choose":["Paris","Rome"]}`},
		{name: "false", out: `{"output":"Sunny","needs_input":false}`, kind: task.PartText, text: "Sunny"},
		{name: "null", out: `{"output":"Sunny","needs_input":null}`, kind: task.PartText, text: "Sunny"},
		{name: "missing", out: `{"output":"Sunny"}`, kind: task.PartText, text: "Sunny"},
		{name: "string", out: `{"output":"q","needs_input":"yes"}`, err: `input_required pointer "/needs_input" names a string`},
		{name: "number", out: `{"output":"q","needs_input":1}`, err: `input_required pointer "/needs_input" names a number`},
		{name: "object", out: `{"output":"q","needs_input":{"v":true}}`, err: `input_required pointer "/needs_input" names an object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, "command: [./args.sh, "+strconv.Quote(tt.out)+"]\ninput: none\noutput: json\nanswer: /output\ninput_required: /needs_input")
			res, err := b.agent.Invoke(b.ctx, agenttest.Request(""))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "command ./args.sh") || !task.IsPermanent(err) {
					t.Fatalf("err = %v, want a permanent error naming the command and containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.InputRequired != tt.ask {
				t.Fatalf("InputRequired = %v, want %v", res.InputRequired, tt.ask)
			}
			var p task.Part
			if tt.ask {
				if len(res.Artifacts) != 0 {
					t.Errorf("a question came with artifacts: %+v", res.Artifacts)
				}
				p = res.Message.Parts[0]
			} else {
				p = res.Artifacts[0].Parts[0]
			}
			got := p.Text
			if p.Kind == task.PartData {
				got = string(p.Data)
			}
			if p.Kind != tt.kind || got != tt.text {
				t.Errorf("part = %s %q, want %s %q", p.Kind, got, tt.kind, tt.text)
			}
		})
	}
}

// TestInputRequiredCoordinator runs ask.sh as the agent of a Coordinator on
// a SQLite store: the task waits in input_required with the question,
// Continue delivers the answer, and the next turn succeeds. An agent whose
// flag is not a boolean fails its task on the first attempt.
func TestInputRequiredCoordinator(t *testing.T) {
	t.Parallel()
	coord := newCoordinator(t, map[string]string{
		"weather": askSettings,
		"broken":  "command: [./args.sh, '{\"output\":\"q\",\"needs_input\":\"yes\"}']\ninput: none\noutput: json\nanswer: /output\ninput_required: /needs_input",
	})
	ctx, cancel := context.WithTimeout(t.Context(), stuck)
	defer cancel()

	tk := agenttest.Run(t, ctx, coord, "weather", task.TextPart("What's the weather?"))
	if tk.State != task.StateInputRequired || tk.StatusMessage.Text() != "Which city?" {
		t.Fatalf("first turn: task %s (%s: %s), status %+v; want input_required asking for the city", tk.State, tk.ErrorCode, tk.Reason, tk.StatusMessage)
	}
	if len(tk.Artifacts) != 0 {
		t.Errorf("first turn: artifacts = %+v, want none", tk.Artifacts)
	}

	tk = agenttest.Answer(t, ctx, coord, tk.ID, "in Paris")
	if tk.State != task.StateSucceeded || tk.StatusMessage.Text() != "Sunny in Paris" {
		t.Fatalf("second turn: task %s (%s: %s), status %+v; want succeeded", tk.State, tk.ErrorCode, tk.Reason, tk.StatusMessage)
	}
	if len(tk.Artifacts) != 1 || agenttest.PartsText(tk.Artifacts[0].Parts) != "Sunny in Paris" {
		t.Errorf("second turn: artifacts = %+v", tk.Artifacts)
	}
	var turns []string
	for _, m := range tk.History {
		turns = append(turns, string(m.Role)+": "+m.Text())
	}
	want := []string{"user: What's the weather?", "agent: Which city?", "user: in Paris", "agent: Sunny in Paris"}
	if strings.Join(turns, "|") != strings.Join(want, "|") {
		t.Errorf("history = %q, want %q", turns, want)
	}

	tk = agenttest.Run(t, ctx, coord, "broken", task.TextPart("x"))
	if tk.State != task.StateFailed || tk.Attempt != 1 || !strings.Contains(tk.Reason, `input_required pointer "/needs_input" names a string`) {
		t.Errorf("broken task = %s after %d attempts (%s), want failed after 1 naming the pointer", tk.State, tk.Attempt, tk.Reason)
	}
}

// newCoordinator starts a Coordinator on a fresh SQLite store with one exec
// agent per entry of agents (name to YAML settings, testdata as the
// configuration's directory).
func newCoordinator(t *testing.T, agents map[string]string) *task.Coordinator {
	t.Helper()
	retry := task.RetryPolicy{MaxAttempts: 3, InitialBackoff: 10 * time.Millisecond}
	var specs []task.AgentSpec
	for name, settings := range agents {
		specs = append(specs, task.AgentSpec{Name: name, Runner: agent.Runner(setup(t, settings).agent), Timeout: stuck, Retry: retry})
	}
	return agenttest.Coordinator(t, "exec-test", specs...)
}
