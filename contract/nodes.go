package contract

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/pactum/pactum/task"
)

// NodeGate returns the gate of an agent that runs a graph of nodes in
// one attempt and whose runtime reports each node as it ends
// (task.Request.OnNode: the langgraph runtime, for a graph served as one
// agent). Every step of the contract is checked on the node of the same
// name, as the graph runs, by the rule `pactum verify` applies to a trace
// of the same run: each node's output is judged by Replay, as a recorded
// step is, with no resources handed to it (a graph's input carries none)
// and the steps done those of the nodes that ended before it without an
// error. A node whose name is no step is not checked. So the verdict of
// every step live is the verdict `pactum verify` gives the run's trace
// (contract/langgraph.HistoryTrace), which the tests check on the real
// Agent Server.
//
// Each node checked adds a verdict (evidence of kind verdict, its
// VerifiedResult naming the step) to the attempt's record. A node that
// fails its step is handled at once by the step's onViolation: continue
// lets the graph run on; fail, retry and escalate stop the attempt (the
// runtime cancels the run where it runs, so the nodes after it do not
// run) and end it as the attempt's gate does (Middleware): fail fails the
// task with contract_violation, retry runs the graph again with the
// node's output and the failed assertions as feedback, escalate asks for
// input. When the graph ends, a step whose node did not run fails the
// same way ("the graph did not run node X"), as `pactum verify` reports
// it not run. An attempt that ends asking for input (an interrupt) is not
// over: its steps not run yet are not judged.
func (c *Compiled) NodeGate(o GateOptions) task.Middleware {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &nodeGate{c: c, o: o}
}

type nodeGate struct {
	c *Compiled
	o GateOptions
}

func (g *nodeGate) Name() string { return GateStep }

// nodeViolation is the error a node's check returns to the runtime to
// stop the attempt: the gate recognises it when next returns it.
type nodeViolation struct {
	step   *CompiledStep
	out    *task.Result
	failed []ValidationResult
	err    error // a blocked pre-gate: the attempt fails with it
}

func (v *nodeViolation) Error() string {
	if v.err != nil {
		return v.err.Error()
	}
	return v.step.violationPrefix() + summary(v.failed)
}

// nodeRun is what the gate knows of one attempt's nodes.
type nodeRun struct {
	g      *nodeGate
	a      *task.Attempt
	mu     sync.Mutex
	judged map[string]bool
	done   map[string]bool
}

func (g *nodeGate) Handle(ctx context.Context, a *task.Attempt, next task.Next) (*task.Result, error) {
	nr := &nodeRun{g: g, a: a, judged: map[string]bool{}, done: map[string]bool{}}
	prev := a.Request.OnNode
	a.Request.OnNode = func(ctx context.Context, n task.Node) error {
		if prev != nil {
			if err := prev(ctx, n); err != nil {
				return err
			}
		}
		return nr.judge(ctx, n)
	}
	defer func() { a.Request.OnNode = prev }()

	res, err := next(ctx)
	var v *nodeViolation
	if errors.As(err, &v) {
		if v.err != nil {
			return nil, v.err
		}
		return v.step.onViolation(v.out, v.failed)
	}
	if err != nil {
		return res, err
	}
	if res == nil {
		res = &task.Result{}
	}
	if res.InputRequired || len(res.Spawn) > 0 || res.Wait {
		return res, nil
	}
	// The graph ended: a step whose node did not run is not met.
	var first *CompiledStep
	var firstFailed []ValidationResult
	for _, st := range g.c.Contract().Steps {
		if nr.judged[st.ID] {
			continue
		}
		s, _ := g.c.Step(st.ID)
		why := fmt.Sprintf("the graph did not run node %s", st.ID)
		failed := []ValidationResult{{Check: "ran", Type: Assert, Message: "node " + st.ID + " ran", Reason: why}}
		vr := &VerifiedResult{Contract: s.contractID(), ContractDigest: s.contractDigest(), Step: st.ID, Error: why}
		vr.Verification.ResourcesCreated = []ContractResource{}
		vr.Verification.PreGate = GateResult{Passed: true, Results: []ValidationResult{}}
		vr.Verification.PostGate = GateResult{Passed: false, Results: failed}
		recordVerdict(a, vr, "fail", "node "+st.ID+": onViolation "+string(s.policy())+": "+why, 0)
		if first == nil && s.policy() != ViolationContinue {
			first, firstFailed = s, failed
		}
	}
	if first != nil {
		return first.onViolation(res, firstFailed)
	}
	return res, nil
}

// judge checks node n against the step of its name, records the verdict,
// and returns a nodeViolation when the attempt must stop.
func (nr *nodeRun) judge(ctx context.Context, n task.Node) error {
	s, ok := nr.g.c.Step(n.Name)
	nr.mu.Lock()
	done := make(map[string]bool, len(nr.done)+1)
	for k, v := range nr.done {
		done[k] = v
	}
	if n.Err == "" {
		nr.done[n.Name] = true
		done[n.Name] = true
	}
	if ok {
		nr.judged[n.Name] = true
	}
	nr.mu.Unlock()
	if !ok {
		return nil
	}
	out := n.Result
	if out == nil && n.Err == "" {
		out = &task.Result{}
	}
	at := *nr.a.Task
	at.State = task.StateInProgress
	r := &Recorded{Task: &at, Ran: true, Ended: true, Result: out, AgentError: n.Err, Duration: max(n.End.Sub(n.Start), 0)}
	vr := s.Replay(ctx, r, ReplayOptions{WorkDir: nr.g.o.WorkDir, Resources: map[string]Resource{}, Done: done, Now: nr.g.o.Now})
	d := time.Duration((vr.Verification.Timing.TotalMs - vr.Verification.Timing.ExecutionMs) * float64(time.Millisecond))
	node := "node " + n.Name + ": "
	switch {
	case !vr.Verification.PreGate.Passed:
		msg := vr.Error
		recordVerdict(nr.a, vr, "fail", node+msg, d)
		return &nodeViolation{step: s, err: task.Permanent(&task.Error{Code: task.CodeContractViolation, Message: s.violationPrefix() + msg})}
	case n.Err != "":
		recordVerdict(nr.a, vr, "fail", node+"the node failed; post-gate not run: "+n.Err, d)
		return nil // the runtime fails the attempt with the node's error
	case vr.Verification.Passed:
		msg := "all assertions hold"
		if f := s.failed(vr.Verification.PostGate, false); len(f) > 0 {
			msg = "passed; not held but not failing the gate: " + summary(f)
		}
		recordVerdict(nr.a, vr, "pass", node+msg, d)
		return nil
	}
	failed := s.failed(vr.Verification.PostGate, true)
	policy := s.policy()
	recordVerdict(nr.a, vr, "fail", node+"onViolation "+string(policy)+": "+summary(failed), d)
	if policy == ViolationContinue {
		return nil
	}
	recordOutput(nr.a, &JudgedOutput{Artifacts: out.Artifacts, Message: out.Message})
	return &nodeViolation{step: s, out: out, failed: failed}
}
