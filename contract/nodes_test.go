package contract_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/internal/coordtest"
	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/task"
)

// reportContract is a graph's contract: research, then write (which must
// say "Report"), then review (which must approve).
func reportContract(writePolicy contract.Violation) *contract.AgentContract {
	contains := func(msg, v string) []contract.ContractAssertion {
		return []contract.ContractAssertion{{Type: contract.Assert, Message: msg, Check: contract.Check{Type: "contains", Value: v}}}
	}
	return &contract.AgentContract{
		Version: "1.0", ID: "report",
		Steps: []contract.ContractStep{
			{ID: "research", Assertions: contains("research found facts", "facts")},
			{ID: "write", DependsOn: []string{"research"}, OnViolation: writePolicy, Assertions: contains("the report has a title", "Report")},
			{ID: "review", DependsOn: []string{"write"}, Assertions: contains("the review approved", "approved")},
		},
	}
}

// graphNode is one node a stand-in graph runs: its name and its output
// on each attempt (by the attempt's message).
type graphNode struct {
	name string
	out  func(msg string) string
}

// nodeBundle is a Coordinator on a real SQLite store whose one agent,
// "report", stands in for a graph served as one agent: the runner runs
// the nodes in order and reports each through Request.OnNode, as the
// langgraph runtime does with the Agent Server's node updates, stopping
// when OnNode refuses one. The real runtime on the real Agent Server is
// tested in agent/langgraph and internal/e2e/frameworks.
type nodeBundle struct {
	coord *task.Coordinator
	mu    sync.Mutex
	ran   [][]string // the nodes each attempt ran
	msgs  []string   // each attempt's message
}

func setupNodes(t *testing.T, c *contract.AgentContract, attempts int, nodes []graphNode, final func(msg string) *task.Result) *nodeBundle {
	t.Helper()
	ctx := context.Background()
	compiled, err := contract.Compile(c)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "pactum.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &nodeBundle{}
	runner := task.RunnerFunc(func(ctx context.Context, req *task.Request, _ task.Emit) (*task.Result, error) {
		msg := req.Message.Text()
		b.mu.Lock()
		b.msgs = append(b.msgs, msg)
		b.ran = append(b.ran, nil)
		i := len(b.ran) - 1
		b.mu.Unlock()
		for _, n := range nodes {
			b.mu.Lock()
			b.ran[i] = append(b.ran[i], n.name)
			b.mu.Unlock()
			if req.OnNode == nil {
				continue
			}
			now := time.Now()
			out := n.out(msg)
			err := req.OnNode(ctx, task.Node{Name: n.name, Start: now, End: now,
				Result: &task.Result{Message: &task.Message{Role: task.RoleAgent, Parts: []task.Part{task.TextPart(out)}}}})
			if err != nil {
				return nil, err
			}
		}
		if final != nil {
			return final(msg), nil
		}
		return textResult("done"), nil
	})
	b.coord = coordtest.Start(t, task.Options{
		Store: st,
		Agents: []task.AgentSpec{{
			Name: "report", Runner: runner, Timeout: 10 * time.Second,
			Retry:      task.RetryPolicy{MaxAttempts: attempts, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond},
			Middleware: []task.Middleware{compiled.NodeGate(contract.GateOptions{WorkDir: t.TempDir()})},
		}},
	})
	return b
}

func (b *nodeBundle) submit(t *testing.T, input string) *task.Task {
	t.Helper()
	sub, err := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: task.Envelope{Action: "report", Actor: "tester", Input: userText(input)}})
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got, err := b.coord.Wait(ctx, sub.Task.ID)
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	return got
}

// stepVerdicts returns "step:outcome" for each verdict recorded on the
// task, oldest first.
func (b *nodeBundle) stepVerdicts(t *testing.T, id string) []string {
	t.Helper()
	recs, err := b.coord.Timeline(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		for _, e := range r.Evidence {
			if e.Step == contract.GateStep && e.Kind == task.EvidenceVerdict {
				vr := decodeVR(t, e)
				out = append(out, vr.Step+":"+e.Outcome)
			}
		}
	}
	return out
}

func fixed(s string) func(string) string { return func(string) string { return s } }

var (
	research = graphNode{"research", fixed("facts: pactum is one Go binary")}
	write    = graphNode{"write", fixed("# Report\n\nfacts.")}
	badWrite = graphNode{"write", fixed("no title here")}
	review   = graphNode{"review", fixed("Reviewed: approved")}
)

