package contract_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/internal/coordtest"
	"github.com/pactum/pactum/store"
	_ "github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
)

// runBundle is a started Coordinator on a real SQLite store serving a
// contract as an agent (named by the contract's id) and each of its steps
// as a virtual agent behind the step's gate, whose runner is steps[id].
type runBundle struct {
	coord    *task.Coordinator
	compiled *contract.Compiled
	mu       sync.Mutex
	inputs   map[string]task.Message // each step's last Request.Message
}

func setupRun(t *testing.T, c *contract.AgentContract, o contract.RunOptions, steps map[string]task.RunnerFunc) *runBundle {
	t.Helper()
	return setupRunGates(t, c, o, steps, nil)
}

// setupRunGates is setupRun with each step's gate options given by gate
// (nil: the defaults).
func setupRunGates(t *testing.T, c *contract.AgentContract, o contract.RunOptions, steps map[string]task.RunnerFunc, gate func(step string) contract.GateOptions) *runBundle {
	t.Helper()
	ctx := context.Background()
	compiled, err := contract.Compile(c)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	if errs := contract.Validate(c, contract.ValidateOptions{}); len(errs) > 0 {
		t.Fatalf("validate: %v", errs)
	}
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "pactum.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &runBundle{compiled: compiled, inputs: map[string]task.Message{}}
	retry := task.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}
	var coord *task.Coordinator
	siblings := func(ctx context.Context, parent string) ([]*task.Task, error) {
		return coord.Children(ctx, parent, 0, false)
	}
	o.Verified = func(ctx context.Context, k *task.Task) (*contract.VerifiedResult, error) {
		recs, err := coord.Timeline(ctx, k.ID)
		if err != nil {
			return nil, err
		}
		return contract.Newest(recs)
	}
	specs := []task.AgentSpec{{Name: c.ID, Runner: compiled.Runner(o), Timeout: 10 * time.Second, Retry: retry}}
	for _, s := range c.Steps {
		cs, _ := compiled.Step(s.ID)
		run := steps[s.ID]
		id := s.ID
		var gopts contract.GateOptions
		if gate != nil {
			gopts = gate(id)
		}
		specs = append(specs, task.AgentSpec{
			Name: contract.StepAgent(c.ID, s.ID), Timeout: 10 * time.Second, Retry: retry,
			Runner: task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
				b.mu.Lock()
				b.inputs[id] = req.Message
				b.mu.Unlock()
				return run(ctx, req, emit)
			}),
			Middleware: []task.Middleware{cs.RunGate(gopts, siblings)},
		})
	}
	coord = coordtest.Start(t, task.Options{Store: st, Agents: specs})
	b.coord = coord
	return b
}

func (b *runBundle) run(t *testing.T, input string) (*task.Task, []*task.Task) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sub, err := b.coord.Submit(ctx, task.SubmitRequest{Envelope: task.Envelope{Action: b.compiled.Contract().ID, Actor: "tester", Input: userText(input)}})
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	got, err := b.coord.Wait(ctx, sub.Task.ID)
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	got, err = b.coord.Get(ctx, got.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	kids, err := b.coord.Children(ctx, got.ID, -1, true)
	if err != nil {
		t.Fatal(err)
	}
	return got, kids
}

func dataResult(v any) *task.Result {
	b, _ := json.Marshal(v)
	return &task.Result{Artifacts: []task.Artifact{{Parts: []task.Part{task.DataPart(b)}}}}
}

// threeSteps: plan creates data "plan" (an object with items), draft
// creates a message, review consumes plan and draft.
func threeSteps(draftPolicy contract.Violation) *contract.AgentContract {
	return &contract.AgentContract{
		Version: "1.0", ID: "write",
		Resources: []contract.ContractResource{
			{ID: "plan", Type: contract.ResourceData, Schema: map[string]any{"type": "object", "required": []any{"items"}}},
			{ID: "draft", Type: contract.ResourceMessage},
		},
		Steps: []contract.ContractStep{
			{ID: "plan", Agent: "planner", Creates: []string{"plan"},
				Assertions: []contract.ContractAssertion{{Type: contract.Assert, Message: "the plan has items",
					Check: contract.Check{Type: "schema_match", Target: "output", Schema: map[string]any{"type": "object", "required": []any{"items"}}}}}},
			{ID: "draft", Agent: "writer", DependsOn: []string{"plan"}, Creates: []string{"draft"}, OnViolation: draftPolicy,
				Assertions: []contract.ContractAssertion{{Type: contract.Assert, Message: "the draft has a title",
					Check: contract.Check{Type: "contains", Target: "output", Value: "# "}}}},
			{ID: "review", Agent: "reviewer", DependsOn: []string{"draft"}, Consumes: []string{"plan", "draft"},
				Assertions: []contract.ContractAssertion{{Type: contract.Assert, Message: "the review approves",
					Check: contract.Check{Type: "contains", Target: "output", Value: "approved"}}}},
		},
	}
}

