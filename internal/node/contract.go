package node

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/a2aserver"
	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/internal/discovery"
	"github.com/pactum/pactum/task"
)

// remoteAgent is an agent whose remote declares its contracts on its
// card: the a2a runtime.
type remoteAgent interface {
	Card(ctx context.Context) (*a2a.AgentCard, error)
	HTTPClient() *http.Client
}

// remoteGate is the gate of an agent pinned to its remote's contract: on
// the first attempt it reads the remote's card, loads the contract it
// declares with the pinned digest (discovery.Load: the digest is checked)
// and from then on checks every answer against its step, as a contract
// file's step would be. Until the card has been read successfully each
// attempt tries again; a card that declares no contract with the digest,
// or one pactum cannot check an answer against, fails the attempt
// permanently with contract_violation.
type remoteGate struct {
	digest string
	agent  remoteAgent
	o      contract.GateOptions

	mu   sync.Mutex
	gate task.Middleware
}

func (g *remoteGate) Name() string { return contract.GateStep }

func (g *remoteGate) Handle(ctx context.Context, a *task.Attempt, next task.Next) (*task.Result, error) {
	gate, err := g.resolve(ctx)
	if err != nil {
		return nil, err
	}
	return gate.Handle(ctx, a, next)
}

// resolve returns the gate of the pinned contract, reading it the first
// time.
func (g *remoteGate) resolve(ctx context.Context) (task.Middleware, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gate != nil {
		return g.gate, nil
	}
	card, err := g.agent.Card(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the remote's card for its contract %s: %w", g.digest, err)
	}
	refuse := func(format string, args ...any) error {
		return task.Permanent(&task.Error{Code: task.CodeContractViolation,
			Message: fmt.Sprintf("remote agent %s: ", card.Name) + fmt.Sprintf(format, args...)})
	}
	d, err := discovery.Contracts(card)
	if err != nil {
		return nil, refuse("pinned to contract %s: %v", g.digest, err)
	}
	ref, err := d.Find(g.digest)
	if err != nil {
		return nil, refuse("pinned to contract %s: %v", g.digest, err)
	}
	c, _, err := discovery.Load(ctx, ref, func(ctx context.Context, url string) ([]byte, error) {
		return discovery.Fetch(ctx, g.agent.HTTPClient(), url, discovery.MaxContractBytes)
	})
	if err != nil {
		if re := (*discovery.RefusedError)(nil); errors.As(err, &re) {
			return nil, refuse("%v", err)
		}
		return nil, err // the contract's URL could not be read: try again
	}
	if ref.Nodes || len(ref.Steps) != 1 {
		return nil, refuse("contract %s is checked on %d steps there (node by node: %v); pactum checks a remote's answers against a contract of one step", ref.ID, len(ref.Steps), ref.Nodes)
	}
	compiled, err := contract.Compile(c)
	if err != nil {
		return nil, refuse("contract %s: %v", ref.ID, err)
	}
	step, ok := compiled.Step(ref.Steps[0])
	if !ok {
		return nil, refuse("contract %s has no step %q", ref.ID, ref.Steps[0])
	}
	g.gate = step.Middleware(g.o)
	return g.gate, nil
}

// inlineStep is an agent's inline contract: one step, written under the
// agent with the field names of a contract file's step.
type inlineStep struct {
	OnViolation contract.Violation           `yaml:"onViolation"`
	Strictness  contract.Strictness          `yaml:"strictness"`
	Assertions  []contract.ContractAssertion `yaml:"assertions"`
	Creates     []string                     `yaml:"creates"`
	Consumes    []string                     `yaml:"consumes"`
	Resources   []contract.ContractResource  `yaml:"resources"`
	// Extension is read by package config (ContractSpec.ExtensionRequired).
	Extension string `yaml:"extension"`
}

// agentGate is an agent's compiled contract: one step checked on every
// answer, or (nodes) every step of a contract checked on the nodes of the
// graph the agent runs.
type agentGate struct {
	step  *contract.CompiledStep
	nodes *contract.Compiled
	// remote is the digest of the remote agent's contract the agent is
	// pinned to (contract: {remote: DIGEST}); the contract is read from
	// the remote's card on the first attempt (remoteGate).
	remote string
	spec   config.ContractSpec
}

