package contract

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pactum/pactum/task"
)

// The fuzz targets feed each check arbitrary agent output: a check may
// fail, never panic, and says the same thing twice.

func mustCompile(tb testing.TB, c Check) CheckFunc {
	tb.Helper()
	fn, err := compileCheck(&c)
	if err != nil {
		tb.Fatal(err)
	}
	return fn
}

func verdictTwice(t *testing.T, fn CheckFunc, in *Input) Verdict {
	t.Helper()
	v1 := fn(context.Background(), in)
	v2 := fn(context.Background(), in.withMemo())
	if v1 != v2 {
		t.Fatalf("verdicts differ: %+v then %+v", v1, v2)
	}
	if !v1.Passed && v1.Reason == "" {
		t.Fatalf("failed without a reason: %+v", v1)
	}
	return v1
}

func FuzzSections(f *testing.F) {
	for _, s := range []string{
		handoffMD,
		"## Summary\n\n## Risks\nNone\n",
		"Summary\n===\ntext\n\nRisks\n---\n- a\n",
		"# *Summary* `x`\n> quoted\n## Risks\n```\n# not a heading\n```\n",
		"## Summary\n<!-- c -->\n# Risks\n\n[ref]: http://x\n",
		"#\n##\n###### Risks ######\n\t code\n",
		"## [Summary](#s) &amp; \\*Risks\\*\nbody\n",
		"- # Summary\n  text\n",
		"",
	} {
		f.Add(s)
	}
	fn := mustCompile(f, Check{Type: "sections", Sections: []string{"Summary", "Risks"}})
	f.Fuzz(func(t *testing.T, md string) {
		v := verdictTwice(t, fn, &Input{Result: textResult(md)})
		if v.Passed {
			lower := strings.ToLower(md)
			if !strings.Contains(lower, "summary") && !strings.Contains(lower, "&") {
				t.Fatalf("passed without a Summary heading: %q", md)
			}
		}
	})
}

func FuzzSchemaMatch(f *testing.F) {
	for _, s := range []string{
		reportJSON, `{"summary":"x","items":[]}`, `{"summary":1}`, `[]`, `null`, `"x"`, `{`, `{"items":[{"status":"lost"}]}`,
		`{"summary":"x","items":[{"status":"done","name":"a"}],"count":1e400}`, "\ufeff{}", `{"a":1}{"b":2}`,
	} {
		f.Add(s)
	}
	schema := map[string]any{
		"type": "object", "required": []any{"summary", "items"},
		"properties": map[string]any{
			"summary": map[string]any{"type": "string", "minLength": 1, "pattern": "^[A-Z]"},
			"items": map[string]any{"type": "array", "maxItems": 5, "items": map[string]any{
				"type": "object", "required": []any{"status"},
				"properties": map[string]any{"status": map[string]any{"enum": []any{"done", "open"}}, "name": map[string]any{"format": "hostname"}},
			}},
			"count": map[string]any{"type": "integer", "multipleOf": 0.5},
		},
		"additionalProperties": map[string]any{"type": "string"},
	}
	fn := mustCompile(f, Check{Type: "schema_match", Schema: schema})
	f.Fuzz(func(t *testing.T, out string) {
		v := verdictTwice(t, fn, &Input{Result: textResult(out)})
		if v.Passed && !json.Valid([]byte(out)) {
			t.Fatalf("passed on output that is not JSON: %q", out)
		}
	})
}

func FuzzJSONPointerTarget(f *testing.F) {
	for _, s := range [][2]string{
		{reportJSON, "/items/0/status"}, {`{"a/b":{"m~n":[1]}}`, "/a~1b/m~0n/0"}, {`[1,2]`, "/-"}, {`[1,2]`, "/01"},
		{`{"":1}`, "/"}, {`{}`, ""}, {`x`, "/a"}, {`{"a":1}`, "a"}, {`{"a":1}`, "/a~"}, {`[[[]]]`, "/0/0/0/0"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, doc, ptr string) {
		tg, err := parseTarget("output#" + ptr)
		if err != nil {
			return
		}
		in := &Input{Result: textResult(doc)}
		v, err := tg.resolve(in)
		if err != nil {
			return
		}
		if !json.Valid([]byte(doc)) {
			t.Fatalf("resolved a pointer in output that is not JSON: %q", doc)
		}
		if _, err := json.Marshal(v.jsonVal); err != nil {
			t.Fatalf("value at %q does not encode: %v", ptr, err)
		}
		for _, typ := range []string{"exists", "equals"} {
			c := Check{Type: typ, Target: "output#" + ptr, Value: "x"}
			verdictTwice(t, mustCompile(t, c), in)
		}
	})
}

