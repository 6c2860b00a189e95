package node

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/negotiation"
	"github.com/pactum/pactum/mcpserver"
	"github.com/pactum/pactum/task"
)

// CiteKey is the key, in a task's request metadata (its envelope's
// metadata), of the id of the accepted negotiation the task cites: the
// task is then checked against exactly that negotiation's contract
// (pinnedGate).
const CiteKey = mcpserver.NegotiationKey

// NegotiationKey loads the node's negotiation signing key
// (negotiation.signing_key_file), named by the node's base URL; nil
// without one. A file that does not hold an Ed25519 key is an error
// placed at its key in the configuration; the file's content is never
// shown.
func NegotiationKey(cfg *config.Config, baseDir string) (*negotiation.Key, error) {
	file, place := cfg.NegotiationKey(baseDir)
	if file == "" {
		return nil, nil
	}
	k, err := negotiation.LoadKey(file, cmp.Or(cfg.BaseURL, config.DefaultBaseURL(cfg.Listen)))
	if err != nil {
		return nil, place(fmt.Sprintf("%s: %v", file, err), err)
	}
	return k, nil
}

// negotiable is an agent whose contract can be negotiated: its service
// (the provider's side) and the agent spec of its negotiations.
type negotiable struct {
	svc  *negotiation.Service
	spec task.AgentSpec
}

// newNegotiable returns the negotiations of agent b, whose own contract
// is g, signed with key (nil: the node validates but cannot negotiate).
func newNegotiable(cfg *config.Config, b builtAgent, g *agentGate, key *negotiation.Key) *negotiable {
	capab := negotiation.Capability{Agent: b.config.Name, Action: b.config.Action}
	if g.nodes != nil {
		capab.Produces, _ = g.nodes.ResourceTypes(stepIDs(g.nodes))
	} else {
		capab.Produces, _ = g.step.Compiled().ResourceTypes([]string{g.step.Step().ID})
		capab.Assertions = g.step.Step().Assertions
	}
	p := &negotiation.Provider{Capability: capab, Key: key}
	return &negotiable{
		svc:  &negotiation.Service{Provider: p},
		spec: runAgentSpec(cfg, negotiation.Agent(b.config.Name), p.Runner()),
	}
}

// negotiationPermissions lets an actor that may call an agent's action
// negotiate its contract.
func negotiationPermissions(perms task.Permissions, negs map[string]*negotiable, cfg *config.Config) {
	behind := make(map[string]string, len(negs))
	for name := range negs {
		if ac, ok := cfg.Agent(name); ok {
			behind[negotiation.Agent(name)] = ac.Action
		}
	}
	allowBehind(perms, behind)
}

// pinnedGate is the gate of an agent whose contract can be negotiated: a
// task that cites an accepted negotiation (CiteKey) is checked against
// exactly the contract accepted there, every other task against the
// agent's own contract (own).
//
// The citation must name a negotiation of this agent, accepted, of the
// task's actor, whose accepted contract verifies (both signatures, the
// provider's this node's key); otherwise the task fails with
// contract_violation. The accepted contract is verified on every task
// (a tampered store is caught), compiled once per digest.
type pinnedGate struct {
	own   task.Middleware
	agent string
	// nodes checks every step on the node of its name (the agent's own
	// contract does); else one step: the contract's only one, or the one
	// named like the agent's own step (step).
	nodes bool
	step  string
	o     contract.GateOptions
	key   *negotiation.Key
	coord func() *task.Coordinator

	mu    sync.Mutex
	gates map[string]task.Middleware // by digest
}

func (g *pinnedGate) Name() string { return contract.GateStep }

func (g *pinnedGate) Handle(ctx context.Context, a *task.Attempt, next task.Next) (*task.Result, error) {
	id, cited := a.Task.Envelope.Metadata[CiteKey]
	if !cited {
		return g.own.Handle(ctx, a, next)
	}
	gate, err := g.resolve(ctx, a.Task, id)
	if err != nil {
		return nil, err
	}
	return gate.Handle(ctx, a, next)
}

