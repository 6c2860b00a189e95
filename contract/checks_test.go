package contract

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
)

// report is a realistic agent answer: a JSON report as text in one
// artifact, a markdown handoff in another, a status message.
const reportJSON = `{"summary":"Migrated 3 tables","items":[{"name":"users","status":"done"},{"name":"orders","status":"done"},{"name":"audit","status":"open"}],"count":3,"tags":["db","migration"]}`

const handoffMD = `# Handoff

## Summary
Moved the users, orders and audit tables to the new schema.

## Changes
- users: new column ` + "`email_verified`" + `
- orders: index on created_at

## Risks
None

## Open questions

### Later
the audit table still has the old trigger
`

func textResult(s string) *task.Result {
	return &task.Result{Artifacts: []task.Artifact{{ID: "a1", Parts: []task.Part{task.TextPart(s)}}}}
}

func reportResult() *task.Result {
	return &task.Result{
		Artifacts: []task.Artifact{
			{ID: "a1", Name: "report", Parts: []task.Part{task.TextPart(reportJSON)}},
			{ID: "a2", Name: "handoff", Parts: []task.Part{{Kind: task.PartText, Text: handoffMD, MediaType: "text/markdown"}}},
			{ID: "a3", Name: "stats", Parts: []task.Part{task.DataPart(json.RawMessage(`{"rows":1200,"ok":true}`))}},
		},
		Message: &task.Message{Role: task.RoleAgent, Parts: []task.Part{task.TextPart("done")}},
	}
}

func intp(i int) *int { return &i }

type checkCase struct {
	name   string
	check  Check
	in     *Input
	pass   bool
	reason string // the exact reason when it fails
	path   string
}

func runCheckCases(t *testing.T, cases []checkCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fn, err := compileCheck(&tc.check)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			in := tc.in
			if in == nil {
				in = &Input{Result: reportResult()}
			}
			v := fn(context.Background(), in)
			if v.Passed != tc.pass {
				t.Fatalf("passed = %v, want %v (reason %q)", v.Passed, tc.pass, v.Reason)
			}
			if !tc.pass && v.Reason != tc.reason {
				t.Errorf("reason\n got %q\nwant %q", v.Reason, tc.reason)
			}
			if tc.pass && v.Reason != "" {
				t.Errorf("a passed verdict has reason %q", v.Reason)
			}
			if v.Path != tc.path {
				t.Errorf("path = %q, want %q", v.Path, tc.path)
			}
		})
	}
}

func TestSchemaMatch(t *testing.T) {
	t.Parallel()
	schema := map[string]any{
		"type":     "object",
		"required": []any{"summary", "items"},
		"properties": map[string]any{
			"summary": map[string]any{"type": "string", "minLength": 1},
			"items": map[string]any{"type": "array", "items": map[string]any{
				"type": "object", "required": []any{"status"},
				"properties": map[string]any{"status": map[string]any{"enum": []any{"done", "open"}}},
			}},
			"count": map[string]any{"type": "integer"},
		},
	}
	runCheckCases(t, []checkCase{
		{name: "pass on artifact text", check: Check{Type: "schema_match", Target: "artifact:report", Schema: schema}, pass: true},
		{name: "pass on data part", check: Check{Type: "schema_match", Target: "artifact:stats", Schema: map[string]any{"required": []any{"rows"}}}, pass: true},
		{name: "pass on output text", check: Check{Type: "schema_match", Schema: schema},
			in: &Input{Result: textResult(reportJSON)}, pass: true},
		{name: "missing property", check: Check{Type: "schema_match", Schema: schema},
			in:     &Input{Result: textResult(`{"summary":"x"}`)},
			reason: `at "": missing property 'items'`},
		{name: "nested instance path", check: Check{Type: "schema_match", Schema: schema},
			in:     &Input{Result: textResult(`{"summary":"x","items":[{"status":"done"},{"status":"lost"}]}`)},
			reason: `at "/items/1/status": value must be one of 'done', 'open'`, path: "/items/1/status"},
		{name: "several errors", check: Check{Type: "schema_match", Schema: schema},
			in:     &Input{Result: textResult(`{"summary":"","items":[{}],"count":1.5}`)},
			reason: `at "/count": got number, want integer; at "/items/0": missing property 'status'; at "/summary": minLength: got 0, want 1`, path: "/count"},
		{name: "pointer target prefixes the path", check: Check{Type: "schema_match", Target: "artifact:report#/items", Schema: map[string]any{"items": map[string]any{"properties": map[string]any{"status": map[string]any{"const": "done"}}}}},
			reason: `at "/2/status": value must be 'done'`, path: "/items/2/status"},
		{name: "output not JSON", check: Check{Type: "schema_match", Schema: schema},
			in:     &Input{Result: textResult("Here is the report: {...}")},
			reason: "output is not JSON: invalid character 'H' looking for beginning of value"},
		{name: "no output", check: Check{Type: "schema_match", Schema: schema},
			in: &Input{}, reason: "there is no output (the step has not run)"},
	})
}