// TestRunThreeStepsConsumesEarlierData: step 3 gets step 1's data and
// step 2's message in its input, labelled, and the run ends with every
// step's verified result.
func TestRunThreeStepsConsumesEarlierData(t *testing.T) {
	t.Parallel()
	b := setupRun(t, threeSteps(contract.ViolationFail), contract.RunOptions{}, map[string]task.RunnerFunc{
		"plan": func(context.Context, *task.Request, task.Emit) (*task.Result, error) {
			return dataResult(map[string]any{"items": []string{"intro", "body"}}), nil
		},
		"draft": func(_ context.Context, req *task.Request, _ task.Emit) (*task.Result, error) {
			return textResult("# Draft for " + req.Message.Text()), nil
		},
		"review": func(_ context.Context, req *task.Request, _ task.Emit) (*task.Result, error) {
			res := contract.InjectedResources(mustStep(t, "review", threeSteps("")), req.Message)
			plan, _ := res["plan"].Data.(map[string]any)
			items, _ := plan["items"].([]any)
			return textResult(fmt.Sprintf("approved: %d items, draft %q", len(items), res["draft"].Text)), nil
		},
	})
	parent, kids := b.run(t, "a poem")
	if parent.State != task.StateSucceeded {
		t.Fatalf("run %s: %s", parent.State, parent.Reason)
	}
	if len(kids) != 3 {
		t.Fatalf("children: %d, want 3", len(kids))
	}
	for _, k := range kids {
		if k.State != task.StateSucceeded || k.Agent != contract.StepAgent("write", k.Envelope.Step) {
			t.Errorf("child %s (%s on %s): %s", k.Envelope.Step, k.ID, k.Agent, k.State)
		}
	}
	review := kids[2]
	if review.Envelope.Step != "review" || !strings.Contains(review.Artifacts[0].Parts[0].Text, `approved: 2 items, draft "# Draft for a poem"`) {
		t.Fatalf("review: step %s, artifacts %+v", review.Envelope.Step, review.Artifacts)
	}
	// The review's input: the run's input, then plan as a data part and
	// draft as text, each labelled.
	in := b.inputs["review"]
	if len(in.Parts) != 3 || in.Parts[0].Text != "a poem" || in.Parts[1].Kind != task.PartData || in.Parts[2].Text != "# Draft for a poem" {
		t.Fatalf("review input: %+v", in.Parts)
	}
	label := in.Parts[1].Metadata[contract.ResourceKey].(map[string]any)
	if label["resource"] != "plan" || label["type"] != "data" {
		t.Fatalf("plan part label: %v", label)
	}
	rr := runResults(t, parent)
	if !rr.Passed || len(rr.Steps) != 3 {
		t.Fatalf("results: %+v", rr)
	}
	for i, want := range []string{"plan", "draft", "review"} {
		s := rr.Steps[i]
		if s.Step != want || s.Task != kids[i].ID || s.VerifiedResult == nil || !s.VerifiedResult.Verification.Passed || s.VerifiedResult.Step != want {
			t.Errorf("step %d: %+v", i, s)
		}
	}
	// The review's pre-gate checked both dependencies and resources.
	pre := rr.Steps[2].VerifiedResult.Verification.PreGate
	if !pre.Passed || len(pre.Results) != 3 {
		t.Errorf("review pre-gate: %+v", pre)
	}
}

func mustStep(t *testing.T, id string, c *contract.AgentContract) *contract.CompiledStep {
	t.Helper()
	compiled, err := contract.Compile(c)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := compiled.Step(id)
	if !ok {
		t.Fatalf("no step %s", id)
	}
	return s
}

func runResults(t *testing.T, parent *task.Task) contract.RunResults {
	t.Helper()
	for _, a := range parent.Artifacts {
		if a.Name != contract.RunArtifact {
			continue
		}
		for _, p := range a.Parts {
			if p.Kind == task.PartData {
				var rr contract.RunResults
				if err := json.Unmarshal(p.Data, &rr); err != nil {
					t.Fatal(err)
				}
				return rr
			}
		}
	}
	t.Fatalf("no %s artifact in %+v", contract.RunArtifact, parent.Artifacts)
	return contract.RunResults{}
}

