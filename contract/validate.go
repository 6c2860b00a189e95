package contract

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Versions are the contract format versions this package reads.
var Versions = []string{"1.0"}

// validName is what a contract id must look like: it becomes a URL path
// segment (/agents/{id}) and a task's agent name.
var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// maxNameLen bounds a contract id.
const maxNameLen = 128

// MaxSteps bounds the steps of one contract; Validate refuses more.
const MaxSteps = 1000

// ValidateOptions are what Validate checks beyond the contract itself.
type ValidateOptions struct {
	// KnownAgent reports whether a step's agent is configured; nil: step
	// agents are not checked.
	KnownAgent func(name string) bool
}

// Validate checks a contract's structure and returns every problem found,
// each with its field path (no file or line: Load places them). It checks:
//
//   - version is present and supported (Versions); id is present and a
//     valid name (lower-case letters, digits, ".", "_", "-", starting
//     with a letter or digit);
//   - there is at least one step (and at most MaxSteps); step ids are present and unique; in a
//     contract with several steps every step names its agent, and with
//     KnownAgent set every named agent is known;
//   - dependsOn names other, existing steps, and the steps' dependencies
//     have no cycle;
//   - no resource id is created by two steps (or twice by one);
//   - every id a step consumes is either created by a step it depends on,
//     directly or through other steps (so it exists when the step runs),
//     or declared in resources and created by no step: an input the run
//     is given;
//   - resource ids are present and unique and their type is file, data,
//     message or artifact;
//   - assertions have a type (assert or suggest), a message and a check
//     whose type is a known check type (KnownCheck);
//   - onViolation and strictness, when set, are among their values;
//   - validators are exists, schema_match or a registered validator, and
//     their resource types are among the resource types or "*".
//
// Whether each check's parameters compile is Compile's to say.
func Validate(c *AgentContract, opts ValidateOptions) Errors {
	v := &validation{}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(stop); !ok {
					panic(r)
				}
			}
		}()
		v.contract(c, opts)
	}()
	return v.errs
}

type validation struct{ errs Errors }

