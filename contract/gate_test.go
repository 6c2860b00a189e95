package contract_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/internal/coordtest"
	"github.com/pactum/pactum/store"
	_ "github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
)

// gateBundle is a started Coordinator on a real SQLite store whose one
// agent ("summarize") runs behind a contract gate.
type gateBundle struct {
	coord *task.Coordinator
	calls *atomic.Int32
	msgs  chan string // each attempt's Request.Message text
}

// summaryStep is a one-step contract: the answer must be a JSON object
// with a summary (assert) and should mention "ok" (suggest).
func summaryStep(policy contract.Violation, strictness contract.Strictness) *contract.AgentContract {
	return &contract.AgentContract{
		Version: "1.0", ID: "summaries", Strictness: strictness,
		Steps: []contract.ContractStep{{
			ID: "summarize", Agent: "summarize", OnViolation: policy,
			Assertions: []contract.ContractAssertion{
				{Type: contract.Assert, Message: "the answer is a JSON object with a summary",
					Check: contract.Check{Type: "schema_match", Target: "output", Schema: map[string]any{"type": "object", "required": []any{"summary"}}}},
				{Type: contract.Suggest, Message: "the answer says ok",
					Check: contract.Check{Type: "contains", Target: "output", Value: "ok"}},
			},
		}},
	}
}

func setupGate(t *testing.T, c *contract.AgentContract, attempts int, workDir string, answer func(msg string, call int32) (*task.Result, error)) *gateBundle {
	t.Helper()
	ctx := context.Background()
	compiled, err := contract.Compile(c)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	step, ok := compiled.Step(c.Steps[0].ID)
	if !ok {
		t.Fatalf("no step %s", c.Steps[0].ID)
	}
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "pactum.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &gateBundle{calls: new(atomic.Int32), msgs: make(chan string, 16)}
	runner := task.RunnerFunc(func(ctx context.Context, req *task.Request, _ task.Emit) (*task.Result, error) {
		n := b.calls.Add(1)
		msg := req.Message.Text()
		b.msgs <- msg
		return answer(msg, n)
	})
	b.coord = coordtest.Start(t, task.Options{
		Store: st,
		Agents: []task.AgentSpec{{
			Name: "summarize", Runner: runner, Timeout: 10 * time.Second,
			Retry:      task.RetryPolicy{MaxAttempts: attempts, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond},
			Middleware: []task.Middleware{step.Middleware(contract.GateOptions{WorkDir: workDir})},
		}},
	})
	return b
}

func textResult(s string) *task.Result {
	return &task.Result{Artifacts: []task.Artifact{{Parts: []task.Part{task.TextPart(s)}}}}
}

func userText(s string) task.Message {
	return task.Message{ID: task.NewID(), Role: task.RoleUser, Parts: []task.Part{task.TextPart(s)}}
}

func (b *gateBundle) submit(t *testing.T, input string) *task.Task {
	t.Helper()
	sub, err := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: task.Envelope{Action: "summarize", Actor: "tester", Input: userText(input)}})
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	return b.wait(t, sub.Task.ID)
}

func (b *gateBundle) wait(t *testing.T, id string) *task.Task {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got, err := b.coord.Wait(ctx, id)
	if err != nil {
		t.Fatalf("wait %s: %v", id, err)
	}
	return got
}