// TestRunStopsOnViolation: step 2 violates its contract (onViolation
// fail): the run fails naming the step and the assertion, and step 3 is
// never spawned.
func TestRunStopsOnViolation(t *testing.T) {
	t.Parallel()
	b := setupRun(t, threeSteps(contract.ViolationFail), contract.RunOptions{}, map[string]task.RunnerFunc{
		"plan": func(context.Context, *task.Request, task.Emit) (*task.Result, error) {
			return dataResult(map[string]any{"items": []string{"a"}}), nil
		},
		"draft": func(context.Context, *task.Request, task.Emit) (*task.Result, error) {
			return textResult("no title here"), nil
		},
		"review": func(context.Context, *task.Request, task.Emit) (*task.Result, error) {
			t.Error("review ran")
			return textResult("approved"), nil
		},
	})
	parent, kids := b.run(t, "x")
	if parent.State != task.StateFailed || parent.ErrorCode != task.CodeContractViolation {
		t.Fatalf("run: %s %s: %s", parent.State, parent.ErrorCode, parent.Reason)
	}
	for _, want := range []string{"step draft", "the draft has a title"} {
		if !strings.Contains(parent.Reason, want) {
			t.Errorf("reason %q lacks %q", parent.Reason, want)
		}
	}
	if len(kids) != 2 || kids[1].Envelope.Step != "draft" || kids[1].State != task.StateFailed {
		t.Fatalf("children: %d %+v", len(kids), kids)
	}
}

// TestRunDiamondRunsIndependentStepsInParallel: b and c depend on a, d
// on both; b and c each wait until the other has started, so the run
// ends only when they ran at the same time.
func TestRunDiamondRunsIndependentStepsInParallel(t *testing.T) {
	t.Parallel()
	c := &contract.AgentContract{Version: "1.0", ID: "diamond", Steps: []contract.ContractStep{
		{ID: "a", Agent: "x"}, {ID: "b", Agent: "x", DependsOn: []string{"a"}},
		{ID: "c", Agent: "x", DependsOn: []string{"a"}}, {ID: "d", Agent: "x", DependsOn: []string{"b", "c"}},
	}}
	var wg sync.WaitGroup
	wg.Add(2)
	meet := func(ctx context.Context, _ *task.Request, _ task.Emit) (*task.Result, error) {
		wg.Done()
		both := make(chan struct{})
		go func() { wg.Wait(); close(both) }()
		select {
		case <-both:
			return textResult("met"), nil
		case <-ctx.Done():
			return nil, task.Permanent(ctx.Err())
		}
	}
	ok := func(context.Context, *task.Request, task.Emit) (*task.Result, error) { return textResult("ok"), nil }
	b := setupRun(t, c, contract.RunOptions{}, map[string]task.RunnerFunc{"a": ok, "b": meet, "c": meet, "d": ok})
	parent, kids := b.run(t, "go")
	if parent.State != task.StateSucceeded || len(kids) != 4 {
		t.Fatalf("run %s (%s), %d children", parent.State, parent.Reason, len(kids))
	}
	if kids[3].Envelope.Step != "d" {
		t.Errorf("last child is %s", kids[3].Envelope.Step)
	}
}

// TestRunMaxParallelOne runs the diamond's steps one at a time.
func TestRunMaxParallelOne(t *testing.T) {
	t.Parallel()
	c := &contract.AgentContract{Version: "1.0", ID: "diamond", Steps: []contract.ContractStep{
		{ID: "a", Agent: "x"}, {ID: "b", Agent: "x", DependsOn: []string{"a"}},
		{ID: "c", Agent: "x", DependsOn: []string{"a"}}, {ID: "d", Agent: "x", DependsOn: []string{"b", "c"}},
	}}
	var mu sync.Mutex
	running, most := 0, 0
	step := func(context.Context, *task.Request, task.Emit) (*task.Result, error) {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond) // gives a second step the chance to overlap
		mu.Lock()
		running--
		mu.Unlock()
		return textResult("ok"), nil
	}
	b := setupRun(t, c, contract.RunOptions{MaxParallel: 1}, map[string]task.RunnerFunc{"a": step, "b": step, "c": step, "d": step})
	parent, kids := b.run(t, "go")
	if parent.State != task.StateSucceeded || len(kids) != 4 {
		t.Fatalf("run %s (%s), %d children", parent.State, parent.Reason, len(kids))
	}
	if most != 1 {
		t.Errorf("%d steps ran at once with MaxParallel 1", most)
	}
}

