package toolspec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/pactum/pactum/internal/yamlnode"
)

// Registry is the adapter contracts ToolSpecs are checked against, by
// adapter_id. It is immutable once built: a changed catalogue makes a
// new Registry, and Set.Replace re-checks what the change affects.
type Registry struct {
	adapters map[string]*entry
	ids      []string
}

type entry struct {
	contract AdapterContract
	version  *semver.Version
	source   string
}

// NewRegistry builds a registry from catalogues. Every contract must be
// valid (as ParseCatalogue checks: adapter_id, semver version, status,
// operations with compilable schemas), and one adapter_id may be defined
// only once across all catalogues: a second definition is an error that
// names both sources. Nil catalogues are skipped. The error is a
// ParseErrors whose File is each catalogue's Source.
func NewRegistry(cats ...*Catalogue) (*Registry, error) {
	r := &Registry{adapters: map[string]*entry{}}
	var errs ParseErrors
	for ci, c := range cats {
		if c == nil {
			continue
		}
		src := c.Source
		if src == "" {
			src = fmt.Sprintf("catalogue %d", ci+1)
		}
		if fe := validateCatalogue(c); len(fe) > 0 {
			for _, e := range fe {
				errs = append(errs, ParseError{File: src, Path: e.path, Msg: e.msg})
			}
			continue
		}
		for i, a := range c.Adapters {
			if prev, dup := r.adapters[a.AdapterID]; dup {
				errs = append(errs, ParseError{File: src, Path: yamlnode.Join(yamlnode.Index("adapters", i), "adapter_id"),
					Msg: fmt.Sprintf("adapter %q is defined both in %s and in %s; keep one", a.AdapterID, prev.source, src)})
				continue
			}
			v, _ := ParseVersion(a.Version) // validated above
			r.adapters[a.AdapterID] = &entry{contract: a, version: v, source: src}
			r.ids = append(r.ids, a.AdapterID)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	slices.Sort(r.ids)
	return r, nil
}

// Lookup returns the contract of adapter id. The contract shares its
// maps with the registry: read it, do not change it.
func (r *Registry) Lookup(id string) (AdapterContract, bool) {
	if r == nil {
		return AdapterContract{}, false
	}
	e, ok := r.adapters[id]
	if !ok {
		return AdapterContract{}, false
	}
	return e.contract, true
}

// Source returns the name of the catalogue that defines adapter id.
func (r *Registry) Source(id string) string {
	if e, ok := r.adapters[id]; ok {
		return e.source
	}
	return ""
}

// AdapterIDs returns the ids of the registry's adapters, sorted.
func (r *Registry) AdapterIDs() []string {
	if r == nil {
		return nil
	}
	return slices.Clone(r.ids)
}

// Check checks a ToolSpec against the registry by assertions 1 to 4 of
// the seed, in its order, and returns every violation (nil when the
// mapping holds):
//
//  1. a remote ToolSpec has an adapter_id matching ^[a-z0-9-]+$; a local
//     one has none;
//  2. the adapter exists in the registry;
//  3. adapter_operation is one of the adapter's operations;
//  4. the MAJOR of adapter_contract_version (1.0.0 when empty, as the
//     seed's `toolspec.adapter_contract_version || "1.0.0"`) equals the
//     contract's, and the operation still exists in the current version;
//     the ToolSpec's input_schema compiles and asks for no input the
//     operation does not accept (see checkSignature).
//
// An operation missing from a contract whose MAJOR is above the
// ToolSpec's is reported as removed in that version (assertion 4, the
// seed's example), otherwise as not in the interface (assertion 3).
// Checks that depend on an earlier one (the adapter for the operation)
// are skipped when it fails.
func (r *Registry) Check(ts ToolSpec) []Violation {
	var vs []Violation
	add := func(a Assertion, field, fix, format string, args ...any) {
		vs = append(vs, Violation{Assertion: a, ToolID: ts.ToolID, AdapterID: ts.AdapterID,
			Field: field, Msg: fmt.Sprintf(format, args...), Fix: fix})
	}
	ids := r.AdapterIDs()
	// Assertion 1.
	switch ts.ExecutionMode {
	case Local:
		if ts.AdapterID != "" {
			add(AdapterIDRequired, "adapter_id", "remove adapter_id, or set execution_mode: remote if the tool calls "+ts.AdapterID,
				"LOCAL tools MUST NOT specify adapter_id (local tools have no adapters); got %q", ts.AdapterID)
		}
		return vs
	case Remote:
		if ts.AdapterID == "" {
			add(AdapterIDRequired, "adapter_id", "add adapter_id naming the adapter the tool calls ("+strings.Join(ids, ", ")+"), or set execution_mode: local",
				"REMOTE tools MUST specify adapter_id")
			return vs
		}
		if !adapterIDPattern.MatchString(ts.AdapterID) {
			add(AdapterIDRequired, "adapter_id", "use lower-case letters, digits and hyphens only",
				"adapter_id %q must match pattern ^[a-z0-9-]+$", ts.AdapterID)
			return vs
		}
	default:
		add(AdapterIDRequired, "execution_mode", "set execution_mode: remote (with adapter_id) or local (without)",
			"execution_mode %q is neither remote nor local, so whether adapter_id is required cannot be decided", ts.ExecutionMode)
		return vs
	}
	// Assertion 2.
	e, ok := r.entry(ts.AdapterID)
	if !ok {
		add(AdapterExists, "adapter_id", "use an adapter of the registry ("+strings.Join(ids, ", ")+")"+suggest(ts.AdapterID, ids)+", or add a catalogue that defines "+ts.AdapterID,
			"adapter %q does not exist", ts.AdapterID)
		return vs
	}
	c := e.contract
	ops := sortedKeys(c.Operations)
	// Assertion 4, the version.
	cv := ts.AdapterContractVersion
	if cv == "" {
		cv = DefaultContractVersion
	}
	tv, err := ParseVersion(cv)
	if err != nil {
		add(VersionCompatible, "adapter_contract_version", "write the contract version as MAJOR.MINOR.PATCH (adapter "+c.AdapterID+" is at "+c.Version+")",
			"%v", err)
	} else if tv.Major() != e.version.Major() {
		add(VersionCompatible, "adapter_contract_version",
			fmt.Sprintf("review the mapping against adapter %s v%s and set adapter_contract_version: %s", c.AdapterID, c.Version, c.Version),
			"contract version mismatch: adapter v%s != ToolSpec v%s", c.Version, cv)
	}
	// Assertion 3, or 4 for an operation a later MAJOR removed.
	op, ok := c.Operations[ts.AdapterOperation]
	switch {
	case ok:
	case ts.AdapterOperation == "":
		add(OperationExists, "adapter_operation", "set adapter_operation to one of: "+strings.Join(ops, ", "),
			"adapter_operation is required for a remote tool")
		return vs
	case tv != nil && tv.Major() < e.version.Major():
		add(VersionCompatible, "adapter_operation",
			fmt.Sprintf("map the tool to an operation of v%s (%s) and set adapter_contract_version: %s", c.Version, strings.Join(ops, ", "), c.Version),
			"operation %q removed in adapter %s v%s", ts.AdapterOperation, c.AdapterID, c.Version)
		return vs
	default:
		add(OperationExists, "adapter_operation", "use one of: "+strings.Join(ops, ", ")+suggest(ts.AdapterOperation, ops),
			"invalid operation %q for adapter %q (v%s)", ts.AdapterOperation, c.AdapterID, c.Version)
		return vs
	}
	// Assertion 4, the signature.
	what := fmt.Sprintf("operation %s of adapter %s v%s", ts.AdapterOperation, c.AdapterID, c.Version)
	for _, p := range checkSignature(ts.InputSchema, op.InputSchema, what) {
		add(VersionCompatible, p.path, p.fix, "%s", p.msg)
	}
	return vs
}

func (r *Registry) entry(id string) (*entry, bool) {
	if r == nil {
		return nil, false
	}
	e, ok := r.adapters[id]
	return e, ok
}

func suggest(name string, known []string) string { return yamlnode.SuggestName(name, known) }

// signatureProblem is one way a ToolSpec's input schema does not fit its
// operation's.
type signatureProblem struct{ path, msg, fix string }

// checkSignature compares a ToolSpec's input schema with its operation's,
// simply: the ToolSpec's schema must compile; every input it requires
// must be one the operation accepts (a property of the operation's input
// schema, unless that schema allows additional properties explicitly);
// and a property both declare must not allow a type the operation's
// refuses (integer fits number). A ToolSpec with no input schema, or an
// operation with none, is not compared.
func checkSignature(tool, op map[string]any, what string) []signatureProblem {
	if tool == nil {
		return nil
	}
	if _, err := compileSchema(tool); err != nil {
		return []signatureProblem{{"input_schema", fmt.Sprintf("not a valid JSON Schema: %v", err), "fix the ToolSpec's input_schema"}}
	}
	if op == nil {
		return nil
	}
	opProps, declared := op["properties"].(map[string]any)
	if !declared {
		return nil
	}
	var out []signatureProblem
	extra, hasExtra := op["additionalProperties"]
	open := hasExtra && extra != false
	if req, ok := tool["required"].([]any); ok && !open {
		known := sortedKeys(opProps)
		for i, x := range req {
			name, ok := x.(string)
			if !ok {
				continue
			}
			if _, ok := opProps[name]; !ok {
				out = append(out, signatureProblem{
					path: yamlnode.Index("input_schema.required", i),
					msg:  fmt.Sprintf("requires input %q, which %s does not accept (its inputs: %s)", name, what, strings.Join(known, ", ")),
					fix:  fmt.Sprintf("remove %q from the ToolSpec's input_schema, or map the tool to an operation that takes it", name) + suggest(name, known),
				})
			}
		}
	}
	toolProps, _ := tool["properties"].(map[string]any)
	for _, name := range sortedKeys(toolProps) {
		tp, _ := toolProps[name].(map[string]any)
		opp, _ := opProps[name].(map[string]any)
		if tp == nil || opp == nil {
			continue
		}
		tt, ot := types(tp["type"]), types(opp["type"])
		if tt == nil || ot == nil {
			continue
		}
		for _, t := range tt {
			if slices.Contains(ot, t) || (t == "integer" && slices.Contains(ot, "number")) {
				continue
			}
			out = append(out, signatureProblem{
				path: yamlnode.Join(yamlnode.Join("input_schema.properties", name), "type"),
				msg:  fmt.Sprintf("input %q may be of type %s, which %s does not accept (it takes %s)", name, t, what, strings.Join(ot, " or ")),
				fix:  fmt.Sprintf("narrow the type of %q to %s", name, strings.Join(ot, " or ")),
			})
			break
		}
	}
	return out
}

// types returns a schema's "type" as a list, or nil when it has none.
func types(t any) []string {
	switch t := t.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
