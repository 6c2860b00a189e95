package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/task"
)

// MetadataKey is the key, in the metadata of a step's input message, of
// what the step is: {"workflow": NAME, "step": I, "steps": N, "expect":
// Expect}. The step's gate (Gate) reads its expectation there, from the
// child's own stored envelope, so it needs no other read and holds after
// a crash or on another node. In the input of a custom run, the key
// holds {"agents": [...]}: the agents to run, in order. In the input of
// any run, and of each of its steps, it may hold {"arguments": STR}: the
// run's arguments (Arguments).
const MetadataKey = "pactum"

// StepAgent is the name of the virtual agent that runs agent in a
// workflow: agent's runtime behind the handoff gate (Gate). It is reached
// only as a child of a run.
func StepAgent(agent string) string { return "workflow/" + agent }

// RunOptions configure a run's decision logic (Runner).
type RunOptions struct {
	// Agent names the agent a step's child task runs on. Default:
	// StepAgent(agent).
	Agent func(agent string) string
}

// stepInfo is what MetadataKey holds in a step's input.
type stepInfo struct {
	Workflow string `json:"workflow"`
	Step     int    `json:"step"`
	Steps    int    `json:"steps"`
	Expect   Expect `json:"expect"`
	// Phases and Description are the run's workflow (its phases' agents),
	// so that the step's gate checks it against the contract of the whole
	// workflow (Contract), the one `pactum contract show workflow.NAME`
	// prints and `pactum verify --workflow` checks against. Absent in a
	// step spawned before they were recorded.
	Phases      [][]string `json:"phases,omitempty"`
	Description string     `json:"description,omitempty"`
	// Arguments are the run's arguments (Arguments); "" when it has none.
	Arguments string `json:"arguments,omitempty"`
}

// workflow returns the workflow the step belongs to, as recorded; false
// when its phases were not recorded.
func (s stepInfo) workflow() (*Workflow, bool) {
	if len(s.Phases) == 0 {
		return nil, false
	}
	w := &Workflow{Name: s.Workflow, Description: s.Description}
	for _, p := range s.Phases {
		w.Phases = append(w.Phases, Phase{Agents: slices.Clone(p)})
	}
	return w, true
}

// Recorded returns the workflow a run's step input names (its
// MetadataKey: the workflow's name, description and phases, as the run
// recorded them when it spawned the step); false when in is not a step's
// input or names no phases.
func Recorded(in task.Message) (*Workflow, bool) {
	info, err := stepOf(in)
	if err != nil {
		return nil, false
	}
	return info.workflow()
}

// Runner returns the decision logic of a run of w: the runner of a parent
// task whose children are w's agents (task.Result.Spawn), one child per
// agent, its Step the agent's name. Called with the children spawned so
// far (task.Request.Children, what is stored), it
//
//   - spawns the agents of the first phase that has no children yet, once
//     every agent of the phases before it has succeeded (a parallel
//     phase's agents together); each child's input is the run's task
//     description, every prior handoff (a parallel phase's merged into
//     one, in declared order) and the heading its own handoff must carry
//     (Input);
//   - waits while children run;
//   - finishes as soon as a step's child failed, was dead-lettered or
//     canceled (a handoff that stayed invalid after the agent's attempts
//     is dead-lettered by its gate): the run stops, its unfinished steps
//     are canceled with it, and its report says BLOCKED;
//   - finishes when every agent has succeeded.
//
// Finishing, it succeeds with the final report as its artifact
// (ReportArtifact: the text and the same content as data): the run's
// outcome is the report's recommendation, not the task's state. It keeps
// nothing between calls, so a run resumed after a crash goes on from what
// the store holds, and an agent that finished is never called again.
func Runner(w *Workflow, o RunOptions) task.Runner {
	if o.Agent == nil {
		o.Agent = StepAgent
	}
	return task.RunnerFunc(func(ctx context.Context, req *task.Request, _ task.Emit) (*task.Result, error) {
		return decide(w, &o, req)
	})
}