// TestRunStepWithoutRunBlocked: a step's virtual agent called on its own
// (no parent run) is blocked by its pre-gate: its dependency has not
// succeeded and its resources are missing.
func TestRunStepWithoutRunBlocked(t *testing.T) {
	t.Parallel()
	b := setupRun(t, threeSteps(contract.ViolationFail), contract.RunOptions{}, map[string]task.RunnerFunc{
		"review": func(context.Context, *task.Request, task.Emit) (*task.Result, error) {
			t.Error("review ran")
			return textResult("approved"), nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sub, err := b.coord.Submit(ctx, task.SubmitRequest{Envelope: task.Envelope{Action: contract.StepAgent("write", "review"), Actor: "tester", Input: userText("x")}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.coord.Wait(ctx, sub.Task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != task.StateFailed || got.ErrorCode != task.CodeContractViolation ||
		!strings.Contains(got.Reason, "dependency draft not done") || !strings.Contains(got.Reason, "resource plan missing") {
		t.Fatalf("%s %s: %s", got.State, got.ErrorCode, got.Reason)
	}
}

// TestInjectResourcesRoundTrip: what InjectResources writes,
// InjectedResources reads back, for every resource type.
func TestInjectResourcesRoundTrip(t *testing.T) {
	t.Parallel()
	c := &contract.AgentContract{Version: "1.0", ID: "c",
		Resources: []contract.ContractResource{
			{ID: "d", Type: contract.ResourceData}, {ID: "m", Type: contract.ResourceMessage},
			{ID: "f", Type: contract.ResourceFile, Location: "out/notes.md"}, {ID: "a", Type: contract.ResourceArtifact},
		},
		Steps: []contract.ContractStep{{ID: "s", Consumes: []string{"d", "m", "f", "a", "missing"}}},
	}
	s := mustStep(t, "s", c)
	avail := map[string]contract.Resource{
		"d": {ContractResource: c.Resources[0], Data: map[string]any{"k": "v"}},
		"m": {ContractResource: c.Resources[1], Text: "hello", MediaType: "text/plain"},
		"f": {ContractResource: c.Resources[2], Text: "# notes", MediaType: "text/markdown"},
		"a": {ContractResource: c.Resources[3], Text: "x", Data: []any{1.0}},
	}
	parts := contract.InjectResources(s, avail)
	if len(parts) != 4 {
		t.Fatalf("parts: %+v", parts)
	}
	if parts[0].Kind != task.PartData || parts[1].Kind != task.PartText || parts[2].Filename != "out/notes.md" || parts[2].MediaType != "text/markdown" || parts[3].Kind != task.PartData {
		t.Fatalf("parts: %+v", parts)
	}
	// Through JSON, as the store keeps them.
	raw, _ := json.Marshal(task.Message{Parts: parts})
	var msg task.Message
	if err := json.Unmarshal(raw, &msg); err != nil {
		t.Fatal(err)
	}
	back := contract.InjectedResources(s, msg)
	if len(back) != 4 || back["d"].Data.(map[string]any)["k"] != "v" || back["m"].Text != "hello" || back["f"].Text != "# notes" ||
		back["f"].Type != contract.ResourceFile || back["a"].Data.([]any)[0] != 1.0 {
		t.Fatalf("back: %+v", back)
	}
}

// TestRunInputResource: a resource no step creates is the run's input:
// the first step gets the run's text labelled as that resource, and its
// pre-gate finds it.
func TestRunInputResource(t *testing.T) {
	t.Parallel()
	c := &contract.AgentContract{Version: "1.0", ID: "doc",
		Resources: []contract.ContractResource{{ID: "document", Type: contract.ResourceMessage}},
		Steps: []contract.ContractStep{
			{ID: "read", Agent: "x", Consumes: []string{"document"}, Creates: []string{"facts"}},
			{ID: "sum", Agent: "x", DependsOn: []string{"read"}, Consumes: []string{"facts"}},
		}}
	var got map[string]contract.Resource
	b := setupRun(t, c, contract.RunOptions{}, map[string]task.RunnerFunc{
		"read": func(_ context.Context, req *task.Request, _ task.Emit) (*task.Result, error) {
			got = contract.InjectedResources(mustStep(t, "read", c), req.Message)
			return dataResult(map[string]any{"facts": 1}), nil
		},
		"sum": func(context.Context, *task.Request, task.Emit) (*task.Result, error) { return textResult("ok"), nil },
	})
	if ids := b.compiled.InputResources(); len(ids) != 1 || ids[0] != "document" {
		t.Fatalf("input resources: %v", ids)
	}
	parent, _ := b.run(t, "the document")
	if parent.State != task.StateSucceeded {
		t.Fatalf("run %s: %s", parent.State, parent.Reason)
	}
	if got["document"].Text != "the document" || got["document"].Type != contract.ResourceMessage {
		t.Fatalf("document: %+v", got)
	}
	if in := b.inputs["read"]; len(in.Parts) != 1 {
		t.Fatalf("read's input repeats the run's input: %+v", in.Parts)
	}
}