func TestNodeGate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		policy   contract.Violation
		nodes    []graphNode
		final    func(string) *task.Result
		state    task.State
		code     task.Code
		reason   string // a part of the task's reason
		verdicts []string
		ran      [][]string
	}{
		{name: "every node meets its step", nodes: []graphNode{research, write, review},
			state: task.StateSucceeded, verdicts: []string{"research:pass", "write:pass", "review:pass"},
			ran: [][]string{{"research", "write", "review"}}},
		{name: "a node that is no step is not checked", nodes: []graphNode{research, {"log", fixed("x")}, write, review},
			state: task.StateSucceeded, verdicts: []string{"research:pass", "write:pass", "review:pass"},
			ran: [][]string{{"research", "log", "write", "review"}}},
		{name: "a violation stops the graph", policy: contract.ViolationFail, nodes: []graphNode{research, badWrite, review},
			state: task.StateFailed, code: task.CodeContractViolation,
			reason:   `contract report step write violated: the report has a title (output does not contain "Report")`,
			verdicts: []string{"research:pass", "write:fail"}, ran: [][]string{{"research", "write"}}},
		{name: "continue lets the graph run on", policy: contract.ViolationContinue, nodes: []graphNode{research, badWrite, review},
			state: task.StateSucceeded, verdicts: []string{"research:pass", "write:fail", "review:pass"},
			ran: [][]string{{"research", "write", "review"}}},
		{name: "a step whose node did not run", nodes: []graphNode{research, write},
			state: task.StateFailed, code: task.CodeContractViolation,
			reason:   "contract report step review violated: node review ran (the graph did not run node review)",
			verdicts: []string{"research:pass", "write:pass", "review:fail"}, ran: [][]string{{"research", "write"}}},
		{name: "a node before its dependency is blocked", nodes: []graphNode{research, review, write},
			state: task.StateFailed, code: task.CodeContractViolation,
			reason:   "contract report step review violated: pre-gate blocked: dependency write not done",
			verdicts: []string{"research:pass", "review:fail"}, ran: [][]string{{"research", "review"}}},
		{name: "an interrupt is not the end", nodes: []graphNode{research},
			final: func(string) *task.Result {
				return &task.Result{InputRequired: true, Message: &task.Message{Role: task.RoleAgent, Parts: []task.Part{task.TextPart("which topic?")}}}
			},
			state: task.StateInputRequired, verdicts: []string{"research:pass"}, ran: [][]string{{"research"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupNodes(t, reportContract(tt.policy), 1, tt.nodes, tt.final)
			got := b.submit(t, "pactum")
			if got.State != tt.state || got.ErrorCode != tt.code {
				t.Fatalf("state %s (%s: %s), want %s (%s)", got.State, got.ErrorCode, got.Reason, tt.state, tt.code)
			}
			if !strings.Contains(got.Reason, tt.reason) {
				t.Errorf("reason %q, want it to contain %q", got.Reason, tt.reason)
			}
			if v := b.stepVerdicts(t, got.ID); !slices.Equal(v, tt.verdicts) {
				t.Errorf("verdicts %v, want %v", v, tt.verdicts)
			}
			b.mu.Lock()
			defer b.mu.Unlock()
			if len(b.ran) != len(tt.ran) {
				t.Fatalf("attempts ran %v, want %v", b.ran, tt.ran)
			}
			for i := range tt.ran {
				if !slices.Equal(b.ran[i], tt.ran[i]) {
					t.Errorf("attempt %d ran %v, want %v", i+1, b.ran[i], tt.ran[i])
				}
			}
		})
	}
}

// TestNodeGateRetry: retry runs the graph again with the violating
// node's output and the failed assertion as feedback.
func TestNodeGateRetry(t *testing.T) {
	t.Parallel()
	w := graphNode{"write", func(msg string) string {
		if strings.HasPrefix(msg, contract.FeedbackIntro) {
			return "# Report, fixed"
		}
		return "no title here"
	}}
	b := setupNodes(t, reportContract(contract.ViolationRetry), 3, []graphNode{research, w, review}, nil)
	got := b.submit(t, "pactum")
	if got.State != task.StateSucceeded {
		t.Fatalf("state %s (%s: %s), want succeeded", got.State, got.ErrorCode, got.Reason)
	}
	want := []string{"research:pass", "write:fail", "research:pass", "write:pass", "review:pass"}
	if v := b.stepVerdicts(t, got.ID); !slices.Equal(v, want) {
		t.Errorf("verdicts %v, want %v", v, want)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.msgs) != 2 || b.msgs[0] != "pactum" {
		t.Fatalf("messages %q, want the request then the feedback", b.msgs)
	}
	if fb := b.msgs[1]; !strings.HasPrefix(fb, contract.FeedbackIntro) || !strings.Contains(fb, `the report has a title (output does not contain "Report")`) {
		t.Errorf("feedback %q", fb)
	}
	// The rejected output went into the history before the feedback.
	var texts []string
	for _, m := range got.History {
		texts = append(texts, m.Text())
	}
	if !slices.Contains(texts, "no title here") {
		t.Errorf("history %q lacks the rejected node output", texts)
	}
}

// TestNodeGateEscalate: escalate asks for input, with the violating
// node's output attached to the question.
func TestNodeGateEscalate(t *testing.T) {
	t.Parallel()
	b := setupNodes(t, reportContract(contract.ViolationEscalate), 1, []graphNode{research, badWrite, review}, nil)
	got := b.submit(t, "pactum")
	if got.State != task.StateInputRequired {
		t.Fatalf("state %s (%s: %s), want input_required", got.State, got.ErrorCode, got.Reason)
	}
	q := got.StatusMessage.Text()
	if !strings.Contains(q, "the report has a title") || !strings.Contains(q, "no title here") {
		t.Errorf("question %q: want the failed assertion and the node's output", q)
	}
}
