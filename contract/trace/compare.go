package trace

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gowebpki/jcs"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/task"
)

// StatusUnchecked is the verdict, in a Comparison, of a step whose task no
// gate checked (no contract recorded a verdict, and none was given to
// judge it).
const StatusUnchecked Status = "unchecked"

// CompareOptions configure Compare.
type CompareOptions struct {
	// Contract, when set, judges both traces offline by its steps, as
	// Verify does, whatever their gates recorded (the original must have
	// been recorded under this contract or under none: *OtherContractError
	// otherwise; the replay ran on the agent chosen for it, whose own
	// gate does not matter). A task on its own is judged with the
	// resources its input carries (contract.StepResources), as its step
	// was handed them. Nil compares the verdicts the gates recorded.
	Contract *contract.Compiled
	// Step is the step a one-task trace ran (Options.Step); by default the
	// original's own step (Envelope.Step) when Contract has it.
	Step string
	// WorkDir is where file resources are looked for (Options.WorkDir).
	WorkDir string
	// Now is the clock of the gates' timings (Options.Now).
	Now func() time.Time
}

// Comparison is what Compare found between a recorded task and its
// replay.
type Comparison struct {
	Original Side `json:"original"`
	Replay   Side `json:"replay"`
	// JudgedBy says where the verdicts come from: "recorded" (what the
	// gates recorded) or "contract ID" (both judged offline by it).
	JudgedBy string `json:"judgedBy"`
	// Steps are the verdicts, step by step: the original's steps in
	// their order, then those only the replay has.
	Steps []StepChange `json:"steps"`
	// Answers compare the answers: the task's own, or for a multi-step
	// run each step's, in the order of Steps.
	Answers []AnswerDiff `json:"answers"`
	// Regressions name, one line each, what passed or succeeded in the
	// original and no longer does in the replay. Empty: no regression.
	Regressions []string `json:"regressions"`
}

// Side is one task of a Comparison.
type Side struct {
	TaskID string     `json:"taskId"`
	Agent  string     `json:"agent"`
	State  task.State `json:"state"`
}

// StepChange is one step's verdict in the original and in the replay.
type StepChange struct {
	Step     string     `json:"step"`
	Original StepReport `json:"original"`
	Replay   StepReport `json:"replay"`
	// Checks are the checks whose outcome differs between the two, in
	// the replay's order.
	Checks []CheckChange `json:"checks,omitempty"`
	// Regression says the step passed (or its task succeeded) in the
	// original and does not in the replay.
	Regression bool `json:"regression,omitempty"`
}

// CheckChange is a check that passed in one and not in the other.
type CheckChange struct {
	Type    contract.AssertionType `json:"type"`
	Check   string                 `json:"check"`
	Message string                 `json:"message"`
	// Was and Now are whether it passed in the original and the replay.
	Was bool `json:"was"`
	Now bool `json:"now"`
	// Reason is why it failed, in the one where it failed.
	Reason string `json:"reason,omitempty"`
}

// AnswerDiff compares two answers.
type AnswerDiff struct {
	// Step is the step whose answers these are ("" for the task's own).
	Step string `json:"step,omitempty"`
	Same bool   `json:"same"`
	// Diff is a unified line diff of the original's answer (---) and the
	// replay's (+++), with three lines of context; empty when Same.
	Diff string `json:"diff,omitempty"`
}