func TestExists(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "spec.md"), []byte("# Spec\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	res := map[string]Resource{
		"spec":    {ContractResource: ContractResource{ID: "spec", Type: ResourceFile, Location: "spec.md"}},
		"gone":    {ContractResource: ContractResource{ID: "gone", Type: ResourceFile, Location: "gone.md"}},
		"escape":  {ContractResource: ContractResource{ID: "escape", Type: ResourceFile, Location: "../x"}},
		"link":    {ContractResource: ContractResource{ID: "link", Type: ResourceFile, Location: "link"}},
		"plan":    {ContractResource: ContractResource{ID: "plan", Type: ResourceData}, Data: map[string]any{"steps": []any{1.0}}},
		"blank":   {ContractResource: ContractResource{ID: "blank", Type: ResourceMessage}, Text: "  \n"},
		"emptyob": {ContractResource: ContractResource{ID: "emptyob", Type: ResourceData}, Data: map[string]any{}},
	}
	in := &Input{Result: reportResult(), WorkDir: dir, Resources: res}
	runCheckCases(t, []checkCase{
		{name: "output", check: Check{Type: "exists"}, in: in, pass: true},
		{name: "artifact by name", check: Check{Type: "exists", Target: "artifact:handoff"}, in: in, pass: true},
		{name: "artifact by id", check: Check{Type: "exists", Target: "artifact:a3"}, in: in, pass: true},
		{name: "data", check: Check{Type: "exists", Target: "data"}, in: in, pass: true},
		{name: "pointer", check: Check{Type: "exists", Target: "artifact:report#/summary"}, in: in, pass: true},
		{name: "file resource", check: Check{Type: "exists", Target: "resource:spec"}, in: in, pass: true},
		{name: "data resource", check: Check{Type: "exists", Target: "resource:plan"}, in: in, pass: true},
		{name: "artifact missing", check: Check{Type: "exists", Target: "artifact:summary"}, in: in,
			reason: `artifact "summary" not found (artifacts: report, handoff, stats)`},
		{name: "no artifacts", check: Check{Type: "exists", Target: "artifact:summary"}, in: &Input{Result: &task.Result{}},
			reason: `artifact "summary" not found (no artifacts)`},
		{name: "empty output", check: Check{Type: "exists"}, in: &Input{Result: textResult("   ")},
			reason: "output is empty"},
		{name: "no data part", check: Check{Type: "exists", Target: "data"}, in: &Input{Result: textResult("hi")},
			reason: "the output has no data part"},
		{name: "pointer absent", check: Check{Type: "exists", Target: "artifact:report#/author"}, in: in,
			reason: `artifact "report" has no value at "/author"`, path: "/author"},
		{name: "pointer empty", check: Check{Type: "exists", Target: "artifact:report#/summary"},
			in:     &Input{Result: &task.Result{Artifacts: []task.Artifact{{Name: "report", Parts: []task.Part{task.TextPart(`{"summary":""}`)}}}}},
			reason: `artifact:report#/summary is empty`, path: "/summary"},
		{name: "file missing", check: Check{Type: "exists", Target: "resource:gone"}, in: in,
			reason: `resource "gone": file "gone.md" does not exist under the working directory`},
		{name: "file escaping", check: Check{Type: "exists", Target: "resource:escape"}, in: in,
			reason: `resource "escape": file "../x" is outside the working directory`},
		{name: "symlink escaping", check: Check{Type: "exists", Target: "resource:link"}, in: in,
			reason: `resource "link": file "link" leads outside the working directory (through a symbolic link)`},
		{name: "no work dir", check: Check{Type: "exists", Target: "resource:spec"}, in: &Input{Resources: res},
			reason: `resource "spec": no working directory to look for files in`},
		{name: "resource not available", check: Check{Type: "exists", Target: "resource:other"}, in: in,
			reason: `resource "other" not available (resources: blank, emptyob, escape, gone, link, plan, spec)`},
		{name: "no resources", check: Check{Type: "exists", Target: "resource:other"}, in: &Input{},
			reason: `resource "other" not available (no resources)`},
		{name: "blank message resource", check: Check{Type: "exists", Target: "resource:blank"}, in: in,
			reason: `resource "blank" is empty`},
		{name: "empty data resource", check: Check{Type: "exists", Target: "resource:emptyob"}, in: in,
			reason: `resource "emptyob" is empty`},
	})
}

