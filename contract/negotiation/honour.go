package negotiation

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pactum/pactum/contract"
)

// Agent returns the name of the hidden agent whose tasks are the
// negotiations of agent name's contracts. The "/" keeps it apart from
// every configured name (contract.StepAgent does the same).
func Agent(name string) string { return name + "/negotiate" }

// Capability is what an agent can honour: the agent a step must name
// (or leave empty), the resource types its steps may create, and the
// assertions it holds its own answers to.
//
// A contract's step is honoured when it names no agent, the agent or its
// action, and every resource it creates is of a type the agent produces
// (the types its own contract's steps create; none declared: data and
// message, what every agent's answer is). The provider accepts a
// contract when it honours every step and each step holds the
// assertions of the agent's own contract (Assertions) too.
type Capability struct {
	// Agent is the agent's name; Action its action.
	Agent, Action string
	// Produces are the resource types the agent produces.
	Produces []string
	// Assertions are the agent's own contract's assertions, which every
	// step it runs must hold (none: no requirement).
	Assertions []contract.ContractAssertion
}

// defaultProduces is what an agent produces when its own contract's
// steps create nothing: its answer, as a message and as data.
var defaultProduces = []string{string(contract.ResourceData), string(contract.ResourceMessage)}

// produces returns the types the agent produces.
func (c *Capability) produces() []string {
	if len(c.Produces) == 0 {
		return defaultProduces
	}
	return c.Produces
}

// StepReport says whether the agent can honour one step.
type StepReport struct {
	ID string `json:"id"`
	// Honoured: the agent can run the step as written.
	Honoured bool `json:"honoured"`
	// Reasons say why not.
	Reasons []string `json:"reasons,omitempty"`
	// Missing are the agent's own assertions the step lacks.
	Missing []string `json:"missing,omitempty"`
}

// Report is what Validate says of a contract.
type Report struct {
	// Agent is the agent validated against.
	Agent string `json:"agent"`
	// Check is what `pactum contract check` says of it.
	Check contract.CheckReport `json:"check"`
	// Steps say, for a valid contract, whether the agent can honour each
	// step.
	Steps []StepReport `json:"steps,omitempty"`
	// Acceptable is true when the agent would accept the contract as is:
	// valid, every step honoured, no assertion missing.
	Acceptable bool `json:"acceptable"`
	// Counter is the counter-proposal the agent would make (when it
	// would make one), and Rejection why it would reject the contract.
	Counter   []Modification `json:"counter,omitempty"`
	Rejection string         `json:"rejection,omitempty"`
}

// Validate checks data (a contract, JSON or YAML) as `pactum contract
// check` does and, when it is valid, whether the agent can honour each of
// its steps, and what it would answer to it as a proposal.
func (c *Capability) Validate(data []byte) Report {
	check, compiled := contract.CheckBytes("contract", data, contract.ValidateOptions{})
	r := Report{Agent: c.Agent, Check: check}
	if compiled == nil {
		r.Rejection = "the contract is invalid"
		return r
	}
	r.Steps = c.steps(compiled)
	d := c.decide(compiled)
	r.Acceptable = d.accept
	r.Counter, r.Rejection = d.mods, d.reject
	return r
}

// steps reports, step by step, whether the agent can honour compiled.
func (c *Capability) steps(compiled *contract.Compiled) []StepReport {
	ct := compiled.Contract()
	out := make([]StepReport, len(ct.Steps))
	for i := range ct.Steps {
		st := &ct.Steps[i]
		r := StepReport{ID: st.ID, Honoured: true}
		if !c.runs(st.Agent) {
			r.Honoured = false
			r.Reasons = append(r.Reasons, fmt.Sprintf("the step is for agent %q, not %q", st.Agent, c.Agent))
		}
		produced, _ := compiled.ResourceTypes([]string{st.ID})
		for _, t := range produced {
			if !slices.Contains(c.produces(), t) {
				r.Honoured = false
				r.Reasons = append(r.Reasons, fmt.Sprintf("it creates a resource of type %s; agent %s produces %s", t, c.Agent, strings.Join(c.produces(), ", ")))
			}
		}
		for _, a := range c.missing(st) {
			r.Missing = append(r.Missing, a.Message)
		}
		out[i] = r
	}
	return out
}