// Compare compares the trace of a recorded task (original) with the trace
// of its replay: the two tasks' states, their answers (a unified line
// diff of the text of what each delivered, or the answer its gate
// rejected, data parts as indented canonical JSON, RFC 8785), and their
// verdicts step by step with each check whose outcome changed. A run
// (a task with children) is compared step by step: each step's child in
// the original with the replay's child of the same step.
//
// A regression is a step whose verdict passed and now does not (failed,
// blocked, not run), a step's task or the task itself that succeeded and
// now does not. A step the replay's gates did not check (StatusUnchecked)
// is no regression by itself: give Contract to judge it.
func Compare(ctx context.Context, original, replay *Trace, o CompareOptions) (*Comparison, error) {
	if original == nil || original.Task == nil || replay == nil || replay.Task == nil {
		return nil, fmt.Errorf("compare: a trace has no task")
	}
	cmp := &Comparison{
		Original:    side(original.Task),
		Replay:      side(replay.Task),
		JudgedBy:    "recorded",
		Steps:       []StepChange{},
		Answers:     []AnswerDiff{},
		Regressions: []string{},
	}
	var before, after []StepReport
	if c := o.Contract; c != nil {
		if err := sameContract(c, original); err != nil {
			return nil, err
		}
		step := o.Step
		if _, ok := c.Step(original.Task.Envelope.Step); step == "" && ok && len(original.Children) == 0 {
			step = original.Task.Envelope.Step
		}
		vo := Options{Step: step, WorkDir: o.WorkDir, Now: o.Now}
		rb, err := verifyNode(ctx, c, &original.Node, vo, true)
		if err != nil {
			return nil, fmt.Errorf("judge the original: %w", err)
		}
		ra, err := verifyNode(ctx, c, &replay.Node, vo, true)
		if err != nil {
			return nil, fmt.Errorf("judge the replay: %w", err)
		}
		before, after = rb.Steps, ra.Steps
		cmp.JudgedBy = "contract " + c.Contract().ID
	} else {
		var err error
		if before, err = recordedSteps(&original.Node); err != nil {
			return nil, fmt.Errorf("the original's verdicts: %w", err)
		}
		if after, err = recordedSteps(&replay.Node); err != nil {
			return nil, fmt.Errorf("the replay's verdicts: %w", err)
		}
	}
	cmp.Steps = pairSteps(before, after, len(replay.Children) > 0)
	if o := original.Task.State; o == task.StateSucceeded && replay.Task.State != o {
		cmp.Regressions = append(cmp.Regressions, fmt.Sprintf("task %s succeeded, its replay %s is %s", original.Task.ID, replay.Task.ID, replay.Task.State))
	}
	for i := range cmp.Steps {
		if line := regression(&cmp.Steps[i]); line != "" {
			cmp.Regressions = append(cmp.Regressions, line)
		}
	}
	cmp.Answers = compareAnswers(original, replay)
	return cmp, nil
}

func side(t *task.Task) Side { return Side{TaskID: t.ID, Agent: t.Agent, State: t.State} }

// recordedSteps returns the verdicts n's gates recorded: for a run, each
// child's by its step; else the task's own, if a gate checked it.
func recordedSteps(n *Node) ([]StepReport, error) {
	if len(n.Children) == 0 {
		vr, err := contract.Newest(n.Timeline)
		if err != nil || vr == nil {
			return nil, err
		}
		sr := recordedStep(n, vr)
		if vr.Step != "" {
			sr.Step = vr.Step
		}
		return []StepReport{sr}, nil
	}
	var out []StepReport
	for _, k := range n.Children {
		if k == nil || k.Task == nil {
			continue
		}
		vr, err := contract.Newest(k.Timeline)
		if err != nil {
			return nil, fmt.Errorf("task %s: %w", k.Task.ID, err)
		}
		out = append(out, recordedStep(k, vr))
	}
	return out, nil
}

// recordedStep is the StepReport of n's task with the verdict vr its gate
// recorded (nil: none).
func recordedStep(n *Node, vr *contract.VerifiedResult) StepReport {
	t := n.Task
	sr := StepReport{Step: t.Envelope.Step, TaskID: t.ID, Agent: t.Agent, State: t.State, VerifiedResult: vr}
	switch {
	case vr != nil:
		// A step that waits for input (its gate escalated) has its
		// verdict already.
		sr.Status, sr.Reason = statusOf(vr), vr.Error
	case !t.State.Terminal():
		sr.Status, sr.Reason = StatusNotRun, fmt.Sprintf("task %s is %s: the step has not finished", t.ID, t.State)
	default:
		sr.Status, sr.Reason = StatusUnchecked, "no gate checked it"
	}
	return sr
}