// CustomRunner returns the decision logic of the custom workflow: the
// agents of each run are listed in its input (MetadataKey: {"agents":
// [...]}, or a comma-separated string); known says which names are
// agents. A run without a valid list fails at once with
// invalid_argument.
func CustomRunner(known func(agent string) bool, o RunOptions) task.Runner {
	if o.Agent == nil {
		o.Agent = StepAgent
	}
	return task.RunnerFunc(func(ctx context.Context, req *task.Request, _ task.Emit) (*task.Result, error) {
		agents, err := CustomAgents(req.Envelope.Input)
		if err != nil {
			return nil, task.Permanent(&task.Error{Code: task.CodeInvalidArgument, Message: err.Error()})
		}
		var unknown []string
		for _, a := range agents {
			if !known(a) {
				unknown = append(unknown, a)
			}
		}
		if len(unknown) > 0 {
			return nil, task.Permanent(&task.Error{Code: task.CodeInvalidArgument,
				Message: fmt.Sprintf("workflow custom: unknown agents %s", strings.Join(unknown, ", "))})
		}
		w, err := CustomWorkflow(agents)
		if err != nil {
			return nil, task.Permanent(&task.Error{Code: task.CodeInvalidArgument, Message: err.Error()})
		}
		return decide(w, &o, req)
	})
}

// CustomAgents reads the agents of a custom run from its input message:
// the "agents" entry of its MetadataKey metadata, a list of names or one
// comma-separated string.
func CustomAgents(in task.Message) ([]string, error) {
	md, _ := in.Metadata[MetadataKey].(map[string]any)
	var names []string
	switch v := md["agents"].(type) {
	case []any:
		for i, x := range v {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("workflow custom: metadata.%s.agents[%d] is not a string", MetadataKey, i)
			}
			names = append(names, strings.TrimSpace(s))
		}
	case []string:
		for _, s := range v {
			names = append(names, strings.TrimSpace(s))
		}
	case string:
		for s := range strings.SplitSeq(v, ",") {
			names = append(names, strings.TrimSpace(s))
		}
	case nil:
		return nil, fmt.Errorf("workflow custom: the run names no agents (metadata.%s.agents: a list of agent names, in order)", MetadataKey)
	default:
		return nil, fmt.Errorf("workflow custom: metadata.%s.agents must be a list of agent names", MetadataKey)
	}
	return names, nil
}

// CustomInput returns the metadata of a custom run's input that lists
// agents: what CustomAgents reads.
func CustomInput(agents []string) map[string]any {
	list := make([]any, len(agents))
	for i, a := range agents {
		list[i] = a
	}
	return map[string]any{MetadataKey: map[string]any{"agents": list}}
}

// Arguments returns the arguments of a run, or of one of its steps, from
// its input message: the string under "arguments" of its MetadataKey
// metadata (seed 004's optional arguments, given to every agent of the
// run), or "" when there is none; an error when the value is not a
// string. Each step's input repeats them under the heading "# Arguments"
// (Input) and in its own metadata, where runtimes' templates read them
// as {{.Arguments}}.
func Arguments(in task.Message) (string, error) {
	md, _ := in.Metadata[MetadataKey].(map[string]any)
	switch v := md["arguments"].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	default:
		return "", fmt.Errorf("workflow: metadata.%s.arguments must be a string (got %T)", MetadataKey, v)
	}
}

// WithArguments returns md (a run's input metadata, e.g. CustomInput's;
// nil for none) with args recorded as the run's arguments (Arguments). An
// empty args leaves md as it is. md's MetadataKey map is copied, not
// changed.
func WithArguments(md map[string]any, args string) map[string]any {
	if args == "" {
		return md
	}
	out := make(map[string]any, len(md)+1)
	maps.Copy(out, md)
	p := map[string]any{}
	if old, ok := md[MetadataKey].(map[string]any); ok {
		maps.Copy(p, old)
	}
	p["arguments"] = args
	out[MetadataKey] = p
	return out
}

