package contract

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pactum/pactum/task"
)

// DefaultMaxParallel is how many steps of a run run at once unless
// RunOptions.MaxParallel says otherwise.
const DefaultMaxParallel = 4

// RunArtifact is the id and name of the artifact a finished run holds:
// every step's verified result.
const RunArtifact = "verified-results"

// ResourceKey is the key, in the metadata of the parts of a step's input
// that carry a consumed resource, of {"resource": ID, "type": TYPE}: how
// a step (and its gate) tells which part is which resource.
const ResourceKey = "pactum"

// RunOptions configure a multi-step contract run (Compiled.Runner).
type RunOptions struct {
	// MaxParallel bounds the steps running at once (default 4,
	// DefaultMaxParallel).
	MaxParallel int
	// Agent names the agent a step's child task runs on. Default:
	// StepAgent(contract id, step id), the step's virtual agent, which
	// runs the step's agent behind the step's gate.
	Agent func(step *ContractStep) string
	// WorkDir returns the directory a step's file resources are read from
	// once it has succeeded (its agent's working directory). Nil: the
	// process's working directory.
	WorkDir func(step *ContractStep) string
	// Verified returns the verified result of a settled step's task (the
	// newest the step's gate recorded in its execution record), for the
	// run's final artifact; nil or a nil result leaves the step's entry
	// without one.
	Verified func(ctx context.Context, child *task.Task) (*VerifiedResult, error)
}

// StepAgent is the name of the virtual agent that runs step stepID of
// contract contractID in a run: the step's agent behind the step's gate.
func StepAgent(contractID, stepID string) string { return contractID + "/" + stepID }

// RunResults is the data of a run's final artifact (RunArtifact).
type RunResults struct {
	Contract string `json:"contract"`
	// Passed is true when the run succeeded and every step's verified
	// result passed (a step with onViolation continue may succeed
	// without); Compiled.Results is the rule.
	Passed bool `json:"passed"`
	// Steps are the steps in the contract's order.
	Steps []RunStep `json:"steps"`
}

// RunStep is one step of a finished run.
type RunStep struct {
	Step           string          `json:"step"`
	Task           string          `json:"task"`
	Agent          string          `json:"agent"`
	VerifiedResult *VerifiedResult `json:"verifiedResult,omitempty"`
}

// Runner returns the decision logic of a run of c: the runner of a parent
// task whose children are c's steps (task.Result.Spawn). Called with the
// children spawned so far (task.Request.Children, what is stored), it
//
//   - fails the run permanently when a step's child failed, was
//     dead-lettered or canceled, naming the step and the child's reason
//     (code contract_violation when the child failed with that code);
//   - spawns, in the contract's order, the steps without a child whose
//     dependsOn have all succeeded, as many as keep at most MaxParallel
//     steps unsettled; each child's input is the run's input followed by
//     the resources the step consumes (InjectResources), read from the
//     succeeded steps' stored outputs (ExtractResources); a resource that
//     no step creates is the run's input itself (InputResources): its
//     parts carry the resource's label instead of being repeated. A
//     bridge step's input (BridgeKey) is the resources it consumes alone
//     (the parts of the run's input that carry none are left out): they
//     are its MCP tool's arguments (ToolArguments);
//   - waits while children run;
//   - finishes when every step has succeeded, with the artifact
//     "verified-results" (RunArtifact): a text summary and a data part
//     (RunResults) holding every step's verified result.
//
// It keeps nothing between calls, so a run resumed after a crash goes on
// from what the store holds.
func (c *Compiled) Runner(o RunOptions) task.Runner {
	if o.MaxParallel <= 0 {
		o.MaxParallel = DefaultMaxParallel
	}
	if o.Agent == nil {
		id := c.contract.ID
		o.Agent = func(s *ContractStep) string { return StepAgent(id, s.ID) }
	}
	return task.RunnerFunc(func(ctx context.Context, req *task.Request, _ task.Emit) (*task.Result, error) {
		return c.decide(ctx, &o, req)
	})
}