func TestRegexContainsNotContains(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 60)
	runCheckCases(t, []checkCase{
		{name: "regex pass", check: Check{Type: "regex", Pattern: `(?m)^## Risks$`, Target: "artifact:handoff"}, pass: true},
		{name: "regex on pointer", check: Check{Type: "regex", Pattern: `^Migrated \d+ tables$`, Target: "artifact:report#/summary"}, pass: true},
		{name: "regex on number at pointer", check: Check{Type: "regex", Pattern: `^3$`, Target: "artifact:report#/count"}, pass: true},
		{name: "regex fail", check: Check{Type: "regex", Pattern: `^\d+$`, Target: "artifact:report#/summary"},
			reason: `artifact:report#/summary does not match /^\d+$/: "Migrated 3 tables"`, path: "/summary"},
		{name: "regex fail long text", check: Check{Type: "regex", Pattern: `x`}, in: &Input{Result: textResult(long)},
			reason: `output does not match /x/: "` + strings.Repeat("é", 40) + `"… (120 bytes)`},
		{name: "contains pass", check: Check{Type: "contains", Value: "orders", Target: "artifact:handoff"}, pass: true},
		{name: "contains on output joins artifacts and message", check: Check{Type: "contains", Value: "## Risks\nNone"}, pass: true},
		{name: "contains on data target", check: Check{Type: "contains", Value: `"rows":1200`, Target: "data"}, pass: true},
		{name: "contains fail", check: Check{Type: "contains", Value: "rollback plan", Target: "artifact:handoff"},
			reason: `artifact "handoff" does not contain "rollback plan"`},
		{name: "not_contains pass", check: Check{Type: "not_contains", Value: "TODO"}, pass: true},
		{name: "not_contains fail", check: Check{Type: "not_contains", Value: "trigger", Target: "artifact:handoff"},
			reason: `artifact "handoff" contains "trigger" (line 16)`},
		{name: "absent target", check: Check{Type: "contains", Value: "x", Target: "artifact:log"},
			reason: `artifact "log" not found (artifacts: report, handoff, stats)`},
	})
}

func TestEquals(t *testing.T) {
	t.Parallel()
	runCheckCases(t, []checkCase{
		{name: "string with output", check: Check{Type: "equals", Value: "ok"}, in: &Input{Result: textResult("ok\n")}, pass: true},
		{name: "string at pointer", check: Check{Type: "equals", Value: "Migrated 3 tables", Target: "artifact:report#/summary"}, pass: true},
		{name: "number at pointer", check: Check{Type: "equals", Value: 3, Target: "artifact:report#/count"}, pass: true},
		{name: "object", check: Check{Type: "equals", Value: map[string]any{"ok": true, "rows": 1200}, Target: "artifact:stats"}, pass: true},
		{name: "array", check: Check{Type: "equals", Value: []any{"db", "migration"}, Target: "artifact:report#/tags"}, pass: true},
		{name: "bool on data", check: Check{Type: "equals", Value: true, Target: "data#/ok"}, pass: true},
		{name: "string fail", check: Check{Type: "equals", Value: "ok"}, in: &Input{Result: textResult("not ok")},
			reason: `output is "not ok", want "ok"`},
		{name: "number fail", check: Check{Type: "equals", Value: 4, Target: "artifact:report#/count"},
			reason: `artifact:report#/count is 3, want 4`, path: "/count"},
		{name: "type differs", check: Check{Type: "equals", Value: []any{"db"}, Target: "artifact:report#/tags"},
			reason: `artifact:report#/tags is ["db","migration"], want ["db"]`, path: "/tags"},
		{name: "json wanted but text", check: Check{Type: "equals", Value: 1}, in: &Input{Result: textResult("one")},
			reason: "output is not JSON: invalid character 'o' looking for beginning of value"},
	})
}

func TestJSONPath(t *testing.T) {
	t.Parallel()
	runCheckCases(t, []checkCase{
		{name: "selects something", check: Check{Type: "jsonpath", Path: "$.items[?@.status == 'open']", Target: "artifact:report"}, pass: true},
		{name: "count", check: Check{Type: "jsonpath", Path: "$.items[*]", Count: intp(3), Target: "artifact:report"}, pass: true},
		{name: "count zero", check: Check{Type: "jsonpath", Path: "$.items[?@.status == 'lost']", Count: intp(0), Target: "artifact:report"}, pass: true},
		{name: "value", check: Check{Type: "jsonpath", Path: "$.count", Value: 3, Target: "artifact:report"}, pass: true},
		{name: "value and count", check: Check{Type: "jsonpath", Path: "$.items[*].status", Value: "done", Count: intp(2), Target: "artifact:report"}, pass: true},
		{name: "on data part", check: Check{Type: "jsonpath", Path: "$.rows", Value: 1200, Target: "data"}, pass: true},
		{name: "selects nothing", check: Check{Type: "jsonpath", Path: "$.author", Target: "artifact:report"},
			reason: `$.author selects nothing in artifact "report"`},
		{name: "count differs", check: Check{Type: "jsonpath", Path: "$.items[*]", Count: intp(2), Target: "artifact:report"},
			reason: `$.items[*] selects 3 nodes in artifact "report", want 2`},
		{name: "value differs", check: Check{Type: "jsonpath", Path: "$.count", Value: 4, Target: "artifact:report"},
			reason: `$.count is 3 in artifact "report", want 4`},
		{name: "value but several nodes", check: Check{Type: "jsonpath", Path: "$.items[*].status", Value: "done", Target: "artifact:report"},
			reason: `$.items[*].status selects 3 nodes in artifact "report", want exactly 1 equal to "done"`},
		{name: "value and count differ", check: Check{Type: "jsonpath", Path: "$.items[*].status", Value: "done", Count: intp(3), Target: "artifact:report"},
			reason: `$.items[*].status: 2 of the 3 nodes it selects in artifact "report" equal "done", want 3`},
		{name: "not JSON", check: Check{Type: "jsonpath", Path: "$.a", Target: "artifact:handoff"},
			reason: `artifact "handoff" is not JSON: invalid character '#' looking for beginning of value`},
	})
}