func decide(w *Workflow, o *RunOptions, req *task.Request) (*task.Result, error) {
	byAgent := make(map[string]*task.Task, len(req.Children))
	for _, k := range req.Children {
		byAgent[k.Envelope.Step] = k
	}
	desc := Description(req.Envelope.Input)
	args, err := Arguments(req.Envelope.Input)
	if err != nil {
		return nil, task.Permanent(&task.Error{Code: task.CodeInvalidArgument, Message: err.Error()})
	}
	var prior []string // the handoffs of the phases done, as markdown
	total := len(w.Agents())
	done := 0
	for pi, p := range w.Phases {
		started, unsettled := 0, 0
		for _, a := range p.Agents {
			k := byAgent[a]
			if k == nil {
				continue
			}
			started++
			switch {
			case !k.State.Terminal():
				unsettled++
			case k.State != task.StateSucceeded:
				return finish(w, desc, byAgent, fmt.Sprintf("step %s %s", a, k.State))
			}
		}
		switch {
		case started == 0:
			return spawn(w, o, pi, desc, args, prior, done, total)
		case unsettled > 0 || started < len(p.Agents):
			// A phase is spawned whole, in one transition: a partial
			// phase is only one whose spawn the store has not shown yet.
			return &task.Result{Wait: true}, nil
		}
		hs := make([]*Handoff, len(p.Agents))
		for i, a := range p.Agents {
			h, err := storedHandoff(byAgent[a])
			if err != nil {
				return nil, task.Permanent(fmt.Errorf("workflow %s: step %s: %w", w.Name, a, err))
			}
			hs[i] = h
		}
		if p.Parallel() {
			prior = append(prior, Merge(p.Agents, hs, nextAgents(w, pi)).Markdown())
		} else {
			prior = append(prior, hs[0].Markdown())
		}
		done += len(p.Agents)
	}
	return finish(w, desc, byAgent, "")
}

// nextAgents returns the agents of the phase after phase pi (nil for the
// last).
func nextAgents(w *Workflow, pi int) []string {
	if pi+1 < len(w.Phases) {
		return w.Phases[pi+1].Agents
	}
	return nil
}

// spawn starts phase pi.
func spawn(w *Workflow, o *RunOptions, pi int, desc, args string, prior []string, done, total int) (*task.Result, error) {
	p := w.Phases[pi]
	next := nextAgents(w, pi)
	var children []task.Child
	for i, a := range p.Agents {
		e := Expect{From: a, To: next, Last: next == nil}
		info := stepInfo{Workflow: w.Name, Step: done + i + 1, Steps: total, Expect: e, Phases: phases(w), Description: w.Description, Arguments: args}
		children = append(children, task.Child{
			Step:  a,
			Agent: o.Agent(a),
			Input: task.Message{
				Role:     task.RoleUser,
				Parts:    []task.Part{task.TextPart(Input(w.Name, desc, args, prior, info.Step, total, e))},
				Metadata: map[string]any{MetadataKey: info.metadata()},
			},
		})
	}
	what := "starting " + p.Agents[0]
	if p.Parallel() {
		what = "starting in parallel " + strings.Join(p.Agents, ", ")
	}
	return &task.Result{Spawn: children, Reason: fmt.Sprintf("workflow %s: %s (%d of %d agents done)", w.Name, what, done, total)}, nil
}

func (s stepInfo) metadata() map[string]any {
	to := make([]any, len(s.Expect.To))
	for i, a := range s.Expect.To {
		to[i] = a
	}
	m := map[string]any{
		"workflow": s.Workflow, "step": s.Step, "steps": s.Steps,
		"expect": map[string]any{"from": s.Expect.From, "to": to, "last": s.Expect.Last},
	}
	if len(s.Phases) > 0 {
		ps := make([]any, len(s.Phases))
		for i, p := range s.Phases {
			as := make([]any, len(p))
			for j, a := range p {
				as[j] = a
			}
			ps[i] = as
		}
		m["phases"] = ps
	}
	if s.Description != "" {
		m["description"] = s.Description
	}
	if s.Arguments != "" {
		m["arguments"] = s.Arguments
	}
	return m
}

// phases returns w's phases as lists of agents.
func phases(w *Workflow) [][]string {
	out := make([][]string, len(w.Phases))
	for i, p := range w.Phases {
		out[i] = slices.Clone(p.Agents)
	}
	return out
}

// Heading returns the handoff heading e asks for: the next agent, the
// next parallel phase's agents joined by ", ", or "done" after the last.
func Heading(e Expect) string {
	next := "done"
	if len(e.To) > 0 {
		next = strings.Join(e.To, ", ")
	}
	return "## HANDOFF: " + e.From + " -> " + next
}

// Description returns a run's task description: the text of its input.
func Description(in task.Message) string {
	return strings.TrimSpace(in.Text())
}

