package contract

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/pactum/pactum/task"
)

// GateStep is the name of the pipeline step a gate runs as (Middleware):
// the Step of the evidence it records, and what surfaces look for to find
// a task's newest verified result (Newest).
const GateStep = "contract"

// GateOptions configure a step's gate (CompiledStep.Middleware).
type GateOptions struct {
	// WorkDir is where the step's file resources are looked for: the
	// agent's working directory (an exec agent's dir). Default: the
	// process's working directory.
	WorkDir string
	// Resources returns the contract resources available to the attempt
	// before it runs (those earlier steps of a multi-step run created), by
	// id. Nil means the step runs on its own: the file resources it
	// consumes are read from WorkDir, and any other resource it consumes
	// is missing (the pre-gate blocks it).
	Resources func(ctx context.Context, a *task.Attempt) (map[string]Resource, error)
	// Done returns which steps of the contract have succeeded, for the
	// pre-gate's dependency check; nil means the step runs on its own and
	// has no dependencies to wait for.
	Done func(ctx context.Context, a *task.Attempt) (map[string]bool, error)
	// Tool returns the MCP tool a bridge step's agent calls, listed live
	// from its server (tools/list), for the pre-gate's check of the
	// bridged arguments; asked only for a bridge step (BridgeKey). Nil,
	// or a nil tool, blocks a bridge step: there is nothing to check its
	// arguments against.
	Tool func(ctx context.Context, a *task.Attempt) (*BridgeTool, error)
	// Now is the clock the timings are read from (default time.Now).
	Now func() time.Time
}

// Middleware returns the step's gate as a task pipeline step named
// "contract" (GateStep). For every attempt it
//
//  1. builds an Input from the attempt and runs the pre-gate; a failed
//     pre-gate does not call the agent: the attempt fails permanently with
//     task.CodeContractViolation and a reason naming what blocked it;
//  2. runs the rest of the pipeline (the agent), timed;
//  3. runs the post-gate on the result, with the resources the step
//     created (ExtractResources);
//  4. records the VerifiedResult as evidence (kind verdict, outcome pass
//     or fail, Data the VerifiedResult's JSON), which the Coordinator
//     stores with the transition that ends the attempt;
//  5. on a failed post-gate applies the step's onViolation (default
//     fail): retry returns a retryable contract_violation carrying the
//     failed assertions as feedback (task.WithAnswerFeedback: the
//     rejected answer and then the feedback join the history, and the
//     next attempt's message is that feedback, its Request.Text the
//     whole task again; after the agent's last attempt the task is
//     dead-lettered with the violation as its reason); escalate pauses the
//     task in input_required with the violation as its question, the
//     output that broke the contract attached to it (an answer queues the
//     task again and the agent runs with the answer as its message); fail
//     fails the task permanently with contract_violation; continue
//     delivers the result as it is.
//
// An attempt whose agent fails is recorded (executed, with its error) and
// its error returned unchanged; an answer that asks for input or spawns
// children is not an output to check: the verdict is recorded as skipped.
func (s *CompiledStep) Middleware(o GateOptions) task.Middleware {
	g := &gate{s: s, o: o}
	if g.o.Now == nil {
		g.o.Now = time.Now
	}
	return g
}

type gate struct {
	s *CompiledStep
	o GateOptions
}

func (g *gate) Name() string { return GateStep }