func TestCEL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := &Input{
		Task: &task.Task{ID: "t1", Agent: "migrate", Attempt: 2, State: task.StateInProgress,
			Envelope: task.Envelope{Input: task.Message{Parts: []task.Part{task.TextPart("migrate the db")}}}},
		Result:  textResult(reportJSON),
		WorkDir: dir,
		Resources: map[string]Resource{
			"plan": {ContractResource: ContractResource{ID: "plan", Type: ResourceData}, Data: map[string]any{"tables": 3}},
		},
	}
	rich := &Input{Result: reportResult()}
	runCheckCases(t, []checkCase{
		{name: "data", check: Check{Type: "cel", Expression: `data.count == 3 && size(data.items) == 3`}, in: in, pass: true},
		{name: "output", check: Check{Type: "cel", Expression: `output.contains("Migrated")`}, in: in, pass: true},
		{name: "all", check: Check{Type: "cel", Expression: `data.items.all(i, i.status in ["done", "open"])`}, in: in, pass: true},
		{name: "resources", check: Check{Type: "cel", Expression: `resources.plan.data.tables == data.count && resources.plan.type == "data"`}, in: in, pass: true},
		{name: "task", check: Check{Type: "cel", Expression: `task.agent == "migrate" && task.attempt == 2 && task.input.startsWith("migrate") && task.state == "in_progress"`}, in: in, pass: true},
		{name: "artifacts", check: Check{Type: "cel", Expression: `artifacts.exists(a, a.name == "stats" && a.data.rows > 1000) && artifacts[0].text.startsWith("{")`}, in: rich, pass: true},
		{name: "dyn bool", check: Check{Type: "cel", Expression: `data.ok`}, in: &Input{Result: textResult(`{"ok":true}`)}, pass: true},
		{name: "null data", check: Check{Type: "cel", Expression: `data == null`}, in: &Input{Result: textResult("plain text")}, pass: true},
		{name: "no result", check: Check{Type: "cel", Expression: `output == "" && data == null && size(artifacts) == 0 && task.id == ""`}, in: &Input{}, pass: true},
		{name: "false", check: Check{Type: "cel", Expression: `data.count > 5`}, in: in,
			reason: `expression "data.count > 5" is false`},
		{name: "eval error", check: Check{Type: "cel", Expression: `data.missing == 1`}, in: in,
			reason: `expression "data.missing == 1" failed: no such key: missing`},
		{name: "dyn not bool", check: Check{Type: "cel", Expression: `data.count`}, in: in,
			reason: `expression "data.count" returned 3 (double), not a bool`},
	})
}

func TestSections(t *testing.T) {
	t.Parallel()
	handoff := Check{Type: "sections", Target: "artifact:handoff", Sections: []string{"Summary", "changes", " Risks ", "Open questions"}}
	runCheckCases(t, []checkCase{
		{name: "pass", check: handoff, pass: true},
		{name: "setext and emphasis", check: Check{Type: "sections", Sections: []string{"Summary", "Next steps"}},
			in: &Input{Result: textResult("Summary\n=======\n\nall good\n\n## *Next* `steps`\n\n1. ship\n")}, pass: true},
		{name: "duplicate heading, one filled", check: Check{Type: "sections", Sections: []string{"Notes"}},
			in: &Input{Result: textResult("## Notes\n\n## Notes\nsomething\n")}, pass: true},
		{name: "missing", check: Check{Type: "sections", Sections: []string{"Summary", "Tests"}, Target: "artifact:handoff"},
			reason: `artifact "handoff": missing section "Tests" (headings: Handoff, Summary, Changes, Risks, Open questions, Later)`},
		{name: "empty body", check: Check{Type: "sections", Sections: []string{"Summary", "Risks"}},
			in:     &Input{Result: textResult("## Summary\n\n## Risks\nNone\n")},
			reason: `output: section "Summary" is empty (write None when there is nothing to say) (headings: Summary, Risks)`},
		{name: "body up to a same-level heading only", check: Check{Type: "sections", Sections: []string{"A"}},
			in:     &Input{Result: textResult("## A\n<!-- nothing yet -->\n# B\ntext\n")},
			reason: `output: section "A" is empty (write None when there is nothing to say) (headings: A, B)`},
		{name: "heading in a code block is no heading", check: Check{Type: "sections", Sections: []string{"Risks"}},
			in:     &Input{Result: textResult("```\n## Risks\nnone\n```\n")},
			reason: `output: missing section "Risks" (no headings)`},
		{name: "several problems", check: Check{Type: "sections", Sections: []string{"Summary", "Risks", "Tests"}},
			in:     &Input{Result: textResult("# Summary\n")},
			reason: `output: section "Summary" is empty (write None when there is nothing to say); missing section "Risks"; missing section "Tests" (headings: Summary)`},
	})
}

