package workflow

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Custom is the name of the workflow whose agents the caller supplies
// (CustomWorkflow); no configured workflow may take it.
const Custom = "custom"

// ErrUnknownWorkflow is wrapped by Lookup's error for a name no workflow
// has.
var ErrUnknownWorkflow = errors.New("unknown workflow")

// RunAgent returns the name of the agent a workflow's runs are served as:
// "workflow." + name (its A2A card is at /agents/workflow.NAME/…). The dot
// keeps it apart from every configured agent, whose names may hold dots
// too but would then clash visibly in the config check.
func RunAgent(name string) string { return "workflow." + name }

// builtins are the built-in workflows, as the seed maps them: one agent
// per phase.
var builtins = []struct {
	name, description string
	agents            []string
}{
	{"feature", "Plan a feature, review the code, then review its security", []string{"planner", "code-reviewer", "security-reviewer"}},
	{"bugfix", "Explore the bug's cause, then review the fix", []string{"explorer", "code-reviewer"}},
	{"refactor", "Design the refactoring, then review the code", []string{"architect", "code-reviewer"}},
	{"security", "Review security, then the code, then the design", []string{"security-reviewer", "code-reviewer", "architect"}},
}

// Builtins returns the built-in workflows (feature, bugfix, refactor,
// security), new values on each call so callers may keep or change them.
func Builtins() []*Workflow {
	out := make([]*Workflow, 0, len(builtins))
	for _, b := range builtins {
		w := &Workflow{Name: b.name, Description: b.description, Builtin: true}
		for _, a := range b.agents {
			w.Phases = append(w.Phases, Phase{Agents: []string{a}})
		}
		out = append(out, w)
	}
	return out
}

// CustomWorkflow returns the custom workflow that runs agents one after
// the other, in order. It refuses an empty list, an empty or invalid name
// and an agent named twice.
func CustomWorkflow(agents []string) (*Workflow, error) {
	if len(agents) == 0 {
		return nil, errors.New("custom workflow: no agents given; name them in order, e.g. planner,code-reviewer")
	}
	w := &Workflow{Name: Custom, Description: "The agents given, in order"}
	seen := map[string]int{}
	for i, a := range agents {
		if a == "" {
			return nil, fmt.Errorf("custom workflow: agent %d: empty name", i+1)
		}
		if !namePattern.MatchString(a) {
			return nil, fmt.Errorf("custom workflow: agent %d: invalid name %q: use letters, digits, '.', '_' and '-' (at most 64, starting with a letter or digit)", i+1, a)
		}
		if j, dup := seen[a]; dup {
			return nil, fmt.Errorf("custom workflow: agent %q given twice (%d and %d); an agent may run once in a workflow", a, j+1, i+1)
		}
		seen[a] = i
		w.Phases = append(w.Phases, Phase{Agents: []string{a}})
	}
	return w, nil
}

// Check reports the problems of w as a workflow to run: no phases, an
// empty phase, an empty name, an agent named twice, and, when known is
// not nil, each agent known does not accept (agents neither configured
// nor defined). The errors name the agents; placing them in a file is the
// caller's part.
func (w *Workflow) Check(known func(agent string) bool) []error {
	var errs []error
	if len(w.Phases) == 0 {
		errs = append(errs, fmt.Errorf("workflow %q has no steps", w.Name))
	}
	seen := map[string]bool{}
	for i, p := range w.Phases {
		if len(p.Agents) == 0 {
			errs = append(errs, fmt.Errorf("workflow %q: step %d: empty phase", w.Name, i+1))
		}
		for _, a := range p.Agents {
			switch {
			case a == "":
				errs = append(errs, fmt.Errorf("workflow %q: step %d: empty agent name", w.Name, i+1))
			case seen[a]:
				errs = append(errs, fmt.Errorf("workflow %q: agent %q appears more than once", w.Name, a))
			case known != nil && !known(a):
				errs = append(errs, fmt.Errorf("workflow %q: step %d: unknown agent %q", w.Name, i+1, a))
			}
			seen[a] = true
		}
	}
	return errs
}

// Registry holds the workflows a node runs: the built-in ones and the
// configured ones, by name. It is read-only after NewRegistry.
type Registry struct {
	byName map[string]*Workflow
}

// NewRegistry returns the registry of the built-in workflows and
// configured. A configured workflow named like a built-in one replaces
// it. A configured workflow named Custom, or with no name, or two with
// the same name, are errors (joined).
func NewRegistry(configured []*Workflow) (*Registry, error) {
	r := &Registry{byName: map[string]*Workflow{}}
	for _, w := range Builtins() {
		r.byName[w.Name] = w
	}
	var errs []error
	seen := map[string]*Workflow{}
	for _, w := range configured {
		switch {
		case w == nil || w.Name == "":
			errs = append(errs, errors.New("workflow without a name"))
			continue
		case w.Name == Custom:
			errs = append(errs, fmt.Errorf("workflow %q%s: the name is reserved for the caller-supplied list of agents", w.Name, at(w)))
			continue
		}
		if prev, dup := seen[w.Name]; dup {
			errs = append(errs, fmt.Errorf("duplicate workflow %q%s (first defined%s)", w.Name, at(w), at(prev)))
			continue
		}
		seen[w.Name] = w
		r.byName[w.Name] = w
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return r, nil
}

// at places a configured workflow for messages (" at FILE:LINE"), or "".
func at(w *Workflow) string {
	switch {
	case w.File != "" && w.Line > 0:
		return fmt.Sprintf(" at %s:%d", w.File, w.Line)
	case w.Line > 0:
		return fmt.Sprintf(" at line %d", w.Line)
	}
	return ""
}

// Lookup returns the workflow named name. An unknown name is an error
// wrapping ErrUnknownWorkflow that lists the known names (and custom) and
// the close ones. Custom is not in the registry: build it with
// CustomWorkflow.
func (r *Registry) Lookup(name string) (*Workflow, error) {
	if w, ok := r.byName[name]; ok {
		return w, nil
	}
	names := r.names()
	if name == Custom {
		return nil, fmt.Errorf("%w %q: the custom workflow takes its agents from the caller (CustomWorkflow)", ErrUnknownWorkflow, name)
	}
	q := make([]string, 0, len(names)+1)
	for _, n := range append(names, Custom) {
		q = append(q, strconv.Quote(n))
	}
	return nil, fmt.Errorf("%w %q (workflows: %s)%s", ErrUnknownWorkflow, name, strings.Join(q, ", "), closeNames(name, append(names, Custom)))
}

// List returns the workflows sorted by name (custom is not among them).
func (r *Registry) List() []*Workflow {
	out := make([]*Workflow, 0, len(r.byName))
	for _, n := range r.names() {
		out = append(out, r.byName[n])
	}
	return out
}

func (r *Registry) names() []string {
	names := make([]string, 0, len(r.byName))
	for n := range r.byName {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