func (g *gate) Handle(ctx context.Context, a *task.Attempt, next task.Next) (*task.Result, error) {
	start := g.o.Now()
	vr := &VerifiedResult{Contract: g.s.contractID(), ContractDigest: g.s.contractDigest(), Step: g.s.step.ID}
	vr.Verification.ResourcesCreated = []ContractResource{}
	var available map[string]Resource
	if g.o.Resources != nil {
		res, err := g.o.Resources(ctx, a)
		if err != nil {
			return nil, fmt.Errorf("contract %s step %s: resources: %w", vr.Contract, vr.Step, err)
		}
		available = res
	}
	var done map[string]bool
	if g.o.Done != nil {
		d, err := g.o.Done(ctx, a)
		if err != nil {
			return nil, fmt.Errorf("contract %s step %s: dependencies: %w", vr.Contract, vr.Step, err)
		}
		done = d
	}
	in := g.s.preGateInput(a.Task, g.o.WorkDir, available, g.o.Resources == nil, done)
	if g.s.Bridged() && g.o.Tool != nil {
		tool, err := g.o.Tool(ctx, a)
		if err != nil {
			return nil, fmt.Errorf("contract %s step %s: the bridged tool's input schema: %w", vr.Contract, vr.Step, err)
		}
		in.Tool, vr.Tool = tool, tool
	}

	vr.Verification.PreGate = g.s.PreGate(ctx, in)
	preEnd := g.o.Now()
	vr.Verification.Timing.PreGateMs = ms(preEnd.Sub(start))
	if !vr.Verification.PreGate.Passed {
		msg := "pre-gate blocked: " + blockedSummary(vr.Verification.PreGate)
		vr.Error = msg
		vr.Verification.PostGate = GateResult{Passed: false, Results: []ValidationResult{}}
		vr.Verification.Timing.TotalMs = vr.Verification.Timing.PreGateMs
		recordVerdict(a, vr, "fail", msg, preEnd.Sub(start))
		return nil, task.Permanent(&task.Error{Code: task.CodeContractViolation, Message: g.s.violationPrefix() + msg})
	}

	res, err := next(ctx)
	execEnd := g.o.Now()
	exec := execEnd.Sub(preEnd)
	vr.Executed = true
	vr.Verification.Timing.ExecutionMs = ms(exec)
	if err != nil || res == nil || res.InputRequired || len(res.Spawn) > 0 || res.Wait {
		vr.Verification.PostGate = GateResult{Passed: false, Results: []ValidationResult{}}
		vr.Verification.Timing.TotalMs = ms(execEnd.Sub(start))
		var outcome, msg string
		switch {
		case err != nil:
			outcome, msg = "fail", "the agent failed; post-gate not run: "+err.Error()
			vr.Error = err.Error()
		case res == nil:
			// A step answered nothing: the Coordinator treats it as an
			// empty result, which is what the post-gate checks.
			res = &task.Result{}
		default:
			outcome, msg = "skip", "the agent asked for input or waits for children; the post-gate runs on its answer"
		}
		if outcome != "" {
			recordVerdict(a, vr, outcome, msg, execEnd.Sub(start))
			if err != nil {
				recordOutput(a, &JudgedOutput{AgentError: err.Error()})
			}
			return res, err
		}
	}

	post, list := g.s.postGate(ctx, in, res, exec)
	if list != nil {
		vr.Verification.ResourcesCreated = list
	}
	end := g.o.Now()
	vr.Verification.PostGate = post
	vr.Verification.Timing.PostGateMs = ms(end.Sub(execEnd))
	vr.Verification.Timing.TotalMs = ms(end.Sub(start))
	vr.Verification.Passed = post.Passed

	if post.Passed {
		msg := "all assertions hold"
		if f := g.s.failed(post, false); len(f) > 0 {
			msg = "passed; not held but not failing the gate: " + summary(f)
		}
		recordVerdict(a, vr, "pass", msg, end.Sub(start))
		return res, nil
	}
	violation := summary(g.s.failed(post, true))
	policy := g.s.policy()
	if policy != ViolationContinue {
		vr.Error = violation
	}
	recordVerdict(a, vr, "fail", "onViolation "+string(policy)+": "+violation, end.Sub(start))
	if policy != ViolationContinue {
		// The answer is not stored as the task's result: keep it with
		// the verdict, for an offline check of the same answer.
		recordOutput(a, &JudgedOutput{Artifacts: res.Artifacts, Message: res.Message})
	}
	return g.s.onViolation(res, g.s.failed(post, true))
}

// onViolation applies the step's onViolation to an answer res whose
// post-gate failed with the assertions failed (gating ones): the error
// or the result the attempt ends with. Shared by the gate of an attempt
// (Middleware) and the gate of a graph's nodes (NodeGate), where res is
// the node's output.
func (s *CompiledStep) onViolation(res *task.Result, failed []ValidationResult) (*task.Result, error) {
	cause := &task.Error{Code: task.CodeContractViolation, Message: s.violationPrefix() + summary(failed)}
	switch s.policy() {
	case ViolationRetry:
		fb := task.Message{Role: task.RoleUser, Parts: []task.Part{task.TextPart(feedback(failed))}}
		// The rejected answer goes into the history before the feedback:
		// the agent's next attempt sees what it said, then what to fix.
		if ans := answerOf(res); len(ans.Parts) > 0 {
			return nil, task.WithAnswerFeedback(cause, ans, fb)
		}
		return nil, task.WithFeedback(cause, fb)
	case ViolationEscalate:
		// The output that broke the contract goes with the question, for
		// the person who answers it, not onto the task: an answer runs the
		// step again, whose output is the task's result.
		// Marked as the question of a retry: the reply runs the step again,
		// and that attempt gets the whole task (task.Request.Retry reads
		// the question's first part as what broke the contract, the parts
		// after it as the rejected output).
		q := task.Message{Role: task.RoleAgent, Parts: []task.Part{task.TextPart(question(failed))},
			Metadata: map[string]any{task.RetryKey: task.RetryQuestion}}
		q.Parts = append(q.Parts, answerOf(res).Parts...)
		return &task.Result{Message: &q, InputRequired: true, Reason: cause.Message}, nil
	case ViolationContinue:
		return res, nil
	default:
		return nil, task.Permanent(cause)
	}
}

