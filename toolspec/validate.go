package toolspec

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/Masterminds/semver/v3"
	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/internal/yamlnode"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// adapterIDPattern is the seed's pattern for adapter ids (assertion 1).
var adapterIDPattern = regexp.MustCompile(`^[a-z0-9-]+$`)

// DefaultContractVersion is the adapter_contract_version of a ToolSpec
// that names none: the seed's `toolspec.adapter_contract_version ||
// "1.0.0"`.
const DefaultContractVersion = "1.0.0"

// ParseVersion parses a semantic version as the seed writes them:
// MAJOR.MINOR.PATCH, with optional pre-release and build metadata, and
// no "v" prefix or missing parts.
func ParseVersion(s string) (*semver.Version, error) {
	v, err := semver.StrictNewVersion(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not a semantic version MAJOR.MINOR.PATCH: %w", s, err)
	}
	return v, nil
}

// validateCatalogue checks every contract of c and that no adapter_id is
// given twice.
func validateCatalogue(c *Catalogue) []fieldError {
	var fe []fieldError
	seen := map[string]int{}
	for i := range c.Adapters {
		p := yamlnode.Index("adapters", i)
		fe = append(fe, validateContract(p, &c.Adapters[i])...)
		id := c.Adapters[i].AdapterID
		if id == "" {
			continue
		}
		if j, dup := seen[id]; dup {
			fe = append(fe, fieldError{yamlnode.Join(p, "adapter_id"),
				fmt.Sprintf("adapter %q is defined twice (first at adapters[%d])", id, j)})
			continue
		}
		seen[id] = i
	}
	return fe
}

// validateContract checks one adapter contract at path p.
func validateContract(p string, a *AdapterContract) []fieldError {
	var fe []fieldError
	add := func(field, format string, args ...any) {
		fe = append(fe, fieldError{yamlnode.Join(p, field), fmt.Sprintf(format, args...)})
	}
	switch {
	case a.AdapterID == "":
		add("adapter_id", "required: the adapter's id, matching ^[a-z0-9-]+$")
	case !adapterIDPattern.MatchString(a.AdapterID):
		add("adapter_id", "%q does not match ^[a-z0-9-]+$", a.AdapterID)
	}
	if a.Version == "" {
		add("version", "required: the contract's semantic version (e.g. 1.0.0)")
	} else if _, err := ParseVersion(a.Version); err != nil {
		add("version", "%v", err)
	}
	switch a.Status {
	case Frozen, Draft:
	case "":
		add("status", "required: frozen or draft")
	default:
		add("status", "%q is not a status: frozen or draft", a.Status)
	}
	if len(a.Operations) == 0 {
		add("operations", "required: at least one operation")
	}
	for _, name := range sortedKeys(a.Operations) {
		op := a.Operations[name]
		opPath := yamlnode.Join(yamlnode.Join(p, "operations"), name)
		if name == "" {
			fe = append(fe, fieldError{opPath, "an operation needs a name"})
		}
		for _, s := range []struct {
			field  string
			schema map[string]any
		}{{"input_schema", op.InputSchema}, {"output_schema", op.OutputSchema}} {
			if s.schema == nil {
				continue
			}
			if _, err := compileSchema(s.schema); err != nil {
				fe = append(fe, fieldError{yamlnode.Join(opPath, s.field), fmt.Sprintf("not a valid JSON Schema: %v", err)})
			}
		}
	}
	return fe
}

// validateToolSpec checks what a ToolSpec file must hold whatever the
// registry: a tool_id, an execution_mode, a well-formed version and
// schemas that compile. The assertions are Registry.Check's.
func validateToolSpec(p string, ts ToolSpec) []fieldError {
	var fe []fieldError
	add := func(field, format string, args ...any) {
		fe = append(fe, fieldError{yamlnode.Join(p, field), fmt.Sprintf(format, args...)})
	}
	if ts.ToolID == "" {
		add("tool_id", "required: the tool's id")
	}
	switch ts.ExecutionMode {
	case Local, Remote:
	case "":
		add("execution_mode", "required: local or remote")
	default:
		add("execution_mode", "%q is not an execution mode: local or remote", ts.ExecutionMode)
	}
	if ts.AdapterContractVersion != "" {
		if _, err := ParseVersion(ts.AdapterContractVersion); err != nil {
			add("adapter_contract_version", "%v", err)
		}
	}
	for _, s := range []struct {
		field  string
		schema map[string]any
	}{{"input_schema", ts.InputSchema}, {"output_schema", ts.OutputSchema}} {
		if s.schema == nil {
			continue
		}
		if _, err := compileSchema(s.schema); err != nil {
			add(s.field, "not a valid JSON Schema: %v", err)
		}
	}
	return fe
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// compileSchema compiles a JSON Schema (draft 2020-12 unless $schema
// says otherwise) that refers only to itself, as contract's are.
func compileSchema(s map[string]any) (*jsonschema.Schema, error) {
	return contract.CompileSchema(s, "a schema")
}