// contracts returns what the agent's card declares of the gate's
// contract (the contracts extension).
func (g *agentGate) contracts() *a2aserver.ContractsInfo {
	if g.remote != "" {
		return nil // known once the remote's card is read
	}
	if g.nodes != nil {
		return contractsInfo(g.nodes, stepIDs(g.nodes), true, g.spec.ExtensionRequired)
	}
	return contractsInfo(g.step.Compiled(), []string{g.step.Step().ID}, false, g.spec.ExtensionRequired)
}

// contractsInfo is what a card declares of contract c, whose steps ids
// the agent's answers are checked against (each on a node of the
// agent's graph with nodes).
func contractsInfo(c *contract.Compiled, ids []string, nodes, required bool) *a2aserver.ContractsInfo {
	canonical, err := contract.Canonical(c.Contract())
	if err != nil {
		// A compiled contract was encoded to compile it; it encodes again.
		canonical = nil
	}
	produces, requires := c.ResourceTypes(ids)
	ct := c.Contract()
	return &a2aserver.ContractsInfo{
		Required: required,
		Contracts: []a2aserver.ContractRef{{
			ID: ct.ID, Version: ct.Version, Digest: c.Digest(), Steps: ids, Nodes: nodes, Canonical: canonical,
		}},
		Produces: produces, Requires: requires,
	}
}

// stepIDs returns the ids of c's steps, in order.
func stepIDs(c *contract.Compiled) []string {
	var ids []string
	for _, s := range c.Contract().Steps {
		ids = append(ids, s.ID)
	}
	return ids
}

// middleware returns the gate as a pipeline step of agent a.
func (g *agentGate) middleware(a agent.Agent, o contract.GateOptions) task.Middleware {
	if g.remote != "" {
		return &remoteGate{digest: g.remote, agent: a.(remoteAgent), o: o}
	}
	if g.nodes != nil {
		return g.nodes.NodeGate(o)
	}
	return g.step.Middleware(o)
}

// check refuses a gate the agent's runtime cannot serve: nodes on a
// runtime that does not report its graph's nodes.
func (g *agentGate) check(ac config.Agent, a agent.Agent) *config.Error {
	md := agent.MetadataOf(a)
	if _, ok := a.(remoteAgent); g.remote != "" && !ok {
		return g.spec.Error("remote", fmt.Sprintf("agent type %q has no remote card; remote pins the contract a remote A2A agent's card declares (type a2a)", ac.Type), nil)
	}
	if g.nodes != nil && !md.Nodes {
		return g.spec.Error("nodes", fmt.Sprintf("agent type %q does not report the nodes of a graph; nodes: true needs a runtime that does (langgraph), or name the step the agent's answer is checked against with step", ac.Type), nil)
	}
	return nil
}

// buildContract compiles agent ac's contract, or returns nil when it has
// none. Problems are placed in the configuration (an inline contract,
// the file, step and nodes keys) or in the contract file (its own errors,
// with file:line).
func buildContract(cfg *config.Config, ac config.Agent, baseDir string) (*agentGate, config.Errors) {
	spec, ok := cfg.ContractSpec(ac, baseDir)
	if !ok {
		return nil, nil
	}
	if spec.Remote != "" {
		return &agentGate{remote: spec.Remote, spec: spec}, nil
	}
	if spec.Decode != nil {
		step, errs := inlineContract(spec)
		if step == nil {
			return nil, errs
		}
		return &agentGate{step: step, spec: spec}, errs
	}
	c, compiled, err := contract.LoadWith(spec.File, contract.ValidateOptions{KnownAgent: func(name string) bool {
		_, ok := cfg.Agent(name)
		return ok
	}})
	if err != nil {
		var ces contract.Errors
		if errors.As(err, &ces) && len(ces) > 0 && ces[0].File != "" {
			out := make(config.Errors, len(ces))
			for i, fe := range ces {
				out[i] = &config.Error{File: fe.File, Line: fe.Line, Path: fe.Path, Msg: fe.Msg, Err: err}
			}
			return nil, out
		}
		return nil, config.Errors{spec.Error("file", err.Error(), err)}
	}
	if spec.Nodes {
		for _, st := range c.Steps {
			if st.Agent != "" && st.Agent != ac.Name {
				return nil, config.Errors{spec.Error("nodes", fmt.Sprintf("step %q of %s is for agent %q, not %q: with nodes every step is a node of this agent's graph", st.ID, spec.File, st.Agent, ac.Name), nil)}
			}
		}
		return &agentGate{nodes: compiled, spec: spec}, nil
	}
	step, ok := compiled.Step(spec.Step)
	if !ok {
		ids := make([]string, len(c.Steps))
		for i, s := range c.Steps {
			ids[i] = s.ID
		}
		return nil, config.Errors{spec.Error("step", fmt.Sprintf("contract %s has no step %q (steps: %s)", spec.File, spec.Step, strings.Join(ids, ", ")), nil)}
	}
	if a := step.Step().Agent; a != "" && a != ac.Name {
		return nil, config.Errors{spec.Error("step", fmt.Sprintf("step %q of %s is for agent %q, not %q", spec.Step, spec.File, a, ac.Name), nil)}
	}
	return &agentGate{step: step, spec: spec}, nil
}