func (c *Compiled) decide(ctx context.Context, o *RunOptions, req *task.Request) (*task.Result, error) {
	byStep := make(map[string]*task.Task, len(req.Children))
	unsettled := 0
	for _, k := range req.Children {
		id := k.Envelope.Step
		if _, ok := c.steps[id]; !ok {
			return nil, task.Permanent(fmt.Errorf("contract %s: child %s runs step %q, which the contract does not have", c.contract.ID, k.ID, id))
		}
		byStep[id] = k
		switch {
		case !k.State.Terminal():
			unsettled++
		case k.State != task.StateSucceeded:
			return nil, c.stepFailed(k)
		}
	}
	done := make(map[string]bool, len(byStep))
	for id, k := range byStep {
		if k.State == task.StateSucceeded {
			done[id] = true
		}
	}
	if len(done) == len(c.order) {
		return c.finish(ctx, o, byStep)
	}
	var spawn []task.Child
	var available map[string]Resource
	for _, id := range c.order {
		if unsettled+len(spawn) >= o.MaxParallel {
			break
		}
		if byStep[id] != nil || !c.ready(id, done) {
			continue
		}
		s := c.steps[id]
		if available == nil {
			available = c.available(o, byStep)
		}
		in := c.runInput(s, req.Envelope.Input)
		if s.Bridged() {
			in = slices.DeleteFunc(in, func(p task.Part) bool { return p.Metadata[ResourceKey] == nil })
		}
		parts := append(in, InjectResources(s, available)...)
		spawn = append(spawn, task.Child{
			Step:  id,
			Agent: o.Agent(s.step),
			Input: task.Message{Role: task.RoleUser, Parts: parts, Metadata: c.missing(o, s, byStep, available)},
		})
	}
	switch {
	case len(spawn) > 0:
		names := make([]string, len(spawn))
		for i, ch := range spawn {
			names[i] = ch.Step
		}
		return &task.Result{Spawn: spawn, Reason: fmt.Sprintf("contract %s: starting step %s (%d of %d done)", c.contract.ID, strings.Join(names, ", "), len(done), len(c.order))}, nil
	case unsettled > 0:
		return &task.Result{Wait: true}, nil
	}
	// Nothing runs and nothing can start: only a contract that Validate
	// refuses (a cycle, an unknown dependency) gets here.
	var stuck []string
	for _, id := range c.order {
		if !done[id] {
			stuck = append(stuck, id)
		}
	}
	return nil, task.Permanent(fmt.Errorf("contract %s: steps %s can never start (their dependencies cannot succeed)", c.contract.ID, strings.Join(stuck, ", ")))
}

// runInput returns the parts of the run's input as step s gets them: a
// copy, in which the parts that are a resource s consumes and no step
// creates (the run's input, InputResources) carry its label: the text
// parts for a message, file or artifact, the first data part for data.
func (c *Compiled) runInput(s *CompiledStep, in task.Message) []task.Part {
	parts := make([]task.Part, len(in.Parts))
	copy(parts, in.Parts)
	inputs := c.InputResources()
	for _, id := range s.step.Consumes {
		if !slices.Contains(inputs, id) {
			continue
		}
		typ := c.resource(id).def.Type
		if typ == "" {
			typ = ResourceData
		}
		for i := range parts {
			p := &parts[i]
			if (typ == ResourceData) != (p.Kind == task.PartData) || (p.Kind != task.PartData && p.Kind != task.PartText) {
				continue
			}
			if p.Metadata[ResourceKey] != nil {
				continue // already another resource's
			}
			md := make(map[string]any, len(p.Metadata)+1)
			maps.Copy(md, p.Metadata)
			md[ResourceKey] = map[string]any{"resource": id, "type": string(typ)}
			p.Metadata = md
			if typ == ResourceData {
				break
			}
		}
	}
	return parts
}