// policy is the step's onViolation, fail when it names none.
func (s *CompiledStep) policy() Violation {
	if s.step.OnViolation == "" {
		return ViolationFail
	}
	return s.step.OnViolation
}

// preGateInput builds what the pre-gate of step s checks for task t: the
// resources available to it (standalone: none handed over, the file
// resources it consumes read from workDir) and the steps done. The live
// gate and Replay both build their Input here, so that a step checked
// offline is checked exactly as it was when it ran.
func (s *CompiledStep) preGateInput(t *task.Task, workDir string, available map[string]Resource, standalone bool, done map[string]bool) *Input {
	in := &Input{Task: t, WorkDir: workDir, Resources: available, Done: done}
	if standalone {
		in.Resources = s.filesOnDisk(in)
	}
	return in
}

// postGate adds what the step produced (res, which ran for d) to in,
// with the resources it created (ExtractResources) over those it had,
// and runs the post-gate on it. It returns the gate's result and the
// definitions of the resources created, in the step's order (nil when
// none). Shared by the live gate and Replay.
func (s *CompiledStep) postGate(ctx context.Context, in *Input, res *task.Result, d time.Duration) (GateResult, []ContractResource) {
	in.Result, in.Duration = res, d
	created, list := ExtractResources(s, in)
	if len(created) > 0 {
		merged := make(map[string]Resource, len(in.Resources)+len(created))
		for id, r := range in.Resources {
			merged[id] = r
		}
		for id, r := range created {
			merged[id] = r
		}
		in.Resources = merged
	}
	return s.PostGate(ctx, in), list
}

// filesOnDisk returns the file resources the step consumes that are
// present under in.WorkDir: what a step run on its own (no earlier step
// handing resources over) finds before it runs. Nil when there are none.
func (s *CompiledStep) filesOnDisk(in *Input) map[string]Resource {
	var out map[string]Resource
	for _, id := range s.step.Consumes {
		def := s.contract.resource(id).def
		if def.Type != ResourceFile {
			continue
		}
		if r, why := extractResource(def, in); why == "" {
			if out == nil {
				out = map[string]Resource{}
			}
			out[id] = r
		}
	}
	return out
}

// JudgedOutput is what a gate judged when it is not stored as the task's
// result: the answer of an attempt whose post-gate failed (retried,
// escalated or failed), or the error of an agent that failed. The gate
// records it as evidence of kind task.EvidenceOutput beside its verdict;
// FromRecord reads it back, so that Replay judges what the live gate
// judged.
type JudgedOutput struct {
	Artifacts  []task.Artifact `json:"artifacts,omitempty"`
	Message    *task.Message   `json:"message,omitempty"`
	AgentError string          `json:"agentError,omitempty"`
}

func recordOutput(a *task.Attempt, out *JudgedOutput) {
	data, err := json.Marshal(out)
	if err != nil {
		data, _ = json.Marshal(JudgedOutput{AgentError: "encode judged output: " + err.Error()})
	}
	a.AddEvidence(task.Evidence{Kind: task.EvidenceOutput, Outcome: "judged", Data: data})
}

// record adds vr as the attempt's verdict evidence.
func recordVerdict(a *task.Attempt, vr *VerifiedResult, outcome, msg string, d time.Duration) {
	// Written out (json.Marshal's bytes), once per checked attempt.
	data, err := appendVerifiedResult(make([]byte, 0, verifiedSize(vr)), vr)
	if err != nil {
		data, err = json.Marshal(vr)
	}
	if err != nil {
		// A VerifiedResult holds JSON-decoded values only; a failure here
		// is a bug, shown where the verdict would be.
		data, _ = json.Marshal(map[string]string{"error": "encode verified result: " + err.Error()})
	}
	a.AddEvidence(task.Evidence{Kind: task.EvidenceVerdict, Outcome: outcome, Message: msg, Duration: d, Data: data})
}

// verifiedSize is about the length of vr's JSON, for its buffer.
func verifiedSize(vr *VerifiedResult) int {
	n := 320 + len(vr.Contract) + len(vr.ContractDigest) + len(vr.Step) + len(vr.Error)
	for _, g := range [...]*GateResult{&vr.Verification.PreGate, &vr.Verification.PostGate} {
		for i := range g.Results {
			r := &g.Results[i]
			n += 64 + len(r.Check) + len(r.Target) + len(r.Message) + len(r.Reason) + len(r.Path)
		}
	}
	return n
}

