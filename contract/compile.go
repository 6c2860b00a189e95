package contract

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// compiler compiles one check type. Built-in check types are listed in
// builtins (checks.go); custom validators come from RegisterValidator.
type compiler func(c *Check) (CheckFunc, error)

var (
	validatorsMu sync.RWMutex
	validators   = map[string]Validator{}
)

// RegisterValidator makes a custom check type available to every contract
// compiled afterwards: an assertion whose check.type is name runs v. It
// panics when name is empty, a built-in check type, or already registered
// (as database/sql.Register does): registration is a program's setup.
func RegisterValidator(name string, v Validator) {
	if name == "" || v == nil {
		panic("contract: RegisterValidator needs a name and a validator")
	}
	if _, ok := builtins[name]; ok {
		panic(fmt.Sprintf("contract: %q is a built-in check type", name))
	}
	validatorsMu.Lock()
	defer validatorsMu.Unlock()
	if _, dup := validators[name]; dup {
		panic(fmt.Sprintf("contract: validator %q registered twice", name))
	}
	validators[name] = v
}

// KnownCheck reports whether typ is a built-in check type or a registered
// validator.
func KnownCheck(typ string) bool {
	if _, ok := builtins[typ]; ok {
		return true
	}
	validatorsMu.RLock()
	defer validatorsMu.RUnlock()
	_, ok := validators[typ]
	return ok
}

// CheckTypes returns the built-in check types and the registered
// validators' names, sorted.
func CheckTypes() []string {
	var out []string
	for t := range builtins {
		out = append(out, t)
	}
	validatorsMu.RLock()
	for t := range validators {
		out = append(out, t)
	}
	validatorsMu.RUnlock()
	slices.Sort(out)
	return out
}

func compileCheck(c *Check) (CheckFunc, error) {
	if comp, ok := builtins[c.Type]; ok {
		return comp(c)
	}
	validatorsMu.RLock()
	v, ok := validators[c.Type]
	validatorsMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("unknown check type %q (known: %v)", c.Type, CheckTypes())
	}
	check := *c
	return func(ctx context.Context, in *Input) Verdict { return v(ctx, &check, in) }, nil
}

// Compiled is a contract with every check compiled once: what gates run.
type Compiled struct {
	contract *AgentContract
	steps    map[string]*CompiledStep
	order    []string
}

// CompiledStep is one step of a compiled contract.
type CompiledStep struct {
	contract   *Compiled
	step       *ContractStep
	strictness Strictness
	assertions []compiledAssertion
}

type compiledAssertion struct {
	a     *ContractAssertion
	check CheckFunc
}

// Compile compiles every check of c. It reports every check that does not
// compile (a schema, a pattern, a JSONPath or CEL expression, an unknown
// type) as Errors, with field paths; it does not re-check the contract's
// structure (Validate does).
func Compile(c *AgentContract) (*Compiled, error) {
	out := &Compiled{contract: c, steps: map[string]*CompiledStep{}}
	var errs Errors
	strict := c.Strictness
	if strict == "" {
		strict = Loose
	}
	for i := range c.Steps {
		st := &c.Steps[i]
		cs := &CompiledStep{contract: out, step: st, strictness: strict}
		for j := range st.Assertions {
			a := &st.Assertions[j]
			fn, err := compileCheck(&a.Check)
			if err != nil {
				errs = append(errs, FieldError{Path: fmt.Sprintf("steps[%d].assertions[%d].check", i, j), Msg: err.Error()})
				continue
			}
			cs.assertions = append(cs.assertions, compiledAssertion{a: a, check: fn})
		}
		out.steps[st.ID] = cs
		out.order = append(out.order, st.ID)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// Contract returns the contract c was compiled from.
func (c *Compiled) Contract() *AgentContract { return c.contract }

// Step returns the compiled step with the given id.
func (c *Compiled) Step(id string) (*CompiledStep, bool) {
	s, ok := c.steps[id]
	return s, ok
}

// Step returns the step's definition.
func (s *CompiledStep) Step() *ContractStep { return s.step }

// PostGate checks every assertion of the step against in and decides, by
// the contract's strictness, whether the gate passed: strict fails on any
// failed assertion, loose on a failed assert only, permissive never.
func (s *CompiledStep) PostGate(ctx context.Context, in *Input) GateResult {
	g := GateResult{Passed: true, Results: make([]ValidationResult, 0, len(s.assertions))}
	for _, ca := range s.assertions {
		v := ca.check(ctx, in)
		g.Results = append(g.Results, ValidationResult{
			Check: ca.a.Check.Type, Target: ca.a.Check.Target, Type: ca.a.Type, Message: ca.a.Message,
			Passed: v.Passed, Reason: v.Reason, Path: v.Path,
		})
		if !v.Passed && s.fails(ca.a.Type) {
			g.Passed = false
			g.FailedAssertions = append(g.FailedAssertions, *ca.a)
		}
	}
	return g
}

// fails reports whether a failed assertion of type t fails the gate.
func (s *CompiledStep) fails(t AssertionType) bool {
	switch s.strictness {
	case Permissive:
		return false
	case Strict:
		return true
	default:
		return t != Suggest
	}
}