// resolve returns the gate of the accepted contract t cites (id).
func (g *pinnedGate) resolve(ctx context.Context, t *task.Task, cited any) (task.Middleware, error) {
	refuse := func(format string, args ...any) error {
		return task.Permanent(&task.Error{Code: task.CodeContractViolation,
			Message: fmt.Sprintf("%s %v: ", CiteKey, cited) + fmt.Sprintf(format, args...)})
	}
	id, ok := cited.(string)
	if !ok || id == "" {
		return nil, refuse("must be the id of an accepted negotiation")
	}
	if g.key == nil {
		return nil, refuse("%v", negotiation.ErrNoKey)
	}
	n, err := g.coord().Store().GetTask(ctx, id, 0)
	if err != nil {
		if task.ErrorCode(err) == task.CodeNotFound {
			return nil, refuse("no such negotiation of agent %s", g.agent)
		}
		return nil, fmt.Errorf("read negotiation %s: %w", id, err)
	}
	switch {
	case n.Agent != negotiation.Agent(g.agent) || n.Envelope.Actor != t.Envelope.Actor:
		// Another agent's, or another actor's: as if it did not exist.
		return nil, refuse("no such negotiation of agent %s", g.agent)
	case n.State != task.StateSucceeded:
		return nil, refuse("the negotiation is %s, not accepted", n.State)
	}
	acc, err := negotiation.AcceptedOf(n)
	if err != nil {
		return nil, refuse("%v", err)
	}
	c, err := acc.Verify()
	if err != nil {
		return nil, refuse("%v", err)
	}
	if acc.Negotiation != n.ID || acc.Agent != g.agent || acc.Parties[1].Key != g.key.Thumbprint {
		return nil, refuse("the accepted contract names negotiation %s of agent %s signed by provider %s: not this one's", acc.Negotiation, acc.Agent, acc.Parties[1].Key)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if gate, ok := g.gates[acc.Digest]; ok {
		return gate, nil
	}
	compiled, err := contract.Compile(c)
	if err != nil {
		return nil, refuse("%v", err)
	}
	var gate task.Middleware
	if g.nodes {
		gate = compiled.NodeGate(g.o)
	} else {
		steps := c.Steps
		i := 0
		if len(steps) > 1 {
			i = slices.IndexFunc(steps, func(s contract.ContractStep) bool { return s.ID == g.step })
			if i < 0 {
				ids := make([]string, len(steps))
				for j, s := range steps {
					ids[j] = s.ID
				}
				return nil, refuse("contract %s has %d steps (%s) and none is %q, the step this agent's answers are checked against", c.ID, len(steps), strings.Join(ids, ", "), g.step)
			}
		}
		st, _ := compiled.Step(steps[i].ID)
		gate = st.Middleware(g.o)
	}
	if g.gates == nil {
		g.gates = map[string]task.Middleware{}
	}
	g.gates[acc.Digest] = gate
	return gate, nil
}

// The node's MCP tools of contract validation and negotiation.
const (
	toolValidateContract  = "validate_contract"
	toolNegotiateContract = "negotiate_contract"
)

// validateContractInput is the input of validate_contract.
type validateContractInput struct {
	Agent    string          `json:"agent" jsonschema:"the agent asked: one whose card declares the contracts extension with a validate endpoint"`
	Contract json.RawMessage `json:"contract" jsonschema:"the contract, as the JSON of a contract file (version, id, steps, …)"`
}

// negotiateContractInput is the input of negotiate_contract.
type negotiateContractInput struct {
	Agent       string `json:"agent" jsonschema:"the agent whose contract is negotiated"`
	Negotiation string `json:"negotiation,omitempty" jsonschema:"id of an open negotiation: move answers it, or without move the negotiation is read; empty: move proposes a new one"`
	// Move is the caller's move.
	Move *negotiation.Move `json:"move,omitempty" jsonschema:"the move: {action: propose, contract, signature} opens a negotiation; {action: accept, signature}, {action: counter, modifications, signature} or {action: reject, reason} answers a counter-proposal. signature is the proposer's Ed25519 JWS (compact, detached payload) over the RFC 8785 canonical form of the contract it offers or accepts"`
}

// negotiationTools returns validate_contract and negotiate_contract when
// any agent's contract can be negotiated (negs).
func negotiationTools(negs map[string]*negotiable) []mcpserver.Tool {
	if len(negs) == 0 {
		return nil
	}
	names := slices.Sorted(maps.Keys(negs))
	find := func(agent string) (*negotiation.Service, error) {
		n, ok := negs[agent]
		if !ok {
			return nil, task.Errorf(task.CodeNotFound, "agent %q negotiates no contract (agents that do: %s)", agent, strings.Join(names, ", "))
		}
		return n.svc, nil
	}
	return []mcpserver.Tool{
		mcpserver.FuncTool(&mcp.Tool{
			Name:  toolValidateContract,
			Title: "Validate a contract against an agent",
			Description: "Check a contract as pactum contract check does (structure, dependencies, checks that compile) and say, step by step, " +
				"whether the agent can honour it (the step's agent, the resource types it creates), which of the agent's own assertions it lacks, " +
				"and what the agent would answer to it as a proposal: accept, a counter-proposal (modifications, each with its reason) or a rejection. " +
				"Agents: " + strings.Join(names, ", ") + ".",
			Annotations: &mcp.ToolAnnotations{Title: "Validate a contract", ReadOnlyHint: true, OpenWorldHint: boolPtr(false)},
		}, func(_ context.Context, in validateContractInput) (negotiation.Report, error) {
			svc, err := find(in.Agent)
			if err != nil {
				return negotiation.Report{}, err
			}
			return svc.Validate(in.Contract), nil
		}),
		mcpserver.FuncTool(&mcp.Tool{
			Name:  toolNegotiateContract,
			Title: "Negotiate a contract with an agent",
			Description: "Negotiate a contract with an agent, as the negotiate endpoint its card names does: propose a signed contract, then answer the agent's " +
				"counter-proposal (accept, counter with JSON-pointer modifications, reject) until it is accepted (signed by both parties; a task citing it with " +
				"request metadata pactum.negotiation: ID is verified against exactly that contract) or rejected. The answer is the negotiation: its status " +
				"(proposed, counter, accepted, rejected), the contract on the table with its digest and the offerer's signature, the modifications and the reason. " +
				"Agents: " + strings.Join(names, ", ") + ".",
			Annotations: &mcp.ToolAnnotations{Title: "Negotiate a contract", DestructiveHint: boolPtr(false), OpenWorldHint: boolPtr(false)},
		}, func(ctx context.Context, in negotiateContractInput) (*negotiation.View, error) {
			svc, err := find(in.Agent)
			if err != nil {
				return nil, err
			}
			switch {
			case in.Move == nil && in.Negotiation == "":
				return nil, task.Errorf(task.CodeInvalidArgument, "give a move (propose opens a negotiation) or the id of a negotiation to read")
			case in.Move == nil:
				return svc.Get(ctx, in.Negotiation)
			case in.Negotiation == "":
				return svc.Propose(ctx, in.Move)
			}
			return svc.Answer(ctx, in.Negotiation, in.Move)
		}),
	}
}
