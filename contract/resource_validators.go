package contract

import (
	"context"
	"fmt"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compiledValidator is one of the contract's validators, compiled: bind
// makes its check for one resource (nil when it has nothing to check on
// that resource).
type compiledValidator struct {
	v    *ResourceValidator
	bind func(r *compiledResource) CheckFunc
}

// compileValidators compiles the contract's validators. exists checks the
// resource is there and not empty (a file: that it exists under the
// working directory); schema_match checks the resource against
// config.schema when given, else against the resource's own schema (a
// resource with neither is not checked); any other type is a registered
// validator, called with the check {type: NAME, target: "resource:ID",
// config}.
func compileValidators(vs []ResourceValidator) ([]compiledValidator, Errors) {
	var out []compiledValidator
	var errs Errors
	for i := range vs {
		v := &vs[i]
		at := func(field string) string { return fmt.Sprintf("validators[%d].%s", i, field) }
		switch v.Type {
		case "exists":
			out = append(out, compiledValidator{v: v, bind: func(r *compiledResource) CheckFunc {
				t := resourceTarget(r.def.ID)
				return func(_ context.Context, in *Input) Verdict {
					val, bad := t.get(in)
					if bad != nil {
						return *bad
					}
					return existsVerdict(t, val, in)
				}
			}})
		case "schema_match":
			var own *jsonschema.Schema
			if raw, ok := v.Config["schema"]; ok {
				m, ok := raw.(map[string]any)
				if !ok {
					errs = append(errs, FieldError{Path: at("config.schema"), Msg: "must be an object (a JSON Schema)"})
					continue
				}
				sch, err := compileSchema(m)
				if err != nil {
					errs = append(errs, FieldError{Path: at("config.schema"), Msg: err.Error()})
					continue
				}
				own = sch
			}
			out = append(out, compiledValidator{v: v, bind: func(r *compiledResource) CheckFunc {
				sch := own
				if sch == nil {
					sch = r.schema
				}
				if sch == nil {
					return nil
				}
				t := resourceTarget(r.def.ID)
				return func(_ context.Context, in *Input) Verdict {
					_, doc, bad := t.getJSON(in)
					if bad != nil {
						return *bad
					}
					return schemaVerdict(sch, doc, "")
				}
			}})
		case "":
			errs = append(errs, FieldError{Path: at("type"), Msg: "required"})
		default:
			validatorsMu.RLock()
			fn, ok := validators[v.Type]
			validatorsMu.RUnlock()
			if !ok {
				if _, builtin := builtins[v.Type]; builtin {
					errs = append(errs, FieldError{Path: at("type"), Msg: fmt.Sprintf("%q is a check type; a resource validator is exists, schema_match or a registered validator", v.Type)})
				} else {
					errs = append(errs, FieldError{Path: at("type"), Msg: fmt.Sprintf("unknown validator %q (exists, schema_match or one of the registered: %v)", v.Type, registeredValidators())})
				}
				continue
			}
			out = append(out, compiledValidator{v: v, bind: func(r *compiledResource) CheckFunc {
				c := &Check{Type: v.Type, Target: "resource:" + r.def.ID, Config: v.Config}
				return func(ctx context.Context, in *Input) Verdict { return fn(ctx, c, in) }
			}})
		}
	}
	return out, errs
}

// registeredValidators returns the names of the registered validators.
func registeredValidators() []string {
	validatorsMu.RLock()
	defer validatorsMu.RUnlock()
	out := make([]string, 0, len(validators))
	for n := range validators {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// resourceTarget is the target "resource:ID" (built, not parsed, so that
// an id may hold any character).
func resourceTarget(id string) target {
	return target{kind: targetResource, name: id, base: "resource:" + id}
}

// appliesTo reports whether the validator covers resources of type t: its
// ResourceTypes hold t or "*", or are empty.
func (v *ResourceValidator) appliesTo(t ResourceType) bool {
	return len(v.ResourceTypes) == 0 || slices.Contains(v.ResourceTypes, "*") || slices.Contains(v.ResourceTypes, string(t))
}

// bindValidators binds the validators that cover r's type to r.
func bindValidators(vs []compiledValidator, r *compiledResource) []boundValidator {
	var out []boundValidator
	for _, cv := range vs {
		if !cv.v.appliesTo(r.def.Type) {
			continue
		}
		if fn := cv.bind(r); fn != nil {
			out = append(out, boundValidator{name: cv.v.Type, resource: r.def.ID, check: fn})
		}
	}
	return out
}

// run applies the validator and says what it found as a result.
func (b boundValidator) run(ctx context.Context, in *Input) ValidationResult {
	v := b.check(ctx, in)
	return ValidationResult{
		Check: "validator:" + b.name, Target: "resource:" + b.resource, Type: Assert,
		Message: fmt.Sprintf("resource %s passes validator %s", b.resource, b.name),
		Passed:  v.Passed, Reason: v.Reason, Path: v.Path,
	}
}