func FuzzCEL(f *testing.F) {
	for _, s := range [][2]string{
		{`data.count == 3`, reportJSON},
		{`output.contains("x")`, "x"},
		{`data.items.all(i, i.status == "done")`, reportJSON},
		{`data.items.exists(i, i.name.startsWith("u"))`, `{"items":[{"name":1}]}`},
		{`size(data) > 0`, `[]`},
		{`data == null || data.a.b.c > 1.5`, `not json`},
		{`artifacts[0].text.matches("^[a-z]+$")`, "abc"},
		{`resources.plan.data.tables.size() == 1 && task.attempt == 0`, `{}`},
		{`data.x / 0 == 1`, `{"x":1}`},
		{`int(data.x) > 0`, `{"x":1e300}`},
		{`data`, `true`},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, expr, out string) {
		fn, err := compileCheck(&Check{Type: "cel", Expression: expr})
		if err != nil {
			return
		}
		in := &Input{Result: textResult(out), Resources: map[string]Resource{
			"plan": {ContractResource: ContractResource{ID: "plan", Type: ResourceData}, Data: map[string]any{"tables": []any{"users"}}},
		}}
		verdictTwice(t, fn, in)
	})
}

func FuzzJSONPath(f *testing.F) {
	for _, s := range [][2]string{
		{"$.items[*].status", reportJSON},
		{"$..name", reportJSON},
		{"$.items[?@.status == 'open'].name", reportJSON},
		{"$[-1:0:-1]", `[1,2,3]`},
		{"$[?length(@) > 1]", `["a","bb"]`},
		{"$[?match(@, '[a-z]+')]", `["a","B"]`},
		{"$.a", `{"a":`},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, path, doc string) {
		in := &Input{Result: textResult(doc)}
		for _, c := range []Check{
			{Type: "jsonpath", Path: path},
			{Type: "jsonpath", Path: path, Count: intp(2)},
			{Type: "jsonpath", Path: path, Value: "done"},
			{Type: "jsonpath", Path: path, Value: 3, Count: intp(1)},
		} {
			fn, err := compileCheck(&c)
			if err != nil {
				return
			}
			verdictTwice(t, fn, in)
		}
	})
}

// FuzzPostGate runs the benchmark's ten mixed checks over an arbitrary
// report, handoff and status message.
func FuzzPostGate(f *testing.F) {
	f.Add(reportJSON, handoffMD, "done", "text/markdown")
	f.Add(`{"summary":"Migrated 3 tables"}`, "## Summary\n", "", "")
	f.Add("", "", "TODO", "text/*; q=1")
	st := benchStep(f)
	f.Fuzz(func(t *testing.T, report, handoff, msg, mediaType string) {
		res := &task.Result{
			Artifacts: []task.Artifact{
				{ID: "a1", Name: "report", Parts: []task.Part{task.TextPart(report)}},
				{ID: "a2", Name: "handoff", Parts: []task.Part{{Kind: task.PartText, Text: handoff, MediaType: mediaType}}},
				{ID: "a3", Name: "stats", Parts: []task.Part{task.DataPart(json.RawMessage(report))}},
			},
			Message: &task.Message{Parts: []task.Part{task.TextPart(msg)}},
		}
		g := st.PostGate(context.Background(), &Input{Result: res})
		if len(g.Results) != 10 {
			t.Fatalf("%d results", len(g.Results))
		}
		for _, r := range g.Results {
			if !r.Passed && r.Reason == "" {
				t.Fatalf("failed without a reason: %+v", r)
			}
		}
	})
}

func FuzzMediaType(f *testing.F) {
	for _, s := range [][2]string{
		{"text/*", "text/plain; charset=utf-8"}, {"application/json", "APPLICATION/JSON"}, {"*/*", ""},
		{"text/plain", ";"}, {"image/png", "image/png;;"}, {"a/b; c=\"d\"", "a/b"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, want, got string) {
		fn, err := compileCheck(&Check{Type: "media_type", MediaType: want})
		if err != nil {
			return
		}
		in := &Input{Result: &task.Result{Artifacts: []task.Artifact{{Parts: []task.Part{{Kind: task.PartText, Text: "x", MediaType: got}}}}}}
		v := verdictTwice(t, fn, in)
		if v.Passed && !strings.Contains(want, "*") && got != "" {
			base, _, _ := strings.Cut(got, ";")
			if !strings.EqualFold(strings.TrimSpace(base), want) && !strings.HasPrefix(strings.ToLower(want), strings.ToLower(strings.TrimSpace(base))) {
				t.Fatalf("%q passed for want %q", got, want)
			}
		}
	})
}

// TestCELLimits: an expression that would run long is stopped by its cost
// limit, and by the gate's context.
func TestCELLimits(t *testing.T) {
	t.Parallel()
	items := make([]any, 300)
	for i := range items {
		items[i] = float64(i)
	}
	b, _ := json.Marshal(items)
	in := &Input{Result: textResult(string(b))}
	// 300 × 300 iterations cost more than 10,000 (the real limit, 10⁶,
	// takes a minute to reach under the race detector).
	fn, err := compileCELLimit(&Check{Type: "cel", Expression: `data.all(x, data.all(y, x + y >= 0.0))`}, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	v := fn(context.Background(), in)
	if v.Passed || v.Reason != `expression "data.all(x, data.all(y, x + y >= 0.0))" failed: operation cancelled: actual cost limit exceeded` {
		t.Errorf("verdict %+v", v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fn = mustCompile(t, Check{Type: "cel", Expression: `data.all(x, x >= 0.0)`})
	v = fn(ctx, in)
	if v.Passed || !strings.Contains(v.Reason, "operation interrupted") {
		t.Errorf("canceled: verdict %+v", v)
	}
}