// pairSteps pairs the verdicts of the original and the replay by step. A
// step the replay lacks did not run in it when the replay is a run (run:
// it has children), else it was not checked.
func pairSteps(before, after []StepReport, run bool) []StepChange {
	out := []StepChange{}
	seen := map[string]bool{}
	find := func(list []StepReport, id string) (StepReport, bool) {
		for _, s := range list {
			if s.Step == id {
				return s, true
			}
		}
		return StepReport{Step: id}, false
	}
	for _, b := range before {
		seen[b.Step] = true
		a, ok := find(after, b.Step)
		if !ok {
			a.Status, a.Reason = StatusUnchecked, "no gate of the replay checked it"
			if run {
				a.Status, a.Reason = StatusNotRun, "no task of the replay ran step "+b.Step
			}
		}
		out = append(out, StepChange{Step: b.Step, Original: b, Replay: a, Checks: checkChanges(b.VerifiedResult, a.VerifiedResult)})
	}
	for _, a := range after {
		if seen[a.Step] {
			continue
		}
		b := StepReport{Step: a.Step, Status: StatusUnchecked, Reason: "no gate of the original checked it"}
		out = append(out, StepChange{Step: a.Step, Original: b, Replay: a})
	}
	return out
}

// regression marks s and returns its line when the step passed (or its
// task succeeded) in the original and does not in the replay; "" if not.
func regression(s *StepChange) string {
	b, a := s.Original, s.Replay
	var why string
	switch {
	case b.Status == StatusPassed && a.Status != StatusPassed && a.Status != StatusUnchecked:
		why = fmt.Sprintf("passed, now %s", strings.ReplaceAll(string(a.Status), "_", " "))
		// The asserts that now fail say why; a suggest that now fails
		// is named only when no assert is (strict: it fails the step).
		var failed, suggested []string
		for _, c := range s.Checks {
			if !c.Was || c.Now {
				continue
			}
			line := fmt.Sprintf("[%s %s] %s", c.Type, c.Check, c.Message)
			if c.Type == contract.Suggest {
				suggested = append(suggested, line)
			} else {
				failed = append(failed, line)
			}
		}
		if len(failed) == 0 {
			failed = suggested
		}
		if len(failed) > 0 {
			why += ": " + strings.Join(failed, "; ")
		} else if a.Reason != "" {
			why += ": " + a.Reason
		}
	case b.State == task.StateSucceeded && a.State != "" && a.State != task.StateSucceeded:
		why = fmt.Sprintf("its task succeeded, now %s", a.State)
	default:
		return ""
	}
	s.Regression = true
	return "step " + s.Step + " " + why
}

// checkChanges lists the checks (pre-gate then post-gate) whose outcome
// differs between two verified results, matched by assertion type,
// check and message, in order.
func checkChanges(before, after *contract.VerifiedResult) []CheckChange {
	if before == nil || after == nil {
		return nil
	}
	type key struct {
		typ        contract.AssertionType
		check, msg string
		occurrence int
	}
	keys := func(vr *contract.VerifiedResult) ([]key, map[key]contract.ValidationResult) {
		n := map[key]int{}
		var order []key
		byKey := map[key]contract.ValidationResult{}
		for _, r := range slices.Concat(vr.Verification.PreGate.Results, vr.Verification.PostGate.Results) {
			k := key{typ: r.Type, check: r.Check, msg: r.Message}
			k.occurrence = n[k]
			n[key{typ: r.Type, check: r.Check, msg: r.Message}]++
			order = append(order, k)
			byKey[k] = r
		}
		return order, byKey
	}
	_, was := keys(before)
	order, now := keys(after)
	var out []CheckChange
	for _, k := range order {
		b, ok := was[k]
		a := now[k]
		if !ok || b.Passed == a.Passed {
			continue
		}
		reason := a.Reason
		if a.Passed {
			reason = b.Reason
		}
		out = append(out, CheckChange{Type: a.Type, Check: a.Check, Message: a.Message, Was: b.Passed, Now: a.Passed, Reason: reason})
	}
	return out
}