func TestMaxDuration(t *testing.T) {
	t.Parallel()
	runCheckCases(t, []checkCase{
		{name: "within", check: Check{Type: "max_duration", Max: "2s"}, in: &Input{Duration: 1500 * time.Millisecond}, pass: true},
		{name: "equal", check: Check{Type: "max_duration", Max: "2s"}, in: &Input{Duration: 2 * time.Second}, pass: true},
		{name: "pre-gate", check: Check{Type: "max_duration", Max: "1ms"}, in: &Input{}, pass: true},
		{name: "over", check: Check{Type: "max_duration", Max: "1s"}, in: &Input{Duration: 1234567 * time.Microsecond},
			reason: "the step took 1.235s, more than the 1s allowed"},
	})
}

func TestMediaType(t *testing.T) {
	t.Parallel()
	in := &Input{Result: reportResult(), Resources: map[string]Resource{
		"spec": {ContractResource: ContractResource{ID: "spec", Type: ResourceFile}, Text: "# x", MediaType: "text/markdown"},
		"plan": {ContractResource: ContractResource{ID: "plan", Type: ResourceData}, Data: map[string]any{}},
	}}
	runCheckCases(t, []checkCase{
		{name: "text part", check: Check{Type: "media_type", MediaType: "text/plain", Target: "artifact:report"}, in: in, pass: true},
		{name: "part says markdown", check: Check{Type: "media_type", MediaType: "text/markdown", Target: "artifact:handoff"}, in: in, pass: true},
		{name: "wildcard over output", check: Check{Type: "media_type", MediaType: "text/*"},
			in: &Input{Result: &task.Result{Artifacts: []task.Artifact{{Parts: []task.Part{task.TextPart("a"), {Kind: task.PartText, Text: "b", MediaType: "text/csv; charset=utf-8"}}}}}}, pass: true},
		{name: "data part", check: Check{Type: "media_type", MediaType: "application/json", Target: "data"}, in: in, pass: true},
		{name: "any", check: Check{Type: "media_type", MediaType: "*/*"}, in: in, pass: true},
		{name: "resource", check: Check{Type: "media_type", MediaType: "TEXT/Markdown", Target: "resource:spec"}, in: in, pass: true},
		{name: "data resource", check: Check{Type: "media_type", MediaType: "application/json", Target: "resource:plan"}, in: in, pass: true},
		{name: "mixed output", check: Check{Type: "media_type", MediaType: "text/*"}, in: in,
			reason: "output: part 2 is application/json, want text/*"},
		{name: "wrong", check: Check{Type: "media_type", MediaType: "application/json", Target: "artifact:report"}, in: in,
			reason: `artifact "report": part 0 is text/plain, want application/json`},
		{name: "file part", check: Check{Type: "media_type", MediaType: "image/*"},
			in:     &Input{Result: &task.Result{Artifacts: []task.Artifact{{Parts: []task.Part{{Kind: task.PartRaw, Raw: []byte{1}}}}}}},
			reason: "output: part 0 is application/octet-stream, want image/*"},
		{name: "no parts", check: Check{Type: "media_type", MediaType: "text/plain"}, in: &Input{Result: &task.Result{}},
			reason: "output has no parts"},
		{name: "resource wrong", check: Check{Type: "media_type", MediaType: "application/json", Target: "resource:spec"}, in: in,
			reason: `resource "spec" is text/markdown, want application/json`},
	})
}