// runs reports whether a step naming agent runs on this agent.
func (c *Capability) runs(agent string) bool {
	return agent == "" || agent == c.Agent || (c.Action != "" && agent == c.Action)
}

// missing returns the agent's assertions st lacks.
func (c *Capability) missing(st *contract.ContractStep) []contract.ContractAssertion {
	var out []contract.ContractAssertion
	for _, a := range c.Assertions {
		if !slices.ContainsFunc(st.Assertions, func(b contract.ContractAssertion) bool { return sameJSON(a, b) }) {
			out = append(out, a)
		}
	}
	return out
}

// decision is what the provider answers to a contract: accept it, the
// modifications of a counter-proposal, or why it rejects it.
type decision struct {
	accept bool
	mods   []Modification
	reject string
}

// decide is the provider's answer to a valid contract: accept it when it
// honours every step and no assertion is missing; else counter with what
// it can fix — a step for another agent is changed to this agent, the
// missing assertions are added, a step that creates what the agent does
// not produce is removed — when the result is a valid contract it would
// accept; else reject, with the reasons.
func (c *Capability) decide(compiled *contract.Compiled) decision {
	ct := compiled.Contract()
	var mods, removes []Modification
	var problems []string
	kept := 0
	for i, r := range c.steps(compiled) {
		st := &ct.Steps[i]
		if r.Honoured && len(r.Missing) == 0 {
			kept++
			continue
		}
		produced, _ := compiled.ResourceTypes([]string{st.ID})
		if bad := slices.DeleteFunc(slices.Clone(produced), func(t string) bool { return slices.Contains(c.produces(), t) }); len(bad) > 0 {
			problems = append(problems, fmt.Sprintf("step %s: %s", st.ID, strings.Join(r.Reasons, "; ")))
			removes = append(removes, Modification{Op: OpRemove, Path: "/steps/" + strconv.Itoa(i),
				Reason: fmt.Sprintf("agent %s cannot run step %s: it creates %s, and the agent produces only %s", c.Agent, st.ID, strings.Join(bad, ", "), strings.Join(c.produces(), ", "))})
			continue
		}
		kept++
		if !c.runs(st.Agent) {
			v, _ := json.Marshal(c.Agent)
			mods = append(mods, Modification{Op: OpChange, Path: fmt.Sprintf("/steps/%d/agent", i), Value: v,
				Reason: fmt.Sprintf("this step runs on agent %s here, not %s", c.Agent, st.Agent)})
		}
		missing := c.missing(st)
		if len(missing) > 0 && len(st.Assertions) == 0 {
			v, _ := json.Marshal(missing)
			mods = append(mods, Modification{Op: OpAdd, Path: fmt.Sprintf("/steps/%d/assertions", i), Value: v,
				Reason: fmt.Sprintf("agent %s holds every answer to its own contract's assertions", c.Agent)})
			continue
		}
		for _, a := range missing {
			v, _ := json.Marshal(a)
			mods = append(mods, Modification{Op: OpAdd, Path: fmt.Sprintf("/steps/%d/assertions/-", i), Value: v,
				Reason: fmt.Sprintf("agent %s holds every answer to its own contract's assertion %q", c.Agent, a.Message)})
		}
	}
	if kept == 0 {
		return decision{reject: "agent " + c.Agent + " can honour no step of the contract: " + strings.Join(problems, "; ")}
	}
	slices.Reverse(removes) // the last first, so that each index still names its step
	mods = append(mods, removes...)
	if len(mods) == 0 {
		return decision{accept: true}
	}
	if _, _, err := Apply(ct, mods); err != nil {
		return decision{reject: fmt.Sprintf("agent %s cannot honour the contract as proposed (%s), and the contract without what it cannot honour is invalid: %v", c.Agent, strings.Join(problems, "; "), err)}
	}
	return decision{mods: mods}
}

// sameJSON reports whether a and b encode to the same JSON: assertions
// read from YAML and from JSON compare equal when they say the same.
func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
