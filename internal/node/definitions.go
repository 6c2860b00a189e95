package node

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/exec"
	"github.com/pactum/pactum/agent/openai"
	"github.com/pactum/pactum/agent/webhook"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/yamlnode"
	"github.com/pactum/pactum/workflow"
)

// This file serves agent definitions (the definitions section) as
// agents and checks what the definitions and workflows sections need
// files for: names that clash, runtimes that are missing, workflow steps
// that name no agent. Check and New report these problems alike.

// definitionSet is what the definitions section gave: the definitions
// loaded (nil without the section or when they did not load) and the
// agents built from them.
type definitionSet struct {
	defs *workflow.Definitions
	// failed is true when the files did not load: workflow steps are then
	// not checked against the definitions, which would only repeat the
	// load errors.
	failed bool
	built  []builtAgent
}

// loadDefinitions reads the definition directories and builds an agent
// for each definition on its runtime, returning what it built with every
// problem found, placed: load errors at their file and line (a
// duplicate name, which names both files, at definitions.dirs), a
// definition named like an agent under agents: or without a runtime at
// the definition, a runtime entry's unknown type at its type key. err is
// set only when ctx ends. The caller closes what was built.
func loadDefinitions(ctx context.Context, cfg *config.Config, baseDir string) (set definitionSet, errs config.Errors, err error) {
	if cfg.Definitions == nil {
		return set, nil, nil
	}
	known := agent.Types()
	for _, name := range cfg.RuntimeNames() {
		rt, _, _ := cfg.DefinitionRuntime(name)
		if !slices.Contains(known, rt.Agent.Type) {
			errs = append(errs, cfg.AgentTypeError(rt.Agent, known))
		}
	}
	defs, lerr := workflow.Load(cfg.DefinitionDirs(baseDir)...)
	if lerr != nil {
		set.failed = true
		return set, append(errs, definitionLoadErrors(cfg, lerr)...), nil
	}
	set.defs = defs
	for _, d := range defs.List() {
		if err := ctx.Err(); err != nil {
			return set, errs, fmt.Errorf("build definitions: %w", err)
		}
		if a, ok := cfg.Agent(d.Name); ok {
			errs = append(errs, definitionError(d, fmt.Sprintf("definition %q has the name of the agent at %s:%d (agents:); rename one of them", d.Name, cfg.File(), a.Line), nil))
			continue
		}
		rt, rtName, ok := cfg.DefinitionRuntime(d.Runtime)
		if !ok {
			errs = append(errs, definitionError(d, noRuntime(cfg, d, rtName), nil))
			continue
		}
		if !slices.Contains(known, rt.Agent.Type) {
			continue // reported at the runtime entry
		}
		ac := cfg.DefinitionAgent(rt, d.Name, d.Description)
		a, err := agent.New(ctx, agent.Spec(definitionSpec(cfg, ac, d, baseDir)))
		if err != nil {
			errs = append(errs, definitionError(d, fmt.Sprintf("on runtime %q: %s", rtName, oneLine(err)), err))
			continue
		}
		set.built = append(set.built, builtAgent{config: ac, agent: a})
	}
	return set, errs, nil
}

// noRuntime says why definition d has no runtime.
func noRuntime(cfg *config.Config, d *workflow.Definition, name string) string {
	names := cfg.RuntimeNames()
	switch {
	case name != "":
		what := "runtime"
		if d.Runtime == "" {
			what = "definitions.runtime"
		}
		return fmt.Sprintf("%s %q names no entry of definitions.runtimes (runtimes: %s)", what, name, quote(names))
	case len(names) == 0:
		return "no runtime to run it: definitions.runtimes is empty"
	}
	return fmt.Sprintf("no runtime to run it: name one in its front matter (runtime:) or set definitions.runtime (runtimes: %s)", quote(names))
}

// definitionSpec is the RuntimeSpec of the agent ac that serves
// definition d: the runtime entry's settings and the definition's role.
// For type openai the role body is the system prompt (unless the entry
// sets one) and its model alias is resolved through the entry's models;
// types exec and webhook get the whole role (their templates' .System,
// .Tools and .Model; a webhook's default body too). Other runtime types
// get the entry's settings only.
func definitionSpec(cfg *config.Config, ac config.Agent, d *workflow.Definition, baseDir string) config.RuntimeSpec {
	spec := cfg.AgentSpec(ac, baseDir)
	switch ac.Type {
	case openai.Type, exec.Type, webhook.Type:
	default:
		return spec
	}
	decode := spec.Decode
	spec.Decode = func(v any) error {
		if decode != nil {
			if err := decode(v); err != nil {
				return err
			}
		}
		role := &agent.Role{System: d.Body, Tools: slices.Clone(d.Tools), Model: d.Model}
		switch s := v.(type) {
		case *exec.Settings:
			s.Role = role
		case *webhook.Settings:
			s.Role = role
		case *openai.Settings:
			if s.System == "" {
				s.System = d.Body
			}
			// Resolve the alias as the runtime does (Runtime.ResolveModel);
			// an entry that does not build is reported when the agent is
			// built.
			if rt, err := openai.New(*s); err == nil {
				s.Model = rt.ResolveModel(d.Model)
				_ = rt.Close()
			}
		}
		return nil
	}
	return spec
}

