package webhook_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/agenttest"
	_ "github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
)

func TestInputRequired(t *testing.T) {
	t.Parallel()
	const ask = "input_required: /needs_input"
	tests := []struct {
		name, ctype, body, settings string
		// question: the result asks with want; otherwise the answer
		// artifact holds want.
		question bool
		kind     task.PartKind
		want     string
	}{
		{"object", "application/json", `{"output":"Which city?","needs_input":true}`, ask, true, task.PartText, "Which city?"},
		{"n8n item list", "application/json", `[{"output":"Which city?","needs_input":true}]`, ask, true, task.PartText, "Which city?"},
		{"no type, JSON", "", `[{"output":"Which city?","needs_input":true}]`, ask, true, task.PartText, "Which city?"},
		{"data question", "application/json", `{"output":{"choose":["Paris","Rome"]},"needs_input":true}`, ask, true, task.PartData, `{"choose":["Paris","Rome"]}`},
		{"whole document", "application/json", `{"question":"Which city?","needs_input":true}`, ask, true, task.PartData, `{"question":"Which city?","needs_input":true}`},
		{"answer pointer", "application/json", `{"reply":{"text":"Which city?","ask":true}}`, "answer: /reply/text\ninput_required: /reply/ask", true, task.PartText, "Which city?"},
		// With an answer pointer both pointers apply to the document as is.
		{"answer pointer, item list", "application/json", `[{"text":"Which city?","ask":true}]`, "answer: /0/text\ninput_required: /0/ask", true, task.PartText, "Which city?"},
		{"answer pointer, item list, item pointer", "application/json", `[{"text":"Sunny","ask":true}]`, "answer: /0/text\ninput_required: /ask", false, task.PartText, "Sunny"},
		{"false", "application/json", `[{"output":"Sunny","needs_input":false}]`, ask, false, task.PartText, "Sunny"},
		{"null", "application/json", `{"output":"Sunny","needs_input":null}`, ask, false, task.PartText, "Sunny"},
		{"missing", "application/json", `{"output":"Sunny"}`, ask, false, task.PartText, "Sunny"},
		{"not set", "application/json", `{"output":"Sunny","needs_input":true}`, "", false, task.PartText, "Sunny"},
		{"two items", "application/json", `[{"output":"a","needs_input":true},{"output":"b"}]`, ask, false, task.PartData, `[{"output":"a","needs_input":true},{"output":"b"}]`},
		{"plain text", "text/plain", `{"output":"Which city?","needs_input":true}`, ask, false, task.PartText, `{"output":"Which city?","needs_input":true}`},
		// Streamed responses never ask: each event is a piece of the answer.
		{"ndjson", "application/x-ndjson", `{"content":"Which city?","needs_input":true}` + "\n", ask, false, task.PartText, "Which city?"},
		{"json stream", "application/json", `{"content":"Which ","needs_input":true}{"content":"city?","needs_input":true}`, ask, false, task.PartText, "Which city?"},
		{"sse", "text/event-stream", "data: {\"content\":\"Which city?\",\"needs_input\":true}\n\n", ask, false, task.PartText, "Which city?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, reply(tt.ctype, tt.body), tt.settings)
			res := b.invoke(t, "What's the weather?")
			if res.InputRequired != tt.question {
				t.Fatalf("InputRequired = %v, want %v (result %+v)", res.InputRequired, tt.question, res)
			}
			var p task.Part
			if tt.question {
				if len(res.Artifacts) != 0 {
					t.Errorf("a question came with artifacts: %+v", res.Artifacts)
				}
				if res.Message == nil || res.Message.Role != task.RoleAgent || len(res.Message.Parts) != 1 {
					t.Fatalf("question = %+v, want an agent message with one part", res.Message)
				}
				p = res.Message.Parts[0]
			} else {
				if len(res.Artifacts) != 1 || len(res.Artifacts[0].Parts) != 1 {
					t.Fatalf("result = %+v, want one artifact", res)
				}
				p = res.Artifacts[0].Parts[0]
			}
			got := p.Text
			if p.Kind == task.PartData {
				got = string(p.Data)
				if !jsonSame(t, got, tt.want) {
					t.Errorf("data = %s, want %s", got, tt.want)
				}
			} else if got != tt.want {
				t.Errorf("text = %q, want %q", got, tt.want)
			}
			if p.Kind != tt.kind {
				t.Errorf("part kind = %s, want %s", p.Kind, tt.kind)
			}
		})
	}
}