// Input returns the message a step's agent gets: the task description,
// the run's arguments when it has any (args, under "# Arguments"), the
// prior handoffs (a parallel phase's merged), and the heading its handoff
// must carry (docs/workflows.md, "What each agent receives").
func Input(workflow, desc, args string, prior []string, step, steps int, e Expect) string {
	var b strings.Builder
	b.WriteString("# Task\n")
	b.WriteString(desc)
	if args != "" {
		b.WriteString("\n\n# Arguments\n")
		b.WriteString(strings.TrimRight(args, "\n"))
	}
	b.WriteString("\n\n# Prior handoffs\n")
	if len(prior) == 0 {
		b.WriteString("None: you are the first agent.\n")
	}
	for i, h := range prior {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(strings.TrimSpace(h))
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\n# Your handoff\nYou are %s, step %d of %d of workflow %s. End your answer with a handoff under exactly this heading:\n", e.From, step, steps, workflow)
	fmt.Fprintf(&b, "Expected heading: %s\n", Heading(e))
	b.WriteString("Sections, each required, each \"None\" when there is nothing to say: ### Context, ### Findings, ### Files Modified, ### Open Questions, ### Recommendations. Optional: ### Test Results, ### Security Status.\n")
	if e.Last {
		b.WriteString("You are the last agent: instead of the handoff you may answer with the final report's summary, under a heading SUMMARY.\n")
	}
	return b.String()
}

// storedHandoff reads the handoff a succeeded step delivered (its gate
// checked it).
func storedHandoff(k *task.Task) (*Handoff, error) {
	return ParseHandoff(contract.OutputText(contract.StoredResult(k)))
}

// finish builds the report from the children (stopped names why the run
// stopped early; "" when every agent succeeded).
func finish(w *Workflow, desc string, byAgent map[string]*task.Task, stopped string) (*task.Result, error) {
	agents := w.Agents()
	steps := make([]StepOutcome, len(agents))
	for i, a := range agents {
		steps[i] = Outcome(a, byAgent[a], stopped != "")
	}
	r := BuildReport(w.Name, desc, agents, steps)
	reason := fmt.Sprintf("workflow %s: %s", w.Name, r.Recommendation)
	if stopped != "" {
		reason += " (" + stopped + ")"
	}
	return &task.Result{Artifacts: []task.Artifact{r.Artifact()}, Reason: reason}, nil
}

// Outcome returns how agent's step ended: k is its child (nil when it
// never started); stopping says the run is stopping, so a child still
// running is about to be canceled with it.
func Outcome(agent string, k *task.Task, stopping bool) StepOutcome {
	if k == nil {
		return StepOutcome{Agent: agent, State: NotRun}
	}
	so := StepOutcome{Agent: agent, Task: k.ID, State: string(k.State), Attempts: k.Attempt}
	if !k.CreatedAt.IsZero() && k.State.Terminal() {
		so.DurationMs = float64(k.UpdatedAt.Sub(k.CreatedAt).Microseconds()) / 1000
	}
	switch {
	case k.State == task.StateSucceeded:
		h, err := storedHandoff(k)
		if err != nil {
			so.State, so.Reason = string(task.StateFailed), "its output is not a handoff: "+err.Error()
			break
		}
		so.Handoff = h
	case !k.State.Terminal():
		if stopping {
			so.State, so.Reason = string(task.StateCanceled), "the run stopped"
		}
	default:
		so.Reason = k.Reason
	}
	return so
}

// ReportOf returns the report a finished run holds (its ReportArtifact's
// data), or nil when it has none.
func ReportOf(t *task.Task) (*Report, error) {
	for _, a := range t.Artifacts {
		if a.ID != ReportArtifact && a.Name != ReportArtifact {
			continue
		}
		for _, p := range a.Parts {
			if p.Kind != task.PartData {
				continue
			}
			var r Report
			if err := json.Unmarshal(p.Data, &r); err != nil {
				return nil, fmt.Errorf("task %s: report: %w", t.ID, err)
			}
			return &r, nil
		}
		for _, p := range a.Parts {
			if p.Kind == task.PartText {
				return ParseReport(p.Text)
			}
		}
	}
	return nil, nil
}

// GateOptions configure a step's gate (Gate).
type GateOptions struct {
	// WorkDir is the agent's working directory (the contract gate's).
	WorkDir string
	// Siblings returns a run's children (task.Coordinator.Children): the
	// gate of a step whose run recorded its workflow checks, as a
	// contract run's step does (contract.CompiledStep.RunGate), that the
	// steps it depends on have succeeded. Nil: dependencies are not
	// checked.
	Siblings func(ctx context.Context, parent string) ([]*task.Task, error)
}

// Gate returns the handoff gate of a workflow step's virtual agent
// (StepAgent): a task pipeline step that reads what the step must hand
// over from its input (MetadataKey, written by the run) and runs, around
// the agent, the gate of the contract pactum writes for it (Contract: a
// sections check and a handoff check, onViolation retry). A handoff that
// fails is retried with the problems fed back to the agent, bounded by
// the agent's attempts; after the last the child is dead-lettered with
// the violation as its reason and the run stops BLOCKED.
func Gate(o GateOptions) task.Middleware {
	return &gate{o: o, steps: map[string]*contract.CompiledStep{}}
}

type gate struct {
	o     GateOptions
	mu    sync.Mutex
	steps map[string]*contract.CompiledStep // by stepInfo's JSON
}

func (g *gate) Name() string { return contract.GateStep }

func (g *gate) Handle(ctx context.Context, a *task.Attempt, next task.Next) (*task.Result, error) {
	s, whole, err := g.step(a.Task.Envelope.Input)
	if err != nil {
		return nil, task.Permanent(&task.Error{Code: task.CodeInvalidArgument, Message: err.Error()})
	}
	o := contract.GateOptions{WorkDir: g.o.WorkDir}
	if whole && g.o.Siblings != nil {
		// The step of the whole workflow's contract, checked as a
		// contract run's step is: what `pactum verify --workflow` checks
		// offline, check by check.
		return s.RunGate(o, g.o.Siblings).Handle(ctx, a, next)
	}
	return s.Middleware(o).Handle(ctx, a, next)
}

// step returns the compiled contract step of the step in (compiled once
// per distinct step): a step of the whole workflow's contract when the
// run recorded its workflow (whole), else of a contract of the step and
// the phase it hands over to.
func (g *gate) step(in task.Message) (s *contract.CompiledStep, whole bool, err error) {
	info, err := stepOf(in)
	if err != nil {
		return nil, false, err
	}
	w, whole := info.workflow()
	if !whole {
		w = &Workflow{Name: info.Workflow, Phases: []Phase{{Agents: []string{info.Expect.From}}}}
		if !info.Expect.Last {
			w.Phases = append(w.Phases, Phase{Agents: info.Expect.To})
		}
	}
	key, _ := json.Marshal([]any{w.Name, w.Description, phases(w), info.Expect.From})
	g.mu.Lock()
	defer g.mu.Unlock()
	if s, ok := g.steps[string(key)]; ok {
		return s, whole, nil
	}
	compiled, err := contract.Compile(w.Contract())
	if err != nil {
		return nil, false, fmt.Errorf("workflow %s: the contract of step %s: %w", info.Workflow, info.Expect.From, err)
	}
	s, ok := compiled.Step(info.Expect.From)
	if !ok {
		return nil, false, fmt.Errorf("workflow %s: the contract has no step %s", info.Workflow, info.Expect.From)
	}
	if len(g.steps) > 1024 {
		clear(g.steps) // custom runs can make many; they compile in microseconds
	}
	g.steps[string(key)] = s
	return s, whole, nil
}

// errNotAStep is the error for a task of a step agent that was not
// spawned by a run.
var errNotAStep = errors.New("not a step of a workflow run: its input carries no step (a workflow step agent runs only as a child of a run)")

func stepOf(in task.Message) (stepInfo, error) {
	raw, ok := in.Metadata[MetadataKey]
	if !ok {
		return stepInfo{}, errNotAStep
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return stepInfo{}, fmt.Errorf("workflow step: metadata.%s: %w", MetadataKey, err)
	}
	var info stepInfo
	if err := json.Unmarshal(b, &info); err != nil || info.Expect.From == "" || info.Workflow == "" {
		return stepInfo{}, fmt.Errorf("workflow step: metadata.%s does not say which step this is", MetadataKey)
	}
	return info, nil
}