// contractID names the step's contract in verified results.
func (s *CompiledStep) contractID() string {
	if s.contract != nil && s.contract.contract != nil {
		return s.contract.contract.ID
	}
	return ""
}

func (s *CompiledStep) contractDigest() string {
	if s.contract != nil {
		return s.contract.digest
	}
	return ""
}

// violationPrefix starts a violation's reason: which contract and step.
func (s *CompiledStep) violationPrefix() string {
	return fmt.Sprintf("contract %s step %s violated: ", s.contractID(), s.step.ID)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// failed returns the results of g that failed: those that fail the gate
// under the step's strictness (gating) or those that failed without
// failing it (!gating).
func (s *CompiledStep) failed(g GateResult, gating bool) []ValidationResult {
	var out []ValidationResult
	for _, r := range g.Results {
		if !r.Passed && s.fails(r.Type) == gating {
			out = append(out, r)
		}
	}
	return out
}

// summary says what failed in one line: each assertion's message and the
// check's reason.
func summary(rs []ValidationResult) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = describe(r)
	}
	return strings.Join(parts, "; ")
}

func describe(r ValidationResult) string {
	s := r.Message
	if s == "" {
		s = r.Check + " check"
	}
	if r.Reason != "" {
		s += " (" + r.Reason + ")"
	}
	return s
}

// answerOf is the agent message of a result: its artifacts' parts, else
// its message's.
func answerOf(res *task.Result) task.Message {
	m := task.Message{Role: task.RoleAgent}
	if res == nil {
		return m
	}
	for _, art := range res.Artifacts {
		m.Parts = append(m.Parts, art.Parts...)
	}
	if len(m.Parts) == 0 && res.Message != nil {
		m.Parts = append(m.Parts, res.Message.Parts...)
	}
	return m
}

// FeedbackIntro starts the user message a retried attempt gets.
const FeedbackIntro = "Your previous answer did not meet its contract. Fix the following and answer again:"

// feedback is the user turn a retry adds: every failed assertion's message
// and why it failed, so that the agent sees what to fix.
func feedback(failed []ValidationResult) string {
	var b strings.Builder
	b.WriteString(FeedbackIntro)
	for _, r := range failed {
		b.WriteString("\n- ")
		b.WriteString(describe(r))
	}
	return b.String()
}

// question is the agent message an escalated violation asks.
func question(failed []ValidationResult) string {
	var b strings.Builder
	b.WriteString("The answer did not meet its contract:")
	for _, r := range failed {
		b.WriteString("\n- ")
		b.WriteString(describe(r))
	}
	b.WriteString("\nReply to run the step again with your reply as its input, or cancel the task.")
	return b.String()
}

// blockedSummary says what kept a step from running.
func blockedSummary(g GateResult) string {
	if len(g.BlockedBy) > 0 {
		return strings.Join(g.BlockedBy, "; ")
	}
	var f []ValidationResult
	for _, r := range g.Results {
		if !r.Passed {
			f = append(f, r)
		}
	}
	if len(f) == 0 {
		return "pre-gate failed"
	}
	return summary(f)
}

// Newest returns the verified result of the newest checked attempt among
// recs (a task's execution record, oldest first): the Data of the newest
// verdict evidence recorded by a gate (GateStep). It returns nil when no
// attempt of the task was checked.
func Newest(recs []task.Record) (*VerifiedResult, error) {
	for i := len(recs) - 1; i >= 0; i-- {
		vr, err := NewestIn(recs[i].Evidence)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", recs[i].Seq, err)
		}
		if vr != nil {
			return vr, nil
		}
	}
	return nil, nil
}

// NewestIn returns the verified result among one record's evidence (the
// gate's verdict), or nil when it holds none.
func NewestIn(ev []task.Evidence) (*VerifiedResult, error) {
	data := NewestJSONIn(ev)
	if data == nil {
		return nil, nil
	}
	var vr VerifiedResult
	if err := json.Unmarshal(data, &vr); err != nil {
		return nil, fmt.Errorf("verified result: %w", err)
	}
	return &vr, nil
}

// NewestJSONIn is NewestIn's verified result as the gate encoded it, for
// a caller that only passes it on as JSON (nil when ev holds none).
func NewestJSONIn(ev []task.Evidence) json.RawMessage {
	for j := len(ev) - 1; j >= 0; j-- {
		if ev[j].Step == GateStep && ev[j].Kind == task.EvidenceVerdict && len(ev[j].Data) > 0 {
			return ev[j].Data
		}
	}
	return nil
}