func jsonSame(t *testing.T, a, b string) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal([]byte(a), &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return string(ja) == string(jb)
}

func TestInputRequiredWrongType(t *testing.T) {
	t.Parallel()
	for body, typ := range map[string]string{
		`[{"output":"q","needs_input":"yes"}]`: "a string",
		`{"output":"q","needs_input":1}`:       "a number",
		`{"output":"q","needs_input":{}}`:      "an object",
		`{"output":"q","needs_input":[true]}`:  "an array",
	} {
		b := setup(t, reply("application/json", body), "input_required: /needs_input")
		_, err := b.agent.Invoke(b.ctx, agenttest.Request("q"))
		want := `input_required pointer "/needs_input" names ` + typ
		if err == nil || !strings.Contains(err.Error(), want) || !task.IsPermanent(err) {
			t.Errorf("%s: err = %v, want a permanent error containing %q", body, err, want)
		}
		if n := b.calls.Load(); n != 1 {
			t.Errorf("%s: %d calls, want 1 (no retry)", body, n)
		}
	}
}

// TestInputRequiredCoordinator runs an n8n-like flow as the agent of a
// Coordinator on a SQLite store: the first call asks for the city, the task
// waits in input_required, Continue sends the caller's answer as the next
// call's chatInput (same sessionId), and the task succeeds.
func TestInputRequiredCoordinator(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var inputs, sessions []string
	b := setup(t, func(w http.ResponseWriter, r *http.Request) {
		var in struct{ ChatInput, SessionID string }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			t.Error(err)
		}
		mu.Lock()
		inputs, sessions = append(inputs, in.ChatInput), append(sessions, in.SessionID)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if city, ok := strings.CutPrefix(in.ChatInput, "in "); ok {
			_ = json.NewEncoder(w).Encode([]any{map[string]any{"output": "Sunny in " + city, "needs_input": false}})
			return
		}
		_ = json.NewEncoder(w).Encode([]any{map[string]any{"output": "Which city?", "needs_input": true}})
	}, "input_required: /needs_input")

	coord := agenttest.Coordinator(t, "webhook-test", task.AgentSpec{Name: "weather", Runner: agent.Runner(b.agent), Timeout: stuck,
		Retry: task.RetryPolicy{MaxAttempts: 3, InitialBackoff: 10 * time.Millisecond}})

	ctx := b.ctx
	tk := agenttest.Run(t, ctx, coord, "weather", task.TextPart("What's the weather?"))
	if tk.State != task.StateInputRequired || tk.StatusMessage.Text() != "Which city?" || len(tk.Artifacts) != 0 {
		t.Fatalf("first turn: task %s (%s: %s), status %+v, artifacts %+v; want input_required asking for the city", tk.State, tk.ErrorCode, tk.Reason, tk.StatusMessage, tk.Artifacts)
	}
	tk = agenttest.Answer(t, ctx, coord, tk.ID, "in Paris")
	if tk.State != task.StateSucceeded || tk.StatusMessage.Text() != "Sunny in Paris" {
		t.Fatalf("second turn: task %s (%s: %s), status %+v; want succeeded", tk.State, tk.ErrorCode, tk.Reason, tk.StatusMessage)
	}
	if len(tk.Artifacts) != 1 || agenttest.PartsText(tk.Artifacts[0].Parts) != "Sunny in Paris" {
		t.Errorf("second turn: artifacts = %+v", tk.Artifacts)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(inputs, "|") != "What's the weather?|in Paris" {
		t.Errorf("chatInput of the calls = %q", inputs)
	}
	if len(sessions) != 2 || sessions[0] != tk.ContextID || sessions[1] != tk.ContextID {
		t.Errorf("sessionId of the calls = %q, want the context %s twice", sessions, tk.ContextID)
	}
}