// definitionLoadErrors turns workflow.Load's error into config errors:
// a definition file's own errors at their file and line, the rest (a
// duplicate name, naming both files; a directory that cannot be read) at
// definitions.dirs.
func definitionLoadErrors(cfg *config.Config, err error) config.Errors {
	// Load joins its problems, and ParseDefinition those of one file.
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out config.Errors
		for _, e := range j.Unwrap() {
			out = append(out, definitionLoadErrors(cfg, e)...)
		}
		return out
	}
	var de *workflow.Error
	if errors.As(err, &de) {
		return config.Errors{{File: de.File, Line: de.Line, Msg: de.Msg, Err: err}}
	}
	return config.Errors{cfg.DefinitionsError(err.Error(), err)}
}

// definitionError places msg at definition d's name in its file.
func definitionError(d *workflow.Definition, msg string, err error) *config.Error {
	return &config.Error{File: d.File, Line: d.Line, Msg: msg, Err: err}
}

// oneLine joins the lines of err's message.
func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

// quote renders names for messages: "a", "b" ("none" when empty).
func quote(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// knownAgent reports whether name is an agent a workflow step may name:
// an agent under agents: or a definition. It returns nil when the
// definitions did not load, so that steps are not checked against a
// partial list.
func (set definitionSet) knownAgent(cfg *config.Config) func(string) bool {
	if set.failed {
		return nil
	}
	return func(name string) bool {
		if _, ok := cfg.Agent(name); ok {
			return true
		}
		if set.defs == nil {
			return false
		}
		_, err := set.defs.Resolve(name)
		return err == nil
	}
}

// stepAgentNames are the names a workflow step may use, sorted: for
// did-you-mean suggestions.
func (set definitionSet) stepAgentNames(cfg *config.Config) []string {
	var out []string
	for _, a := range cfg.Agents {
		out = append(out, a.Name)
	}
	for _, d := range set.defs.List() {
		out = append(out, d.Name)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// workflowRegistry returns the registry of the built-in workflows and
// cfg's configured ones, with an error at the step for each step agent
// that known does not accept (nil known: steps are not checked). Built-in
// workflows whose agents are not all known are listed all the same: the
// code that runs a workflow refuses them then, naming the missing agents
// (workflow.Workflow.Check).
func workflowRegistry(cfg *config.Config, known func(string) bool, names []string) (*workflow.Registry, config.Errors) {
	var errs config.Errors
	var configured []*workflow.Workflow
	for i, cw := range cfg.Workflows {
		wf := &workflow.Workflow{Name: cw.Name, Description: cw.Description, File: cfg.File(), Line: cw.Line}
		for j, st := range cw.Steps {
			wf.Phases = append(wf.Phases, workflow.Phase{Agents: slices.Clone(st.Agents)})
			if known == nil {
				continue
			}
			for k, a := range st.Agents {
				if a != "" && !known(a) {
					msg := fmt.Sprintf("unknown agent %q: neither an agent under agents: nor a definition%s", a, closeNames(a, names))
					errs = append(errs, cfg.WorkflowStepError(i, j, k, msg, nil))
				}
			}
		}
		configured = append(configured, wf)
	}
	reg, err := workflow.NewRegistry(configured)
	if err != nil {
		// Parse refuses what NewRegistry does (custom, duplicates); this
		// is reached only for a Config built in code.
		errs = append(errs, &config.Error{File: cfg.File(), Path: "workflows", Msg: oneLine(err), Err: err})
		reg, _ = workflow.NewRegistry(nil)
	}
	return reg, errs
}

// closeNames lists the names in known close to name, as
// ` (did you mean "a" or "b"?)`, or "" when none is.
func closeNames(name string, known []string) string {
	return yamlnode.Suggester{Fold: strings.ToLower, MaxLen: 64}.SuggestAll(name, known)
}

// checkDefinitions loads the definitions, builds their agents and checks
// the workflows: what Check and New share. The caller closes set.built.
func checkDefinitions(ctx context.Context, cfg *config.Config, baseDir string) (set definitionSet, reg *workflow.Registry, errs config.Errors, err error) {
	set, errs, err = loadDefinitions(ctx, cfg, baseDir)
	if err != nil {
		return set, nil, errs, err
	}
	known := set.knownAgent(cfg)
	reg, werrs := workflowRegistry(cfg, known, set.stepAgentNames(cfg))
	errs = append(errs, werrs...)
	if known != nil {
		if e := cfg.UnknownDefaultAgent(known); e != nil {
			errs = append(errs, e)
		}
	}
	return set, reg, errs, nil
}

// Workflows reads what `pactum agents` lists beyond cfg's agents: the
// agent definitions (nil without a definitions section) and the
// registry of built-in and configured workflows. It builds no runtime;
// known reports whether a workflow's agent is an agent under agents: or
// a definition. A definition that does not load is an error (placed as
// Check places it).
func Workflows(cfg *config.Config, baseDir string) (defs *workflow.Definitions, reg *workflow.Registry, known func(string) bool, err error) {
	set := definitionSet{}
	if cfg.Definitions != nil {
		d, lerr := workflow.Load(cfg.DefinitionDirs(baseDir)...)
		if lerr != nil {
			return nil, nil, nil, definitionLoadErrors(cfg, lerr).Err()
		}
		set.defs = d
	}
	known = set.knownAgent(cfg)
	reg, errs := workflowRegistry(cfg, nil, nil)
	return set.defs, reg, known, errs.Err()
}