// verdicts returns every verdict the gate recorded on the task, oldest
// first, with the record's target state.
func (b *gateBundle) verdicts(t *testing.T, id string) ([]task.Evidence, []task.State) {
	t.Helper()
	recs, err := b.coord.Timeline(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var evs []task.Evidence
	var to []task.State
	for _, r := range recs {
		for _, e := range r.Evidence {
			if e.Step == contract.GateStep && e.Kind == task.EvidenceVerdict {
				evs = append(evs, e)
				to = append(to, r.To)
			}
		}
	}
	return evs, to
}

// judged returns the outputs the gate kept with its verdicts on the task
// (contract.JudgedOutput), oldest first.
func (b *gateBundle) judged(t *testing.T, id string) []contract.JudgedOutput {
	t.Helper()
	recs, err := b.coord.Timeline(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []contract.JudgedOutput
	for _, r := range recs {
		for _, e := range r.Evidence {
			if e.Step == contract.GateStep && e.Kind == task.EvidenceOutput {
				var j contract.JudgedOutput
				if err := json.Unmarshal(e.Data, &j); err != nil {
					t.Fatalf("judged output %s: %v", e.Data, err)
				}
				out = append(out, j)
			}
		}
	}
	return out
}

func decodeVR(t *testing.T, e task.Evidence) contract.VerifiedResult {
	t.Helper()
	var vr contract.VerifiedResult
	if err := json.Unmarshal(e.Data, &vr); err != nil {
		t.Fatalf("verified result %s: %v", e.Data, err)
	}
	return vr
}

const (
	good = `{"summary": "all ok"}`
	bad  = `no JSON here`
)

// TestGatePolicies runs each violation policy through a real Coordinator.
func TestGatePolicies(t *testing.T) {
	t.Parallel()
	// badThenFixed answers badly until its message carries the feedback.
	badThenFixed := func(msg string, _ int32) (*task.Result, error) {
		if strings.Contains(msg, contract.FeedbackIntro) && strings.Contains(msg, "the answer is a JSON object with a summary") {
			return textResult(good), nil
		}
		return textResult(bad), nil
	}
	alwaysBad := func(string, int32) (*task.Result, error) { return textResult(bad), nil }

	tests := []struct {
		name       string
		policy     contract.Violation
		strictness contract.Strictness
		attempts   int
		answer     func(string, int32) (*task.Result, error)
		state      task.State
		code       task.Code
		reason     []string // substrings of the task's reason
		calls      int32
		outcomes   []string // the verdicts' outcomes, oldest first
		recordedAt []task.State
		artifact   string // the task's artifact text, if any
	}{
		{name: "pass", policy: contract.ViolationFail, attempts: 3,
			answer: func(string, int32) (*task.Result, error) { return textResult(good), nil },
			state:  task.StateSucceeded, calls: 1, outcomes: []string{"pass"}, recordedAt: []task.State{task.StateSucceeded}, artifact: good},
		{name: "default policy is fail", policy: "", attempts: 3, answer: alwaysBad,
			state: task.StateFailed, code: task.CodeContractViolation,
			reason: []string{"contract summaries step summarize violated", "the answer is a JSON object with a summary"},
			calls:  1, outcomes: []string{"fail"}, recordedAt: []task.State{task.StateFailed}},
		{name: "fail", policy: contract.ViolationFail, attempts: 3, answer: alwaysBad,
			state: task.StateFailed, code: task.CodeContractViolation,
			reason: []string{"the answer is a JSON object with a summary"},
			calls:  1, outcomes: []string{"fail"}, recordedAt: []task.State{task.StateFailed}},
		{name: "retry succeeds with feedback", policy: contract.ViolationRetry, attempts: 3, answer: badThenFixed,
			state: task.StateSucceeded, calls: 2, outcomes: []string{"fail", "pass"},
			recordedAt: []task.State{task.StateQueued, task.StateSucceeded}, artifact: good},
		{name: "retry is bounded by the agent's attempts", policy: contract.ViolationRetry, attempts: 2, answer: alwaysBad,
			state: task.StateDeadLetter, code: task.CodeContractViolation,
			reason: []string{"attempt 2 of 2 failed", "the answer is a JSON object with a summary"},
			calls:  2, outcomes: []string{"fail", "fail"}, recordedAt: []task.State{task.StateQueued, task.StateDeadLetter}},
		{name: "escalate", policy: contract.ViolationEscalate, attempts: 3, answer: alwaysBad,
			state: task.StateInputRequired, reason: []string{"the answer is a JSON object with a summary"},
			calls: 1, outcomes: []string{"fail"}, recordedAt: []task.State{task.StateInputRequired}},
		{name: "continue", policy: contract.ViolationContinue, attempts: 3, answer: alwaysBad,
			state: task.StateSucceeded, calls: 1, outcomes: []string{"fail"}, recordedAt: []task.State{task.StateSucceeded}, artifact: bad},
		{name: "permissive never fails", policy: contract.ViolationFail, strictness: contract.Permissive, attempts: 3, answer: alwaysBad,
			state: task.StateSucceeded, calls: 1, outcomes: []string{"pass"}, recordedAt: []task.State{task.StateSucceeded}, artifact: bad},
		{name: "strict fails on a suggest", policy: contract.ViolationFail, strictness: contract.Strict, attempts: 3,
			answer: func(string, int32) (*task.Result, error) { return textResult(`{"summary": "fine"}`), nil },
			state:  task.StateFailed, code: task.CodeContractViolation, reason: []string{"the answer says ok"},
			calls: 1, outcomes: []string{"fail"}, recordedAt: []task.State{task.StateFailed}},
		{name: "loose passes a failed suggest", policy: contract.ViolationFail, strictness: contract.Loose, attempts: 3,
			answer: func(string, int32) (*task.Result, error) { return textResult(`{"summary": "fine"}`), nil },
			state:  task.StateSucceeded, calls: 1, outcomes: []string{"pass"}, recordedAt: []task.State{task.StateSucceeded}, artifact: `{"summary": "fine"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupGate(t, summaryStep(tt.policy, tt.strictness), tt.attempts, t.TempDir(), tt.answer)
			got := b.submit(t, "summarize this")
			if got.State != tt.state || got.ErrorCode != tt.code {
				t.Fatalf("state %s code %q (reason %q), want %s code %q", got.State, got.ErrorCode, got.Reason, tt.state, tt.code)
			}
			for _, r := range tt.reason {
				if !strings.Contains(got.Reason, r) {
					t.Errorf("reason %q does not contain %q", got.Reason, r)
				}
			}
			if n := b.calls.Load(); n != tt.calls {
				t.Errorf("agent called %d times, want %d", n, tt.calls)
			}
			evs, at := b.verdicts(t, got.ID)
			if len(evs) != len(tt.outcomes) {
				t.Fatalf("%d verdicts (%+v), want %d", len(evs), evs, len(tt.outcomes))
			}
			for i, e := range evs {
				if e.Kind != task.EvidenceVerdict || e.Outcome != tt.outcomes[i] || at[i] != tt.recordedAt[i] {
					t.Errorf("verdict %d: kind %s outcome %s on the record to %s, want verdict %s to %s", i, e.Kind, e.Outcome, at[i], tt.outcomes[i], tt.recordedAt[i])
				}
				vr := decodeVR(t, e)
				if vr.Contract != "summaries" || vr.Step != "summarize" || !vr.Executed || !vr.Verification.PreGate.Passed {
					t.Errorf("verdict %d: %+v", i, vr)
				}
				if vr.Verification.Passed != (e.Outcome == "pass") {
					t.Errorf("verdict %d: passed %v with outcome %s", i, vr.Verification.Passed, e.Outcome)
				}
				if len(vr.Verification.PostGate.Results) != 2 {
					t.Errorf("verdict %d: %d post-gate results, want 2", i, len(vr.Verification.PostGate.Results))
				}
				if e.Outcome == "fail" {
					if len(vr.Verification.PostGate.FailedAssertions) == 0 {
						t.Errorf("verdict %d: failed without failed assertions: %+v", i, vr)
					}
					if !strings.Contains(e.Message, vr.Verification.PostGate.FailedAssertions[0].Message) {
						t.Errorf("verdict %d: message %q does not name the failed assertion", i, e.Message)
					}
				}
				tm := vr.Verification.Timing
				if tm.TotalMs < tm.ExecutionMs || tm.TotalMs < tm.PostGateMs || e.Duration <= 0 {
					t.Errorf("verdict %d: timing %+v, duration %s", i, tm, e.Duration)
				}
			}
			// Every rejected answer is kept with its verdict (not one that
			// passed, nor one delivered as it is: those are the task's
			// result).
			var rejected []string
			for _, o := range tt.outcomes {
				if o == "fail" && tt.policy != contract.ViolationContinue {
					rejected = append(rejected, bad)
				}
			}
			if tt.name == "strict fails on a suggest" {
				rejected = []string{`{"summary": "fine"}`}
			}
			var kept []string
			for _, j := range b.judged(t, got.ID) {
				if len(j.Artifacts) == 1 && len(j.Artifacts[0].Parts) == 1 {
					kept = append(kept, j.Artifacts[0].Parts[0].Text)
				} else {
					kept = append(kept, fmt.Sprintf("%+v", j))
				}
			}
			if !slices.Equal(kept, rejected) {
				t.Errorf("judged outputs kept %q, want %q", kept, rejected)
			}
			if tt.artifact != "" {
				if len(got.Artifacts) != 1 || got.Artifacts[0].Parts[0].Text != tt.artifact {
					t.Errorf("artifacts %+v, want one with %q", got.Artifacts, tt.artifact)
				}
			}
			nv, err := b.coord.Timeline(context.Background(), got.ID)
			if err != nil {
				t.Fatal(err)
			}
			newest, err := contract.Newest(nv)
			if err != nil || newest == nil {
				t.Fatalf("Newest: %v, %v", newest, err)
			}
			if want := decodeVR(t, evs[len(evs)-1]); newest.Verification.Passed != want.Verification.Passed || newest.Verification.Timing != want.Verification.Timing {
				t.Errorf("Newest %+v, want the last verdict %+v", newest, want)
			}
		})
	}
}

// TestGateRetryFeedback: the retried attempt's message is the feedback,
// naming the failed assertion and why it failed, and it stays in the
// task's history.
func TestGateRetryFeedback(t *testing.T) {
	t.Parallel()
	b := setupGate(t, summaryStep(contract.ViolationRetry, ""), 3, t.TempDir(), func(msg string, n int32) (*task.Result, error) {
		if n == 1 {
			return textResult(bad), nil
		}
		return textResult(good), nil
	})
	got := b.submit(t, "summarize this")
	if got.State != task.StateSucceeded {
		t.Fatalf("state %s (%s)", got.State, got.Reason)
	}
	first, second := <-b.msgs, <-b.msgs
	if first != "summarize this" {
		t.Errorf("first attempt's message %q", first)
	}
	for _, want := range []string{contract.FeedbackIntro, "the answer is a JSON object with a summary"} {
		if !strings.Contains(second, want) {
			t.Errorf("second attempt's message %q does not contain %q", second, want)
		}
	}
	if strings.Contains(second, "the answer says ok") {
		t.Errorf("feedback %q names a suggestion that does not fail the gate", second)
	}
	var users []string
	for _, m := range got.History {
		if m.Role == task.RoleUser {
			users = append(users, m.Text())
		}
	}
	if len(users) != 2 || users[1] != second {
		t.Errorf("user turns %q, want the input and the feedback", users)
	}
}

// TestGateEscalateResumes: an escalated violation asks the violation as
// its question; an answer queues the task again and the agent runs with
// the answer as its message.
func TestGateEscalateResumes(t *testing.T) {
	t.Parallel()
	b := setupGate(t, summaryStep(contract.ViolationEscalate, ""), 3, t.TempDir(), func(msg string, n int32) (*task.Result, error) {
		if strings.Contains(msg, "use JSON") {
			return textResult(good), nil
		}
		return textResult(bad), nil
	})
	got := b.submit(t, "summarize this")
	if got.State != task.StateInputRequired {
		t.Fatalf("state %s (%s)", got.State, got.Reason)
	}
	if got.StatusMessage == nil || got.StatusMessage.Role != task.RoleAgent ||
		!strings.Contains(got.StatusMessage.Text(), "the answer is a JSON object with a summary") {
		t.Fatalf("question %+v does not state the violation", got.StatusMessage)
	}
	if q := got.StatusMessage.Parts; len(q) != 2 || q[1].Text != bad || len(got.Artifacts) != 0 {
		t.Errorf("question parts %+v, artifacts %+v: want the output that broke the contract with the question, not on the task", q, got.Artifacts)
	}
	if _, err := b.coord.Continue(context.Background(), got.ID, userText("please use JSON")); err != nil {
		t.Fatal(err)
	}
	got = b.wait(t, got.ID)
	if got.State != task.StateSucceeded || len(got.Artifacts) != 1 || got.Artifacts[0].Parts[0].Text != good {
		t.Fatalf("after the answer: %s %+v", got.State, got.Artifacts)
	}
	<-b.msgs
	if m := <-b.msgs; m != "please use JSON" {
		t.Errorf("resumed attempt's message %q, want the answer", m)
	}
	evs, _ := b.verdicts(t, got.ID)
	if len(evs) != 2 || evs[0].Outcome != "fail" || evs[1].Outcome != "pass" {
		t.Errorf("verdicts %+v", evs)
	}
}

// TestGatePreGateBlocks: a step that consumes a file that is not there,
// or not valid against its schema, is not run; the task fails with
// contract_violation naming what blocked. With a valid file it runs.
func TestGatePreGateBlocks(t *testing.T) {
	t.Parallel()
	c := summaryStep(contract.ViolationRetry, "")
	c.Resources = []contract.ContractResource{{ID: "notes", Type: contract.ResourceFile, Location: "notes.json",
		Schema: map[string]any{"type": "object", "required": []any{"topic"}}}}
	c.Steps[0].Consumes = []string{"notes"}
	dir := t.TempDir()
	b := setupGate(t, c, 3, dir, func(string, int32) (*task.Result, error) { return textResult(good), nil })

	if err := os.WriteFile(filepath.Join(dir, "notes.json"), []byte(`{"topic": "q3"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := b.submit(t, "summarize this"); got.State != task.StateSucceeded || b.calls.Load() != 1 {
		t.Fatalf("with the file: %s (%s), %d calls", got.State, got.Reason, b.calls.Load())
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.json"), []byte(`{"subject": "q3"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := b.submit(t, "summarize this"); got.State != task.StateFailed || got.ErrorCode != task.CodeContractViolation ||
		!strings.Contains(got.Reason, "resource notes invalid") || b.calls.Load() != 1 {
		t.Fatalf("with an invalid file: %s %s %q, %d calls", got.State, got.ErrorCode, got.Reason, b.calls.Load())
	}
	if err := os.Remove(filepath.Join(dir, "notes.json")); err != nil {
		t.Fatal(err)
	}
	b.calls.Store(0)
	got := b.submit(t, "summarize this")
	if got.State != task.StateFailed || got.ErrorCode != task.CodeContractViolation || !strings.Contains(got.Reason, "notes") {
		t.Fatalf("state %s code %s reason %q", got.State, got.ErrorCode, got.Reason)
	}
	if n := b.calls.Load(); n != 0 {
		t.Errorf("agent called %d times after a failed pre-gate", n)
	}
	evs, _ := b.verdicts(t, got.ID)
	if len(evs) != 1 || evs[0].Outcome != "fail" {
		t.Fatalf("verdicts %+v", evs)
	}
	vr := decodeVR(t, evs[0])
	if vr.Executed || vr.Verification.PreGate.Passed || vr.Error == "" {
		t.Errorf("verified result %+v", vr)
	}
}

// TestGateAgentError: an agent's own failure is recorded (executed, with
// its error) and returned as it was: retried, not a contract violation.
func TestGateAgentError(t *testing.T) {
	t.Parallel()
	b := setupGate(t, summaryStep(contract.ViolationFail, ""), 2, t.TempDir(), func(_ string, n int32) (*task.Result, error) {
		if n == 1 {
			return nil, task.Errorf(task.CodeAgentFailed, "boom")
		}
		return textResult(good), nil
	})
	got := b.submit(t, "x")
	if got.State != task.StateSucceeded {
		t.Fatalf("state %s (%s)", got.State, got.Reason)
	}
	evs, at := b.verdicts(t, got.ID)
	if len(evs) != 2 || evs[0].Outcome != "fail" || at[0] != task.StateQueued || evs[1].Outcome != "pass" {
		t.Fatalf("verdicts %+v at %v", evs, at)
	}
	if vr := decodeVR(t, evs[0]); !vr.Executed || vr.Error != "boom" {
		t.Errorf("first verdict %+v", vr)
	}
	if j := b.judged(t, got.ID); len(j) != 1 || j[0].AgentError != "boom" || len(j[0].Artifacts) != 0 {
		t.Errorf("judged outputs %+v, want the agent's error once", j)
	}
}