// TestMalformedChecks: every bad parameter is a compile error naming the
// field.
func TestMalformedChecks(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		check Check
		want  string
	}{
		{"unknown type", Check{Type: "telepathy"}, `unknown check type "telepathy"`},
		{"bad target", Check{Type: "exists", Target: "stdout"}, `target: unknown target "stdout" (want output, data, artifact:NAME or resource:ID, optionally followed by #/json/pointer)`},
		{"artifact without name", Check{Type: "exists", Target: "artifact:"}, `target: "artifact:" needs an artifact's name or id`},
		{"resource without id", Check{Type: "exists", Target: "resource:#/a"}, `target: "resource:" needs a resource id`},
		{"bad pointer", Check{Type: "exists", Target: "output#summary"}, `target: JSON pointer "summary" must be empty or start with "/"`},
		{"bad pointer escape", Check{Type: "exists", Target: "output#/a~2"}, `target: JSON pointer "/a~2": "~" must be followed by 0 or 1`},
		{"schema missing", Check{Type: "schema_match"}, "schema: required"},
		{"schema bad", Check{Type: "schema_match", Schema: map[string]any{"type": "objekt"}}, "schema: "},
		{"schema remote ref", Check{Type: "schema_match", Schema: map[string]any{"$ref": "https://example.com/s.json"}}, "a contract's schema can refer only to itself"},
		{"regex missing", Check{Type: "regex"}, "pattern: required"},
		{"regex bad", Check{Type: "regex", Pattern: "(a"}, "pattern: error parsing regexp: missing closing ): `(a`"},
		{"contains number", Check{Type: "contains", Value: 3}, "value: must be a string (contains looks for a substring), got a number"},
		{"not_contains missing", Check{Type: "not_contains"}, "value: must be a string (not_contains looks for a substring), got nothing"},
		{"contains empty", Check{Type: "contains", Value: ""}, "value: must not be empty"},
		{"equals missing", Check{Type: "equals"}, "value: required (the value the target must equal)"},
		{"equals not JSON", Check{Type: "equals", Value: make(chan int)}, "value: is not JSON"},
		{"jsonpath missing", Check{Type: "jsonpath"}, "path: required"},
		{"jsonpath bad", Check{Type: "jsonpath", Path: "$.items[?"}, "path: jsonpath: "},
		{"jsonpath negative count", Check{Type: "jsonpath", Path: "$.a", Count: intp(-1)}, "count: must not be negative"},
		{"cel missing", Check{Type: "cel"}, "expression: required"},
		{"cel syntax", Check{Type: "cel", Expression: "data.count >"}, "expression: ERROR: <input>:1:13: Syntax error"},
		{"cel undeclared", Check{Type: "cel", Expression: "outptu == ''"}, "expression: ERROR: <input>:1:1: undeclared reference to 'outptu'"},
		{"cel not bool", Check{Type: "cel", Expression: "size(output)"}, "expression: has type int, want bool"},
		{"cel target", Check{Type: "cel", Expression: "true", Target: "data"}, "target: a cel expression sees output, data, artifacts, resources and task and takes no target"},
		{"sections missing", Check{Type: "sections"}, "sections: required (the headings that must be present)"},
		{"sections blank", Check{Type: "sections", Sections: []string{"A", " "}}, "sections[1]: is empty"},
		{"max missing", Check{Type: "max_duration"}, `max: required (a Go duration such as "30s")`},
		{"max bad", Check{Type: "max_duration", Max: "soon"}, `max: time: invalid duration "soon"`},
		{"max negative", Check{Type: "max_duration", Max: "-1s"}, "max: must be positive"},
		{"max target", Check{Type: "max_duration", Max: "1s", Target: "data"}, "target: max_duration looks at the step's execution time and takes no target"},
		{"media missing", Check{Type: "media_type"}, "mediaType: required"},
		{"media bad", Check{Type: "media_type", MediaType: "json"}, `mediaType: "json" is not TYPE/SUBTYPE, TYPE/* or */*`},
		{"media pointer", Check{Type: "media_type", MediaType: "text/plain", Target: "output#/a"}, "target: media_type looks at parts: a JSON pointer selects a value"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := compileCheck(&tc.check)
			if err == nil {
				t.Fatalf("compiled; want error %q", tc.want)
			}
			if !strings.HasPrefix(err.Error(), tc.want) && !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error\n got %q\nwant %q", err, tc.want)
			}
		})
	}
}

// TestCompileErrorPaths: Compile reports a bad parameter at its field's
// path, every one of them, and the contract's schemas and validators too.
func TestCompileErrorPaths(t *testing.T) {
	t.Parallel()
	c := &AgentContract{
		ID: "c",
		Steps: []ContractStep{{ID: "s", Assertions: []ContractAssertion{
			{Type: Assert, Message: "ok", Check: Check{Type: "regex", Pattern: "("}},
			{Type: Assert, Message: "ok", Check: Check{Type: "contains", Value: "x"}},
			{Type: Suggest, Message: "ok", Check: Check{Type: "cel", Expression: "1"}},
		}}},
		Resources:  []ContractResource{{ID: "r", Type: ResourceData, Schema: map[string]any{"minimum": "x"}}},
		Validators: []ResourceValidator{{Type: "regex"}, {Type: "nope"}, {Type: "schema_match", Config: map[string]any{"schema": "x"}}},
	}
	_, err := Compile(c)
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("error %v is not Errors", err)
	}
	var paths []string
	for _, e := range errs {
		paths = append(paths, e.Path)
	}
	want := []string{"resources[0].schema", "validators[0].type", "validators[1].type", "validators[2].config.schema",
		"steps[0].assertions[0].check.pattern", "steps[0].assertions[2].check.expression"}
	if strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Errorf("paths\n got %v\nwant %v", paths, want)
	}
	if got := errs[4].Error(); got != "steps[0].assertions[0].check.pattern: error parsing regexp: missing closing ): `(`" {
		t.Errorf("error = %q", got)
	}
}