// compareAnswers diffs the answers: of each step of a run (children
// paired by step, the original's order first), else of the task itself.
func compareAnswers(original, replay *Trace) []AnswerDiff {
	if len(original.Children) == 0 && len(replay.Children) == 0 {
		return []AnswerDiff{answerDiff("", &original.Node, &replay.Node)}
	}
	byStep := func(n *Node) ([]string, map[string]*Node) {
		var order []string
		m := map[string]*Node{}
		for _, k := range n.Children {
			if k == nil || k.Task == nil {
				continue
			}
			order = append(order, k.Task.Envelope.Step)
			m[k.Task.Envelope.Step] = k
		}
		return order, m
	}
	bo, bm := byStep(&original.Node)
	ao, am := byStep(&replay.Node)
	out := []AnswerDiff{}
	seen := map[string]bool{}
	for _, id := range slices.Concat(bo, ao) {
		if !seen[id] {
			seen[id] = true
			out = append(out, answerDiff(id, bm[id], am[id]))
		}
	}
	return out
}

// answerDiff compares the answers of two nodes (nil: no task).
func answerDiff(step string, before, after *Node) AnswerDiff {
	d := AnswerDiff{Step: step}
	b, a := Answer(before), Answer(after)
	if b == a {
		d.Same = true
		return d
	}
	name := func(n *Node) string {
		if n == nil {
			return "(no task)"
		}
		return n.Task.ID
	}
	d.Diff = unifiedDiff("original "+name(before), "replay "+name(after), b, a, 3)
	return d
}

// Answer is the text of what n's task answered on its last attempt, as
// Compare diffs it: the output its gate judged (contract.FromRecord: the
// answer it rejected, or the task's artifacts and status message), each
// part on lines of its own (text as it is, data as indented canonical
// JSON, a URL as itself, a file by its size, type, name and SHA-256;
// the final message only when no artifact carries the answer), then the
// agent's error. Empty for a task that never ran or a nil node.
func Answer(n *Node) string {
	if n == nil || n.Task == nil {
		return ""
	}
	r := contract.FromRecord(n.Task, n.Timeline)
	var b strings.Builder
	line := func(s string) {
		b.WriteString(s)
		if !strings.HasSuffix(s, "\n") {
			b.WriteByte('\n')
		}
	}
	if r.Result != nil {
		for _, a := range r.Result.Artifacts {
			for _, p := range a.Parts {
				line(partText(p))
			}
		}
		// The final message is the answer when no artifact carries one
		// (else it says the answer again, or how the task ended).
		if m := r.Result.Message; m != nil && len(r.Result.Artifacts) == 0 {
			for _, p := range m.Parts {
				line(partText(p))
			}
		}
	}
	if r.AgentError != "" {
		line("agent error: " + r.AgentError)
	}
	return b.String()
}

// partText is one part of an answer as Answer writes it.
func partText(p task.Part) string {
	switch p.Kind {
	case task.PartText:
		return p.Text
	case task.PartData:
		canon, err := jcs.Transform(p.Data)
		if err != nil {
			return string(p.Data)
		}
		var buf bytes.Buffer
		if json.Indent(&buf, canon, "", "  ") != nil {
			return string(canon)
		}
		return buf.String()
	case task.PartURL:
		return p.URL
	}
	s := fmt.Sprintf("<%d bytes", len(p.Raw))
	for _, f := range []string{p.MediaType, p.Filename} {
		if f != "" {
			s += " " + f
		}
	}
	return fmt.Sprintf("%s sha256:%x>", s, sha256.Sum256(p.Raw))
}
