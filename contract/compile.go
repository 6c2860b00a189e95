package contract

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/gowebpki/jcs"
	"github.com/santhosh-tekuri/jsonschema/v6"
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
	contract  *AgentContract
	steps     map[string]*CompiledStep
	order     []string
	resources map[string]*compiledResource
	digest    string
}

// Digest returns the digest of the contract's canonical form:
// "sha256:" and the hex SHA-256 of its JSON in RFC 8785 canonical form
// (Canonical). Every verified result names it (ContractDigest), so a
// trace says which contract it ran under.
func (c *Compiled) Digest() string { return c.digest }

// Canonical returns c's JSON in RFC 8785 canonical form (JCS): the bytes
// a contract's digest is taken of, whatever file format or key order it
// was written in.
func Canonical(c *AgentContract) ([]byte, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("contract %s: %w", c.ID, err)
	}
	out, err := jcs.Transform(b)
	if err != nil {
		return nil, fmt.Errorf("contract %s: canonical form: %w", c.ID, err)
	}
	return out, nil
}

// Digest returns the digest of c's canonical form (Compiled.Digest).
func Digest(c *AgentContract) (string, error) {
	b, err := Canonical(c)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// CompiledStep is one step of a compiled contract.
type CompiledStep struct {
	contract   *Compiled
	step       *ContractStep
	strictness Strictness
	assertions []compiledAssertion
	// consumes are the resources the pre-gate requires, with their
	// schemas; preValidators and postValidators are the contract's
	// validators bound to the step's consumed and created resources.
	consumes       []*compiledResource
	preValidators  []boundValidator
	postValidators []boundValidator
}

type compiledAssertion struct {
	a     *ContractAssertion
	check CheckFunc
}

// compiledResource is a resource's definition with its schema compiled.
// A resource id the contract does not define is a data resource named by
// its id, without a schema.
type compiledResource struct {
	def    ContractResource
	schema *jsonschema.Schema
}

// boundValidator is one of the contract's validators applied to one
// resource.
type boundValidator struct {
	name     string
	resource string
	check    CheckFunc
}

// Compile compiles every check of c: the assertions' checks, the
// resources' schemas and the validators, each bound to the resources of
// the types it names in the steps that consume or create them. It
// reports every one that does not compile (a schema, a pattern, a
// JSONPath or CEL expression, an unknown type) as Errors, with field
// paths down to the parameter ("steps[0].assertions[1].check.pattern");
// it does not re-check the contract's structure (Validate does).
func Compile(c *AgentContract) (*Compiled, error) {
	out := &Compiled{contract: c, steps: map[string]*CompiledStep{}, resources: map[string]*compiledResource{}}
	var errs Errors
	if d, err := Digest(c); err != nil {
		errs = append(errs, FieldError{Msg: err.Error()})
	} else {
		out.digest = d
	}
	strict := c.Strictness
	if strict == "" {
		strict = Loose
	}
	for i := range c.Resources {
		r := &c.Resources[i]
		cr := &compiledResource{def: *r}
		if r.Schema != nil {
			sch, err := compileSchema(r.Schema)
			if err != nil {
				errs = append(errs, FieldError{Path: fmt.Sprintf("resources[%d].schema", i), Msg: err.Error()})
			}
			cr.schema = sch
		}
		if _, dup := out.resources[r.ID]; !dup {
			out.resources[r.ID] = cr
		}
	}
	vals, verrs := compileValidators(c.Validators)
	errs = append(errs, verrs...)
	for i := range c.Steps {
		st := &c.Steps[i]
		cs := &CompiledStep{contract: out, step: st, strictness: strict}
		for j := range st.Assertions {
			a := &st.Assertions[j]
			fn, err := compileCheck(&a.Check)
			if err != nil {
				errs = append(errs, checkError(fmt.Sprintf("steps[%d].assertions[%d].check", i, j), err))
				continue
			}
			cs.assertions = append(cs.assertions, compiledAssertion{a: a, check: fn})
		}
		for _, id := range st.Consumes {
			r := out.resource(id)
			cs.consumes = append(cs.consumes, r)
			cs.preValidators = append(cs.preValidators, bindValidators(vals, r)...)
		}
		for _, id := range st.Creates {
			cs.postValidators = append(cs.postValidators, bindValidators(vals, out.resource(id))...)
		}
		out.steps[st.ID] = cs
		out.order = append(out.order, st.ID)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// checkError places a check's compile error: a parameter's error at the
// parameter's path under the check.
func checkError(path string, err error) FieldError {
	var pe *paramError
	if errors.As(err, &pe) {
		return FieldError{Path: path + "." + pe.field, Msg: pe.err.Error()}
	}
	return FieldError{Path: path, Msg: err.Error()}
}

// resource returns the definition of resource id: the contract's, or a
// data resource named by the id.
func (c *Compiled) resource(id string) *compiledResource {
	if r, ok := c.resources[id]; ok {
		return r
	}
	return &compiledResource{def: ContractResource{ID: id, Type: ResourceData}}
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
//
// It then applies the contract's validators to the resources the step
// creates that in.Resources holds (put what ExtractResources found
// there): each is recorded as "validator:NAME" on "resource:ID" and
// weighs as an assert, so it fails the gate unless the contract is
// permissive; a failed one is listed in FailedAssertions as an assertion
// whose message names the validator and the resource, for the agent's
// feedback. A created resource in.Resources does not hold is not
// validated: an exists assertion on "resource:ID" is how a step requires
// it.
func (s *CompiledStep) PostGate(ctx context.Context, in *Input) GateResult {
	in = in.withMemo()
	g := GateResult{Passed: true, Results: make([]ValidationResult, 0, len(s.assertions)+len(s.postValidators))}
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
	for _, bv := range s.postValidators {
		if _, ok := in.Resources[bv.resource]; !ok {
			continue
		}
		r := bv.run(ctx, in)
		g.Results = append(g.Results, r)
		if !r.Passed && s.fails(Assert) {
			g.Passed = false
			g.FailedAssertions = append(g.FailedAssertions, ContractAssertion{
				Type: Assert, Message: r.Message + ": " + r.Reason,
				Check: Check{Type: bv.name, Target: r.Target},
			})
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

// Compiled returns the contract the step belongs to.
func (s *CompiledStep) Compiled() *Compiled { return s.contract }

// ResourceTypes returns the types of the resources the steps named by
// ids create (produces) and consume (requires), each sorted, without
// repeats: what an agent running those steps produces and needs, as its
// card declares it. An unknown step id adds nothing.
func (c *Compiled) ResourceTypes(ids []string) (produces, requires []string) {
	add := func(out []string, rid string) []string {
		t := string(c.resource(rid).def.Type)
		if t == "" || slices.Contains(out, t) {
			return out
		}
		return append(out, t)
	}
	for _, id := range ids {
		s, ok := c.Step(id)
		if !ok {
			continue
		}
		for _, r := range s.step.Creates {
			produces = add(produces, r)
		}
		for _, r := range s.step.Consumes {
			requires = add(requires, r)
		}
	}
	slices.Sort(produces)
	slices.Sort(requires)
	return produces, requires
}