// TestTargets: every target form, pointers with escapes, and targets that
// are not there.
func TestTargets(t *testing.T) {
	t.Parallel()
	res := &task.Result{
		Artifacts: []task.Artifact{
			{ID: "x1", Name: "doc", Parts: []task.Part{task.TextPart(`{"a/b":{"m~n":[10,20]},"s":"str","n":null}`)}},
			{ID: "x2", Parts: []task.Part{task.DataPart(json.RawMessage(`{"first":1}`)), task.DataPart(json.RawMessage(`{"second":2}`))}},
		},
		Message: &task.Message{Parts: []task.Part{task.TextPart("tail")}},
	}
	in := &Input{Result: res, Resources: map[string]Resource{
		"cfg":  {ContractResource: ContractResource{ID: "cfg", Type: ResourceFile}, Text: `{"port":8080}`},
		"data": {ContractResource: ContractResource{ID: "data", Type: ResourceData}, Data: struct{ Port int }{9090}},
	}}
	cases := []struct {
		target  string
		text    string
		json    string
		absent  string
		jsonErr string
	}{
		{target: "", text: "{\"a/b\":{\"m~n\":[10,20]},\"s\":\"str\",\"n\":null}\ntail", json: `{"first":1}`},
		{target: "output", text: "{\"a/b\":{\"m~n\":[10,20]},\"s\":\"str\",\"n\":null}\ntail", json: `{"first":1}`},
		{target: "data", text: `{"first":1}`, json: `{"first":1}`},
		{target: "data#/first", text: "1", json: "1"},
		{target: "artifact:doc", text: `{"a/b":{"m~n":[10,20]},"s":"str","n":null}`, json: `{"a/b":{"m~n":[10,20]},"n":null,"s":"str"}`},
		{target: "artifact:doc#", text: `{"a/b":{"m~n":[10,20]},"n":null,"s":"str"}`, json: `{"a/b":{"m~n":[10,20]},"n":null,"s":"str"}`},
		{target: "artifact:doc#/a~1b/m~0n/1", text: "20", json: "20"},
		{target: "artifact:doc#/s", text: "str", json: `"str"`},
		{target: "artifact:doc#/n", text: "null", json: "null"},
		{target: "artifact:x2", text: `{"first":1}`, json: `{"first":1}`},
		{target: "artifact:x2#/first", text: "1", json: "1"},
		{target: "#/first", text: "1", json: "1"},
		{target: "resource:cfg", text: `{"port":8080}`, json: `{"port":8080}`},
		{target: "resource:cfg#/port", text: "8080", json: "8080"},
		{target: "resource:data", text: `{"Port":9090}`, json: `{"Port":9090}`},
		{target: "resource:data#/Port", text: "9090", json: "9090"},
		{target: "artifact:doc#/a~1b/m~0n/2", absent: `artifact "doc" has no value at "/a~1b/m~0n/2"`},
		{target: "artifact:doc#/a~1b/m~0n/01", absent: `artifact "doc" has no value at "/a~1b/m~0n/01"`},
		{target: "artifact:doc#/a~1b/m~0n/-", absent: `artifact "doc" has no value at "/a~1b/m~0n/-"`},
		{target: "artifact:doc#/s/0", absent: `artifact "doc" has no value at "/s/0"`},
		{target: "artifact:nope", absent: `artifact "nope" not found (artifacts: doc, x2)`},
		{target: "resource:nope#/a", absent: `resource "nope" not available (resources: cfg, data)`},
		{target: "output#/zzz", absent: `output has no value at "/zzz"`},
	}
	for _, tc := range cases {
		t.Run(tc.target, func(t *testing.T) {
			t.Parallel()
			tg, err := parseTarget(tc.target)
			if err != nil {
				t.Fatal(err)
			}
			v, err := tg.resolve(in)
			if tc.absent != "" {
				var a *absent
				if !errors.As(err, &a) || err.Error() != tc.absent {
					t.Fatalf("resolve = %v, want absent %q", err, tc.absent)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if v.text != tc.text {
				t.Errorf("text = %q, want %q", v.text, tc.text)
			}
			x, err := v.JSON()
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(x)
			if string(b) != tc.json {
				t.Errorf("json = %s, want %s", b, tc.json)
			}
		})
	}
	t.Run("no result", func(t *testing.T) {
		tg, _ := parseTarget("data")
		if _, err := tg.resolve(&Input{}); err == nil || err.Error() != "there is no output (the step has not run)" {
			t.Errorf("resolve = %v", err)
		}
	})
	t.Run("not JSON under a pointer", func(t *testing.T) {
		tg, _ := parseTarget("output#/a")
		_, err := tg.resolve(&Input{Result: textResult("plain")})
		if err == nil || err.Error() != "output is not JSON: invalid character 'p' looking for beginning of value" {
			t.Errorf("resolve = %v", err)
		}
	})
}

// TestCustomValidator: a registered validator is a check type; it gets
// its check (target, config) and the input.
var registerWordCount sync.Once

// The validator is registered before any test runs: tests that list the
// check types (validate_test.go) must see the same list whenever they run.
func init() { registerWordCount.Do(func() { RegisterValidator("test_word_count", wordCount) }) }

func TestCustomValidator(t *testing.T) {
	t.Parallel()
	registerWordCount.Do(func() { RegisterValidator("test_word_count", wordCount) })
	if !KnownCheck("test_word_count") {
		t.Fatal("not known after registering")
	}
	c := &AgentContract{ID: "c", Steps: []ContractStep{{ID: "s", Assertions: []ContractAssertion{

		{Type: Assert, Message: "short", Check: Check{Type: "test_word_count", Target: "artifact:report#/summary", Config: map[string]any{"max": 3.0}}},
		{Type: Suggest, Message: "very short", Check: Check{Type: "test_word_count", Target: "artifact:report#/summary", Config: map[string]any{"max": 2.0}}},
	}}}}
	comp, err := Compile(c)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := comp.Step("s")
	g := st.PostGate(context.Background(), &Input{Result: reportResult()})
	if !g.Passed || !g.Results[0].Passed || g.Results[1].Passed || g.Results[1].Reason != "too many words" || g.Results[1].Check != "test_word_count" {
		t.Errorf("gate = %+v", g)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a built-in name did not panic")
		}
	}()
	RegisterValidator("regex", func(context.Context, *Check, *Input) Verdict { return Verdict{} })
}

// TestStrictness: which failed assertions fail the gate at each level.
func TestStrictness(t *testing.T) {
	t.Parallel()
	passing := ContractAssertion{Type: Assert, Message: "has a summary", Check: Check{Type: "exists", Target: "artifact:report#/summary"}}
	failAssert := ContractAssertion{Type: Assert, Message: "says done", Check: Check{Type: "equals", Target: "artifact:report#/summary", Value: "done"}}
	failSuggest := ContractAssertion{Type: Suggest, Message: "mentions tests", Check: Check{Type: "contains", Value: "tests"}}
	cases := []struct {
		strictness Strictness
		assertions []ContractAssertion
		pass       bool
		failed     []string
	}{
		{Strict, []ContractAssertion{passing}, true, nil},
		{Strict, []ContractAssertion{passing, failSuggest}, false, []string{"mentions tests"}},
		{Strict, []ContractAssertion{failAssert, failSuggest}, false, []string{"says done", "mentions tests"}},
		{Loose, []ContractAssertion{passing, failSuggest}, true, nil},
		{Loose, []ContractAssertion{failAssert, failSuggest}, false, []string{"says done"}},
		{"", []ContractAssertion{passing, failSuggest}, true, nil},
		{"", []ContractAssertion{failAssert}, false, []string{"says done"}},
		{Permissive, []ContractAssertion{failAssert, failSuggest}, true, nil},
	}
	for _, tc := range cases {
		c := &AgentContract{ID: "c", Strictness: tc.strictness, Steps: []ContractStep{{ID: "s", Assertions: tc.assertions}}}
		comp, err := Compile(c)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := comp.Step("s")
		g := st.PostGate(context.Background(), &Input{Result: reportResult()})
		var failed []string
		for _, a := range g.FailedAssertions {
			failed = append(failed, a.Message)
		}
		if g.Passed != tc.pass || strings.Join(failed, "|") != strings.Join(tc.failed, "|") {
			t.Errorf("%q %d assertions: passed %v failed %v, want %v %v", tc.strictness, len(tc.assertions), g.Passed, failed, tc.pass, tc.failed)
		}
		if len(g.Results) != len(tc.assertions) {
			t.Errorf("%q: %d results, want every assertion recorded", tc.strictness, len(g.Results))
		}
		for i, r := range g.Results {
			if r.Message != tc.assertions[i].Message || r.Type != tc.assertions[i].Type || r.Check != tc.assertions[i].Check.Type {
				t.Errorf("result %d = %+v", i, r)
			}
		}
	}
}

// TestConcurrentGates runs one compiled step's gate from many goroutines
// (the race detector checks the shared compiled checks).
func TestConcurrentGates(t *testing.T) {
	t.Parallel()
	st := benchStep(t)
	in := benchInput()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				if g := st.PostGate(context.Background(), in); !g.Passed {
					t.Errorf("gate failed: %+v", g)
					return
				}
			}
		})
	}
	wg.Wait()
}

// wordCount is a custom validator: the target has at most config.max
// words.
func wordCount(_ context.Context, c *Check, in *Input) Verdict {
	max := int(c.Config["max"].(float64))
	tg, err := parseTarget(c.Target)
	if err != nil {
		return Verdict{Reason: err.Error()}
	}
	v, err := tg.resolve(in)
	if err != nil {
		return Verdict{Reason: err.Error()}
	}
	if n := len(strings.Fields(v.text)); n > max {
		return Verdict{Reason: "too many words", Path: c.Target}
	}
	return Verdict{Passed: true}
}