// inlineContract decodes and compiles an inline contract: a contract
// named after the agent with one step of the same name.
func inlineContract(spec config.ContractSpec) (*contract.CompiledStep, config.Errors) {
	var in inlineStep
	if err := spec.Decode(&in); err != nil {
		var es config.Errors
		if errors.As(err, &es) {
			return nil, es
		}
		return nil, config.Errors{spec.Error("", err.Error(), err)}
	}
	var errs config.Errors
	if len(in.Assertions) == 0 {
		errs = append(errs, spec.Error("assertions", "required: at least one assertion (type, message, check)", nil))
	}
	c := &contract.AgentContract{
		Version: "1.0", ID: spec.Agent, Strictness: in.Strictness, Resources: in.Resources,
		Steps: []contract.ContractStep{{
			ID: spec.Agent, Agent: spec.Agent, Creates: in.Creates, Consumes: in.Consumes,
			Assertions: in.Assertions, OnViolation: in.OnViolation,
		}},
	}
	// The contract's id and its step's are the agent's name, which the
	// configuration has checked already (with rules of its own).
	var seen []string
	for _, fe := range contract.Validate(c, contract.ValidateOptions{}) {
		if fe.Path == "id" || fe.Path == "steps[0].id" || fe.Path == "steps[0].agent" {
			continue
		}
		seen = append(seen, fe.Path)
		errs = append(errs, spec.Error(inlinePath(fe.Path), fe.Msg, nil))
	}
	// Compile's errors about a field Validate reported already (an
	// unknown check type) say the same again.
	covered := func(p string) bool {
		for _, q := range seen {
			if p == q || strings.HasPrefix(p, q+".") || strings.HasPrefix(q, p+".") {
				return true
			}
		}
		return false
	}
	compiled, err := contract.Compile(c)
	if err != nil {
		var ces contract.Errors
		if !errors.As(err, &ces) {
			return nil, append(errs, spec.Error("", err.Error(), err))
		}
		for _, fe := range ces {
			if !covered(fe.Path) {
				errs = append(errs, spec.Error(inlinePath(fe.Path), fe.Msg, nil))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	step, _ := compiled.Step(spec.Agent)
	return step, nil
}

// inlinePath turns a field path of the contract an inline step is made
// into ("steps[0].assertions[1].check") into the inline one
// ("assertions[1].check"): the step's fields are the contract's.
func inlinePath(p string) string {
	if rest, ok := strings.CutPrefix(p, "steps[0]"); ok {
		return strings.TrimPrefix(rest, ".")
	}
	return p
}

// verifiedResult returns the verified result of t's newest checked
// attempt (nil when none): from the evidence t carries when the
// Coordinator just published it at an attempt's end (no read), else read
// from its execution record; only agents with a contract are looked up,
// so the others cost nothing.
//
// A served contract's run shows what its steps verified so far
// (runResults).
func verifiedResult(coord *task.Coordinator, gated map[string]bool, runs map[string]*contract.Compiled) func(ctx context.Context, t *task.Task) (any, error) {
	return func(ctx context.Context, t *task.Task) (any, error) {
		if c := runs[t.Agent]; c != nil {
			if t.Children == 0 {
				return nil, nil
			}
			return runResults(ctx, coord, c, t)
		}
		if !gated[t.Agent] || t.Attempt == 0 {
			return nil, nil
		}
		if vr := contract.NewestJSONIn(t.LastEvidence); vr != nil {
			// Passed on as the gate encoded it (json.Marshal): the
			// answer's JSON carries it as is, without a decode, a new
			// encode or, in SendMessage's answer, encoding/json's
			// validating copy.
			return a2aserver.CompactJSON(vr), nil
		}
		recs, err := coord.Timeline(ctx, t.ID)
		if err != nil {
			return nil, err
		}
		vr, err := contract.Newest(recs)
		if vr == nil || err != nil {
			return nil, err
		}
		return vr, nil
	}
}