// InputResources returns the resources some step consumes and no step
// creates, in the order the steps consume them: what a run's input
// provides.
func (c *Compiled) InputResources() []string {
	created := map[string]bool{}
	for _, st := range c.contract.Steps {
		for _, id := range st.Creates {
			created[id] = true
		}
	}
	var out []string
	for _, st := range c.contract.Steps {
		for _, id := range st.Consumes {
			if !created[id] && !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

// ready reports whether every step id depends on has succeeded.
func (c *Compiled) ready(id string, done map[string]bool) bool {
	for _, dep := range c.steps[id].step.DependsOn {
		if !done[dep] {
			return false
		}
	}
	return true
}

// stepFailed is the run's error for a step whose child ended other than
// succeeded.
func (c *Compiled) stepFailed(k *task.Task) error {
	msg := fmt.Sprintf("contract %s: step %s (task %s) %s", c.contract.ID, k.Envelope.Step, k.ID, k.State)
	if k.Reason != "" {
		msg += ": " + k.Reason
	}
	code := task.CodeAgentFailed
	if k.ErrorCode == task.CodeContractViolation {
		code = task.CodeContractViolation
	}
	return task.Permanent(&task.Error{Code: code, Message: msg})
}

// available returns the resources the succeeded steps created, read from
// their stored outputs: when several steps create one resource, the one
// declared last wins.
func (c *Compiled) available(o *RunOptions, byStep map[string]*task.Task) map[string]Resource {
	out := map[string]Resource{}
	for _, id := range c.order {
		k := byStep[id]
		if k == nil || k.State != task.StateSucceeded {
			continue
		}
		s := c.steps[id]
		in := &Input{Task: k, Result: StoredResult(k)}
		if o.WorkDir != nil {
			in.WorkDir = o.WorkDir(s.step)
		}
		found, _ := ExtractResources(s, in)
		for rid, r := range found {
			out[rid] = r
		}
	}
	return out
}

// missing says, for each resource step s consumes that available does
// not hold, which step should have created it and what it answered
// instead: the child's input metadata {"pactum": {"missing": {ID: WHY}}}
// (ResourceKey), which the step's pre-gate names in its reason
// (MissingReason). Nil when nothing is missing.
func (c *Compiled) missing(o *RunOptions, s *CompiledStep, byStep map[string]*task.Task, available map[string]Resource) map[string]any {
	var why map[string]any
	for _, id := range s.step.Consumes {
		if _, ok := available[id]; ok {
			continue
		}
		if why == nil {
			why = map[string]any{}
		}
		why[id] = "no step that creates it has succeeded"
		if slices.Contains(c.InputResources(), id) {
			why[id] = "the run's input does not hold it"
		}
		// The creator whose output would have been used: the last in
		// the contract's order that succeeded (available's rule).
		for i := len(c.order) - 1; i >= 0; i-- {
			cs := c.steps[c.order[i]]
			k := byStep[c.order[i]]
			if !slices.Contains(cs.step.Creates, id) || k == nil || k.State != task.StateSucceeded {
				continue
			}
			in := &Input{Task: k, Result: StoredResult(k)}
			if o.WorkDir != nil {
				in.WorkDir = o.WorkDir(cs.step)
			}
			if _, w := extractResource(c.resource(id).def, in); w != "" {
				why[id] = fmt.Sprintf("step %s (task %s) %s", cs.step.ID, k.ID, w)
			}
			break
		}
	}
	if why == nil {
		return nil
	}
	return map[string]any{ResourceKey: map[string]any{"missing": why}}
}

// MissingReason returns what the run recorded on a step's input about a
// resource it consumes and was not given (missing): which step should
// have created it and what it answered instead; "" when nothing was
// recorded.
func MissingReason(input task.Message, id string) string {
	label, _ := input.Metadata[ResourceKey].(map[string]any)
	missing, _ := label["missing"].(map[string]any)
	why, _ := missing[id].(string)
	return why
}

// StoredResult is a settled task's output as ExtractResources and the
// checks read it: its stored artifacts and status message.
func StoredResult(t *task.Task) *task.Result {
	return &task.Result{Artifacts: t.Artifacts, Message: t.StatusMessage}
}

// InjectResources returns the parts that carry to step s the resources it
// consumes, in the order it lists them, from available (by id); a
// resource not available is left out (the step's pre-gate blocks it). A
// resource with JSON content (data, or an artifact or a JSON file) is a
// data part, any other a text part (a file's with its file name and media
// type); each part's metadata labels it: {"pactum": {"resource": ID,
// "type": TYPE}} (ResourceKey).
func InjectResources(s *CompiledStep, available map[string]Resource) []task.Part {
	var out []task.Part
	seen := map[string]bool{}
	for _, id := range s.step.Consumes {
		r, ok := available[id]
		if !ok || seen[id] {
			continue
		}
		seen[id] = true
		typ := r.Type
		if typ == "" {
			typ = ResourceData
		}
		p := task.TextPart(r.Text)
		if r.Data != nil {
			if b, err := json.Marshal(r.Data); err == nil {
				p = task.DataPart(b)
			}
		}
		if p.Kind == task.PartText {
			p.MediaType = r.MediaType
			if typ == ResourceFile {
				p.Filename = cmpOr(r.Location, r.ID)
			}
		}
		p.Metadata = map[string]any{ResourceKey: map[string]any{"resource": id, "type": string(typ)}}
		out = append(out, p)
	}
	return out
}

// InjectedResources reads back the resources InjectResources put in msg:
// every part labelled with a resource step s consumes, as that resource
// (its definition from the contract, its content from the part).
func InjectedResources(s *CompiledStep, msg task.Message) map[string]Resource {
	out := map[string]Resource{}
	for _, p := range msg.Parts {
		label, _ := p.Metadata[ResourceKey].(map[string]any)
		id, _ := label["resource"].(string)
		if id == "" {
			continue
		}
		r := Resource{ContractResource: s.contract.resource(id).def}
		switch p.Kind {
		case task.PartData:
			var x any
			if json.Unmarshal(p.Data, &x) != nil {
				continue
			}
			r.Data, r.Text, r.MediaType = x, strings.TrimSpace(string(p.Data)), "application/json"
		case task.PartText:
			if prev, ok := out[id]; ok && prev.Data == nil {
				// The run's input as a message: its text parts joined.
				prev.Text += "\n" + p.Text
				out[id] = prev
				continue
			}
			r.Text, r.MediaType = p.Text, cmpOr(p.MediaType, "text/plain")
		default:
			continue
		}
		out[id] = r
	}
	return out
}

// Results returns what a run of c shows of its steps: one RunStep per
// child among children (the run's children, as task.Coordinator.Children
// returns them), in the contract's order (a child running a step c does
// not have comes after, in the order given), each with the verified
// result verified returns for the child. verified is asked only about a
// child that has started an attempt (no attempt, nothing was checked); a
// nil verified leaves every step without one.
//
// It is the one rule of whether a run passed, for the artifact a finished
// run holds (Runner) and for a stored run shown while or after it runs
// (the run task's verified result on the wire): Passed is true when the
// run succeeded (succeeded: the run task's state is succeeded, or Runner
// is finishing it) and every step of the contract has a child whose
// newest verified result passed. So a step without a verified result (not
// checked) fails it, and so does a step with onViolation continue that
// succeeded without passing its post-gate (delivered despite the
// violation): the run succeeds, but did not pass (docs/contracts.md,
// "Multi-step runs").
func (c *Compiled) Results(ctx context.Context, succeeded bool, children []*task.Task, verified func(ctx context.Context, child *task.Task) (*VerifiedResult, error)) (*RunResults, error) {
	rank := make(map[string]int, len(c.order))
	for i, id := range c.order {
		rank[id] = i
	}
	ordered := slices.Clone(children)
	slices.SortStableFunc(ordered, func(a, b *task.Task) int {
		ra, oka := rank[a.Envelope.Step]
		rb, okb := rank[b.Envelope.Step]
		switch {
		case !oka && !okb:
			return 0
		case !oka:
			return 1
		case !okb:
			return -1
		}
		return ra - rb
	})
	rr := &RunResults{Contract: c.contract.ID, Passed: succeeded, Steps: make([]RunStep, 0, len(ordered))}
	passed := make(map[string]bool, len(c.order))
	for _, k := range ordered {
		rs := RunStep{Step: k.Envelope.Step, Task: k.ID, Agent: k.Agent}
		if verified != nil && k.Attempt > 0 {
			vr, err := verified(ctx, k)
			if err != nil {
				return nil, fmt.Errorf("contract %s: verified result of step %s (task %s): %w", c.contract.ID, rs.Step, k.ID, err)
			}
			rs.VerifiedResult = vr
		}
		if _, ok := rank[rs.Step]; !ok || rs.VerifiedResult == nil || !rs.VerifiedResult.Verification.Passed {
			rr.Passed = false
		} else {
			passed[rs.Step] = true
		}
		rr.Steps = append(rr.Steps, rs)
	}
	if len(passed) != len(c.order) {
		rr.Passed = false
	}
	return rr, nil
}

// finish ends a run whose steps all succeeded.
func (c *Compiled) finish(ctx context.Context, o *RunOptions, byStep map[string]*task.Task) (*task.Result, error) {
	children := make([]*task.Task, 0, len(c.order))
	for _, id := range c.order {
		children = append(children, byStep[id])
	}
	rr, err := c.Results(ctx, true, children, o.Verified)
	if err != nil {
		return nil, err
	}
	lines := make([]string, 0, len(rr.Steps))
	for _, rs := range rr.Steps {
		line := fmt.Sprintf("%s: succeeded (task %s)", rs.Step, rs.Task)
		switch vr := rs.VerifiedResult; {
		case vr == nil:
			line += ", not checked"
		case vr.Verification.Passed:
			n := len(vr.Verification.PostGate.Results)
			checks := "checks"
			if n == 1 {
				checks = "check"
			}
			line += fmt.Sprintf(", passed (%d %s, %.1f ms)", n, checks, vr.Verification.Timing.TotalMs)
		default:
			line += ", delivered despite a violation: " + vr.Error
			if vr.Error == "" {
				line += "onViolation continue"
			}
		}
		lines = append(lines, line)
	}
	data, err := json.Marshal(rr)
	if err != nil {
		return nil, task.Permanent(fmt.Errorf("contract %s: encode verified results: %w", c.contract.ID, err))
	}
	verdict := "every step verified"
	if !rr.Passed {
		verdict = "every step succeeded, not every step verified"
	}
	text := fmt.Sprintf("contract %s: %s\n%s", c.contract.ID, verdict, strings.Join(lines, "\n"))
	return &task.Result{
		Artifacts: []task.Artifact{{
			ID: RunArtifact, Name: RunArtifact,
			Description: "the verified result of every step of contract " + c.contract.ID,
			Parts:       []task.Part{task.TextPart(text), task.DataPart(data)},
		}},
		Reason: fmt.Sprintf("contract %s: all %d steps succeeded", c.contract.ID, len(c.order)),
	}, nil
}

// StepResources returns the resources step s had in a run: those the
// run put in the input of the step's child task (InjectedResources of
// input, the child's Envelope.Input). It is the one rule of what a step
// of a run was given: the live gate (RunGate) checks it on the task's
// stored envelope, and the offline check of a trace (trace.Verify) on
// the recorded child's, so both check what the agent was actually handed.
func StepResources(s *CompiledStep, input task.Message) map[string]Resource {
	return InjectedResources(s, input)
}

// DoneSteps returns the steps done in a run whose children are children
// (the parent's children, as task.Coordinator.Children returns them): a
// step is done when its child has succeeded. It is the one rule of which
// steps were done before a step ran: the live gate (RunGate) applies it
// to the run's children when the step's attempt starts, the offline check
// of a trace (trace.Verify) to the trace's children. They agree on every
// dependency: a step is spawned only once its dependencies have
// succeeded, and succeeded is final.
func DoneSteps(children []*task.Task) map[string]bool {
	done := map[string]bool{}
	for _, k := range children {
		if k != nil && k.State == task.StateSucceeded {
			done[k.Envelope.Step] = true
		}
	}
	return done
}

// RunGate returns step s's gate as it runs in a contract run (the
// Middleware of the step's virtual agent), with o.Resources and o.Done
// set unless given:
//
//   - the resources the step consumes are those the run put in the
//     child's input (StepResources of the task's envelope input): what
//     the agent was given is what the pre-gate checks, read from the
//     child's own stored envelope, so it needs no read and no memory and
//     holds after a crash or on another node;
//   - the steps done are read from the run: siblings(ctx, parent) returns
//     the parent's children (task.Coordinator.Children), and the steps
//     done are DoneSteps of them. A task of the virtual agent that has no
//     parent has no step done: a step with dependencies runs only in a
//     run.
//
// trace.Verify checks a recorded run by the same two functions.
func (s *CompiledStep) RunGate(o GateOptions, siblings func(ctx context.Context, parent string) ([]*task.Task, error)) task.Middleware {
	if o.Resources == nil {
		o.Resources = func(_ context.Context, a *task.Attempt) (map[string]Resource, error) {
			return StepResources(s, a.Task.Envelope.Input), nil
		}
	}
	if o.Done == nil {
		o.Done = func(ctx context.Context, a *task.Attempt) (map[string]bool, error) {
			parent := a.Task.Envelope.ParentTaskID
			if parent == "" || len(s.step.DependsOn) == 0 || siblings == nil {
				return map[string]bool{}, nil
			}
			kids, err := siblings(ctx, parent)
			if err != nil {
				return nil, err
			}
			return DoneSteps(kids), nil
		}
	}
	return s.Middleware(o)
}