// add records an error, stopping the validation when there are too many.
func (v *validation) add(path, format string, args ...any) {
	v.errs = append(v.errs, FieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
	if len(v.errs) >= maxErrors {
		v.errs = append(v.errs, FieldError{Path: path, Msg: "too many errors; stopping"})
		panic(stop{})
	}
}

func (v *validation) contract(c *AgentContract, opts ValidateOptions) {
	switch {
	case c.Version == "":
		v.add("version", "required (supported: %s)", quoteList(Versions))
	case !slices.Contains(Versions, c.Version):
		v.add("version", "unsupported version %q (supported: %s)", c.Version, quoteList(Versions))
	}
	switch {
	case c.ID == "":
		v.add("id", "required")
	case len(c.ID) > maxNameLen || !validName.MatchString(c.ID):
		v.add("id", "%q is not a valid contract id: use at most %d lower-case letters, digits, '.', '_' and '-', starting with a letter or digit (it becomes a URL path segment)", c.ID, maxNameLen)
	}
	if c.Strictness != "" && !slices.Contains([]Strictness{Strict, Loose, Permissive}, c.Strictness) {
		v.add("strictness", "unknown strictness %q (one of: strict, loose, permissive)", c.Strictness)
	}
	switch {
	case len(c.Steps) == 0:
		v.add("steps", "a contract needs at least one step")
	case len(c.Steps) > MaxSteps:
		v.add("steps", "%d steps; a contract has at most %d", len(c.Steps), MaxSteps)
		return
	}

	steps := map[string]int{} // id → index of its first definition
	var ids []string
	for i, st := range c.Steps {
		p := "steps[" + strconv.Itoa(i) + "]"
		switch first, dup := steps[st.ID]; {
		case st.ID == "":
			v.add(p+".id", "required")
		case dup:
			v.add(p+".id", "duplicate step id %q (first at steps[%d])", st.ID, first)
		default:
			steps[st.ID] = i
			ids = append(ids, st.ID)
		}
		switch {
		case st.Agent == "" && len(c.Steps) > 1:
			v.add(p+".agent", "required in a contract with several steps (each step names the agent that runs it)")
		case st.Agent != "" && opts.KnownAgent != nil && !opts.KnownAgent(st.Agent):
			v.add(p+".agent", "agent %q is not configured", st.Agent)
		}
		if st.OnViolation != "" && !slices.Contains([]Violation{ViolationRetry, ViolationEscalate, ViolationFail, ViolationContinue}, st.OnViolation) {
			v.add(p+".onViolation", "unknown policy %q (one of: retry, escalate, fail, continue)", st.OnViolation)
		}
		for j, a := range st.Assertions {
			v.assertion(fmt.Sprintf("%s.assertions[%d]", p, j), &a)
		}
	}

	// dependsOn: existing, other steps, each once.
	deps := make([][]int, len(c.Steps)) // step index → indexes it depends on
	for i, st := range c.Steps {
		listed := map[string]bool{}
		for j, dep := range st.DependsOn {
			p := fmt.Sprintf("steps[%d].dependsOn[%d]", i, j)
			k, ok := steps[dep]
			switch {
			case dep == "":
				v.add(p, "empty step id")
			case dep == st.ID:
				v.add(p, "a step cannot depend on itself")
			case !ok:
				v.add(p, "unknown step %q%s", dep, suggest(dep, ids))
			case listed[dep]:
				v.add(p, "%q is listed twice", dep)
			default:
				deps[i] = append(deps[i], k)
			}
			listed[dep] = true
		}
	}
	v.cycles(c, deps)

	// Resources.
	resources := map[string]int{}
	for i, r := range c.Resources {
		p := "resources[" + strconv.Itoa(i) + "]"
		switch first, dup := resources[r.ID]; {
		case r.ID == "":
			v.add(p+".id", "required")
		case dup:
			v.add(p+".id", "duplicate resource id %q (first at resources[%d])", r.ID, first)
		default:
			resources[r.ID] = i
		}
		switch {
		case r.Type == "":
			v.add(p+".type", "required (one of: %s)", resourceTypeList)
		case !slices.Contains(resourceTypes, r.Type):
			v.add(p+".type", "unknown resource type %q (one of: %s)", r.Type, resourceTypeList)
		}
	}

	// creates: each id by one step only.
	creator := map[string]int{}
	for i, st := range c.Steps {
		for j, id := range st.Creates {
			p := fmt.Sprintf("steps[%d].creates[%d]", i, j)
			switch first, dup := creator[id]; {
			case id == "":
				v.add(p, "empty resource id")
			case dup && first == i:
				v.add(p, "%q is listed twice", id)
			case dup:
				v.add(p, "resource %q is already created by step %q", id, c.Steps[first].ID)
			default:
				creator[id] = i
			}
		}
	}

	// consumes: created by an ancestor, or a declared input.
	for i, st := range c.Steps {
		var anc map[int]bool
		for j, id := range st.Consumes {
			p := fmt.Sprintf("steps[%d].consumes[%d]", i, j)
			k, created := creator[id]
			_, declared := resources[id]
			switch {
			case id == "":
				v.add(p, "empty resource id")
			case created && k == i:
				v.add(p, "step %q consumes %q, which it creates itself", st.ID, id)
			case created:
				if anc == nil {
					anc = ancestors(i, deps)
				}
				if !anc[k] {
					v.add(p, "%q is created by step %q, which step %q does not depend on (add %q to its dependsOn)", id, c.Steps[k].ID, st.ID, c.Steps[k].ID)
				}
			case !declared:
				known := append(mapKeys(creator), mapKeys(resources)...)
				v.add(p, "no step creates %q and no resource declares it as an input%s", id, suggest(id, known))
			}
		}
	}

	// Validators.
	for i, val := range c.Validators {
		p := "validators[" + strconv.Itoa(i) + "]"
		switch {
		case val.Type == "":
			v.add(p+".type", "required")
		case val.Type == "exists" || val.Type == "schema_match":
		case isBuiltin(val.Type):
			v.add(p+".type", "%q is a check type; a resource validator is exists, schema_match or a registered validator", val.Type)
		case !KnownCheck(val.Type):
			v.add(p+".type", "unknown validator type %q%s", val.Type, suggest(val.Type, append(registered(), "exists", "schema_match")))
		}
		for j, rt := range val.ResourceTypes {
			if rt != "*" && !slices.Contains(resourceTypes, ResourceType(rt)) {
				v.add(fmt.Sprintf("%s.resourceTypes[%d]", p, j), "unknown resource type %q (one of: %s, or * for all)", rt, resourceTypeList)
			}
		}
	}
}

var resourceTypes = []ResourceType{ResourceFile, ResourceData, ResourceMessage, ResourceArtifact}

const resourceTypeList = "file, data, message, artifact"

func (v *validation) assertion(p string, a *ContractAssertion) {
	switch {
	case a.Type == "":
		v.add(p+".type", "required (assert or suggest)")
	case a.Type != Assert && a.Type != Suggest:
		v.add(p+".type", "unknown assertion type %q (assert or suggest)", a.Type)
	}
	if strings.TrimSpace(a.Message) == "" {
		v.add(p+".message", "required: it says what the assertion means and is the feedback an agent gets on a retry")
	}
	switch t := a.Check.Type; {
	case t == "":
		v.add(p+".check.type", "required (one of: %s, or a registered validator's name)", strings.Join(builtinTypes(), ", "))
	case !KnownCheck(t):
		v.add(p+".check.type", "unknown check type %q%s", t, suggest(t, CheckTypes()))
	}
}

// cycles reports each cycle of the dependsOn graph once, naming its steps
// in dependency order: "steps: dependsOn cycle a → b → a" when a depends
// on b and b on a.
func (v *validation) cycles(c *AgentContract, deps [][]int) {
	const (
		unvisited = iota
		onStack
		done
	)
	state := make([]int, len(deps))
	var stack []int
	var visit func(i int)
	visit = func(i int) {
		state[i] = onStack
		stack = append(stack, i)
		for _, k := range deps[i] {
			switch state[k] {
			case unvisited:
				visit(k)
			case onStack:
				at := slices.Index(stack, k)
				names := make([]string, 0, len(stack)-at+1)
				for _, s := range stack[at:] {
					names = append(names, c.Steps[s].ID)
				}
				names = append(names, c.Steps[k].ID)
				v.add("steps", "dependsOn cycle %s", strings.Join(names, " → "))
			}
		}
		stack = stack[:len(stack)-1]
		state[i] = done
	}
	for i := range deps {
		if state[i] == unvisited {
			visit(i)
		}
	}
}

// ancestors returns every step i depends on, directly or transitively.
func ancestors(i int, deps [][]int) map[int]bool {
	seen := map[int]bool{}
	todo := slices.Clone(deps[i])
	for len(todo) > 0 {
		k := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[k] {
			continue
		}
		seen[k] = true
		todo = append(todo, deps[k]...)
	}
	return seen
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = strconv.Quote(x)
	}
	return strings.Join(q, ", ")
}

// builtinTypes returns the built-in check types, sorted.
func builtinTypes() []string {
	out := make([]string, 0, len(builtins))
	for t := range builtins {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// isBuiltin reports whether typ is a built-in check type.
func isBuiltin(typ string) bool {
	_, ok := builtins[typ]
	return ok
}

// registered returns the registered validators' names.
func registered() []string {
	var out []string
	for _, t := range CheckTypes() {
		if !isBuiltin(t) {
			out = append(out, t)
		}
	}
	return out
}
