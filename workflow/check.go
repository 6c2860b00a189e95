package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pactum/pactum/contract"
)

// HandoffCheck is the contract check type that holds an agent's answer to
// the handoff rules (CheckHandoff). Its Check.Config is an Expect:
// {"from": "planner", "to": ["code-reviewer"], "last": false}. It reads
// the step's output text (contract.OutputText); a config that is not an
// Expect with a sender fails the check saying so.
const HandoffCheck = "handoff"

func init() { contract.RegisterValidator(HandoffCheck, checkHandoff) }

func checkHandoff(_ context.Context, c *contract.Check, in *contract.Input) contract.Verdict {
	e, err := expectOf(c.Config)
	if err != nil {
		return contract.Verdict{Reason: fmt.Sprintf("handoff check: bad config: %v", err)}
	}
	if in == nil || in.Result == nil {
		return contract.Verdict{Reason: "there is no output (the step has not run)"}
	}
	if _, problems := CheckHandoff(contract.OutputText(in.Result), e); len(problems) > 0 {
		return contract.Verdict{Reason: strings.Join(problems, "; ")}
	}
	return contract.Verdict{Passed: true}
}

// expectOf decodes a handoff check's config.
func expectOf(cfg map[string]any) (Expect, error) {
	var e Expect
	if cfg == nil {
		return e, fmt.Errorf(`no config (want {"from": AGENT, "to": [AGENTS], "last": BOOL})`)
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return e, fmt.Errorf("config is not JSON: %w", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return e, fmt.Errorf(`config: %w (want {"from": AGENT, "to": [AGENTS], "last": BOOL})`, err)
	}
	if strings.TrimSpace(e.From) == "" {
		return e, fmt.Errorf(`config: "from" is required (the agent that writes the handoff)`)
	}
	if !e.Last && len(e.To) == 0 {
		return e, fmt.Errorf(`config: "to" is required unless "last" is true (the next phase's agents)`)
	}
	return e, nil
}

// config is e as a check's Config.
func (e Expect) config() map[string]any {
	to := make([]any, len(e.To))
	for i, t := range e.To {
		to[i] = t
	}
	m := map[string]any{"from": e.From, "to": to}
	if e.Last {
		m["last"] = true
	}
	return m
}

// Expectations returns what each agent's handoff must name: From the
// agent itself, To the next phase's agents in declared order, and Last
// for the final phase's agents.
func (w *Workflow) Expectations() map[string]Expect {
	out := map[string]Expect{}
	for i, p := range w.Phases {
		for _, a := range p.Agents {
			e := Expect{From: a}
			if i == len(w.Phases)-1 {
				e.Last = true
			} else {
				e.To = append([]string(nil), w.Phases[i+1].Agents...)
			}
			out[a] = e
		}
	}
	return out
}

// ContractID is the id of the contract pactum writes for the workflow
// named name.
func ContractID(name string) string { return "workflow." + name }

// Contract returns the contract pactum writes for the workflow: id
// "workflow.<name>", version 1.0, strict; one step per agent (the step's
// id and agent are the agent's name), depending on the previous phase's
// agents, retried with feedback on a violation. A step that hands off to
// a next phase must pass a sections check on its output (HandoffSections)
// and the handoff check with its Expect; a final step only the handoff
// check, which accepts a summary instead of a handoff.
func (w *Workflow) Contract() *contract.AgentContract {
	c := &contract.AgentContract{
		Version:     "1.0",
		ID:          ContractID(w.Name),
		Description: w.Description,
		Strictness:  contract.Strict,
	}
	exp := w.Expectations()
	var prev []string
	for _, p := range w.Phases {
		for _, a := range p.Agents {
			e := exp[a]
			step := contract.ContractStep{
				ID:          a,
				Agent:       a,
				DependsOn:   append([]string(nil), prev...),
				OnViolation: contract.ViolationRetry,
			}
			if !e.Last {
				step.Assertions = append(step.Assertions, contract.ContractAssertion{
					Type:    contract.Assert,
					Message: "The answer must hold a handoff with the sections " + strings.Join(HandoffSections, ", ") + ` (write None in a section with nothing to say).`,
					Check: contract.Check{
						Type: "sections", Target: "output",
						Sections: append([]string(nil), HandoffSections...),
					},
				})
			}
			msg := fmt.Sprintf("The answer must be a handoff headed %q with every section filled in", expectedHeading(e))
			if e.Last {
				msg += ", or the final report's summary under a SUMMARY heading"
			}
			step.Assertions = append(step.Assertions, contract.ContractAssertion{
				Type:    contract.Assert,
				Message: msg + ".",
				Check:   contract.Check{Type: HandoffCheck, Target: "output", Config: e.config()},
			})
			c.Steps = append(c.Steps, step)
		}
		prev = p.Agents
	}
	return c
}
