package contract

import (
	"context"
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
)

// celCostLimit bounds one evaluation of a cel check (in CEL's cost units,
// roughly one per operation and per element a comprehension visits), so a
// contract cannot make a gate loop for long over a large output.
const celCostLimit = 1_000_000

// celEnv is the environment every cel check is compiled in: the variables
// a check sees, the standard library and the strings extension.
var celEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable("output", cel.StringType),
		cel.Variable("data", cel.DynType),
		cel.Variable("artifacts", cel.ListType(cel.MapType(cel.StringType, cel.DynType))),
		cel.Variable("resources", cel.MapType(cel.StringType, cel.MapType(cel.StringType, cel.DynType))),
		cel.Variable("task", cel.MapType(cel.StringType, cel.DynType)),
		cel.CrossTypeNumericComparisons(true),
		ext.Strings(),
	)
})

// compileCEL compiles a cel check. The expression's type must be bool;
// an expression whose type is only known when it runs (dyn: data.ok) is
// accepted, and fails the verdict when it yields anything but a bool.
func compileCEL(c *Check) (CheckFunc, error) { return compileCELLimit(c, celCostLimit) }

func compileCELLimit(c *Check, costLimit uint64) (CheckFunc, error) {
	if c.Target != "" && c.Target != "output" {
		return nil, badParam("target", "a cel expression sees output, data, artifacts, resources and task and takes no target")
	}
	if c.Expression == "" {
		return nil, badParam("expression", "required")
	}
	env, err := celEnv()
	if err != nil {
		return nil, fmt.Errorf("cel environment: %w", err)
	}
	ast, iss := env.Compile(c.Expression)
	if iss.Err() != nil {
		return nil, &paramError{field: "expression", err: iss.Err()}
	}
	if t := ast.OutputType(); !t.IsExactType(cel.BoolType) && !t.IsExactType(cel.DynType) {
		return nil, badParam("expression", "has type %s, want bool", t)
	}
	prg, err := env.Program(ast, cel.EvalOptions(cel.OptOptimize), cel.CostLimit(costLimit), cel.InterruptCheckFrequency(100))
	if err != nil {
		return nil, &paramError{field: "expression", err: err}
	}
	expr := c.Expression
	return func(ctx context.Context, in *Input) Verdict {
		out, _, err := prg.ContextEval(ctx, celVars(in))
		if err != nil {
			return fail("expression %s failed: %v", excerpt(expr), err)
		}
		b, ok := out.Value().(bool)
		if !ok {
			return fail("expression %s returned %v (%s), not a bool", excerpt(expr), out.Value(), out.Type().TypeName())
		}
		if !b {
			return fail("expression %s is false", excerpt(expr))
		}
		return pass
	}, nil
}

// celVars are a cel check's variables, each built only when the
// expression reads it.
func celVars(in *Input) map[string]any {
	return map[string]any{
		"output": func() any {
			if in.Result == nil {
				return ""
			}
			v, err := target{kind: targetOutput, base: "output"}.resolve(in)
			if err != nil {
				return ""
			}
			return v.text
		},
		"data": func() any {
			v, err := target{kind: targetOutput, base: "output"}.resolve(in)
			if err != nil {
				return nil
			}
			x, err := v.JSON()
			if err != nil {
				return nil
			}
			return x
		},
		"artifacts": func() any {
			if in.Result == nil {
				return []any{}
			}
			out := make([]any, 0, len(in.Result.Artifacts))
			for _, a := range in.Result.Artifacts {
				v := partsValue(a.Parts)
				v.label = fmt.Sprintf("artifact %q", cmpOr(a.Name, a.ID))
				var data any
				if v.data != nil {
					data, _ = v.JSON()
				}
				out = append(out, map[string]any{"id": a.ID, "name": a.Name, "text": v.text, "data": data})
			}
			return out
		},
		"resources": func() any {
			out := make(map[string]any, len(in.Resources))
			for id, r := range in.Resources {
				var data any
				if r.Data != nil {
					data, _ = normalizeJSON(r.Data)
				}
				out[id] = map[string]any{"text": r.Text, "data": data, "type": string(r.Type), "location": r.Location}
			}
			return out
		},
		"task": func() any {
			t := in.Task
			if t == nil {
				return map[string]any{"id": "", "agent": "", "attempt": int64(0), "state": "", "input": ""}
			}
			return map[string]any{
				"id": t.ID, "agent": t.Agent, "attempt": int64(t.Attempt),
				"state": string(t.State), "input": t.Envelope.Input.Text(),
			}
		},
	}
}
