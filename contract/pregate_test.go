package contract

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pactum/pactum/task"
)

var registerNoSecrets sync.Once

// noSecrets is a custom resource validator: the resource's text does not
// hold config.word.
func noSecrets(_ context.Context, c *Check, in *Input) Verdict {
	id := strings.TrimPrefix(c.Target, "resource:")
	if strings.Contains(in.Resources[id].Text, c.Config["word"].(string)) {
		return Verdict{Reason: "holds a secret"}
	}
	return Verdict{Passed: true}
}

// Registered before any test runs, as test_word_count: tests that list
// the check types (validate_test.go) must see one list whenever they run.
func init() { registerNoSecrets.Do(func() { RegisterValidator("test_no_secrets", noSecrets) }) }

// pipeline is a three-step contract: plan creates a JSON plan (data),
// spec writes a file; build consumes both.
func pipeline(strictness Strictness) *AgentContract {
	registerNoSecrets.Do(func() { RegisterValidator("test_no_secrets", noSecrets) })
	return &AgentContract{
		ID: "pipeline", Strictness: strictness,
		Steps: []ContractStep{
			{ID: "plan", Creates: []string{"plan"}},
			{ID: "spec", Creates: []string{"spec"}, DependsOn: []string{"plan"}, Consumes: []string{"plan"}},
			{ID: "build", DependsOn: []string{"plan", "spec"}, Consumes: []string{"plan", "spec"}},
		},
		Resources: []ContractResource{
			{ID: "plan", Type: ResourceData, Schema: map[string]any{
				"type": "object", "required": []any{"tables"},
				"properties": map[string]any{"tables": map[string]any{"type": "array", "minItems": 1}},
			}},
			{ID: "spec", Type: ResourceFile, Location: "docs/spec.md"},
		},
		Validators: []ResourceValidator{
			{Type: "exists", ResourceTypes: []string{"file"}},
			{Type: "test_no_secrets", ResourceTypes: []string{"*"}, Config: map[string]any{"word": "hunter2"}},
		},
	}
}

func mustStep(t *testing.T, c *AgentContract, id string) *CompiledStep {
	t.Helper()
	comp, err := Compile(c)
	if err != nil {
		t.Fatal(err)
	}
	st, ok := comp.Step(id)
	if !ok {
		t.Fatalf("no step %s", id)
	}
	return st
}

type gateSummary struct {
	passed    bool
	blockedBy []string
	results   []string // check target passed [reason]
}

func summarize(g GateResult) gateSummary {
	s := gateSummary{passed: g.Passed, blockedBy: g.BlockedBy}
	for _, r := range g.Results {
		line := r.Check + " " + r.Target + " "
		if r.Passed {
			line += "ok"
		} else {
			line += "FAIL " + r.Reason
		}
		s.results = append(s.results, line)
	}
	return s
}

func TestPreGate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "docs", "spec.md"), []byte("# Spec\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	goodPlan := Resource{ContractResource: ContractResource{ID: "plan", Type: ResourceData}, Data: map[string]any{"tables": []any{"users"}}}
	badPlan := Resource{ContractResource: ContractResource{ID: "plan", Type: ResourceData}, Data: map[string]any{"tables": []any{}}}
	secretPlan := Resource{ContractResource: ContractResource{ID: "plan", Type: ResourceData}, Text: `{"tables":["hunter2"]}`}
	spec := Resource{ContractResource: ContractResource{ID: "spec", Type: ResourceFile, Location: "docs/spec.md"}, Text: "# Spec\n"}
	goneSpec := Resource{ContractResource: ContractResource{ID: "spec", Type: ResourceFile, Location: "docs/gone.md"}}

	cases := []struct {
		name       string
		strictness Strictness
		step       string
		in         *Input
		want       gateSummary
	}{
		{name: "first step has nothing to wait for", step: "plan", in: &Input{Done: map[string]bool{}},
			want: gateSummary{passed: true}},
		{name: "all there", step: "build",
			in: &Input{WorkDir: dir, Done: map[string]bool{"plan": true, "spec": true}, Resources: map[string]Resource{"plan": goodPlan, "spec": spec}},
			want: gateSummary{passed: true, results: []string{
				"dependency plan ok", "dependency spec ok", "consumes resource:plan ok", "consumes resource:spec ok",
				"validator:test_no_secrets resource:plan ok", "validator:exists resource:spec ok", "validator:test_no_secrets resource:spec ok",
			}}},
		{name: "dependency not done", step: "build",
			in: &Input{WorkDir: dir, Done: map[string]bool{"plan": true}, Resources: map[string]Resource{"plan": goodPlan, "spec": spec}},
			want: gateSummary{blockedBy: []string{"dependency spec not done"}, results: []string{
				"dependency plan ok", "FAIL", "consumes resource:plan ok", "consumes resource:spec ok",
				"validator:test_no_secrets resource:plan ok", "validator:exists resource:spec ok", "validator:test_no_secrets resource:spec ok",
			}}},
		{name: "single step: dependencies not checked", step: "build",
			in:   &Input{WorkDir: dir, Resources: map[string]Resource{"plan": goodPlan, "spec": spec}},
			want: gateSummary{passed: true, results: []string{"consumes resource:plan ok", "consumes resource:spec ok", "validator:test_no_secrets resource:plan ok", "validator:exists resource:spec ok", "validator:test_no_secrets resource:spec ok"}}},
		{name: "resource missing", step: "build",
			in: &Input{WorkDir: dir, Resources: map[string]Resource{"plan": goodPlan}},
			want: gateSummary{blockedBy: []string{"resource spec missing"}, results: []string{
				"consumes resource:plan ok", "consumes resource:spec FAIL no step has provided resource spec", "validator:test_no_secrets resource:plan ok",
			}}},
		{name: "resource against its schema", step: "spec",
			in: &Input{Resources: map[string]Resource{"plan": badPlan}},
			want: gateSummary{blockedBy: []string{`resource plan invalid: at "/tables": minItems: got 0, want 1`}, results: []string{
				`consumes resource:plan FAIL at "/tables": minItems: got 0, want 1`, "validator:test_no_secrets resource:plan ok",
			}}},
		{name: "resource text not JSON", step: "spec",
			in: &Input{Resources: map[string]Resource{"plan": {ContractResource: ContractResource{ID: "plan"}, Text: "tables: users"}}},
			want: gateSummary{blockedBy: []string{`resource plan invalid: resource "plan" is not JSON: invalid character 'a' in literal true (expecting 'r')`}, results: []string{
				`consumes resource:plan FAIL resource "plan" is not JSON: invalid character 'a' in literal true (expecting 'r')`, "validator:test_no_secrets resource:plan ok",
			}}},
		{name: "custom validator", step: "spec",
			in: &Input{Resources: map[string]Resource{"plan": secretPlan}},
			want: gateSummary{blockedBy: []string{"validator test_no_secrets on resource plan: holds a secret"}, results: []string{
				"consumes resource:plan ok", "validator:test_no_secrets resource:plan FAIL holds a secret",
			}}},
		{name: "file validator", step: "build", strictness: Permissive,
			in: &Input{WorkDir: dir, Resources: map[string]Resource{"plan": goodPlan, "spec": goneSpec}},
			want: gateSummary{blockedBy: []string{`validator exists on resource spec: resource "spec": file "docs/gone.md" does not exist under the working directory`}, results: []string{
				"consumes resource:plan ok", "consumes resource:spec ok", "validator:test_no_secrets resource:plan ok",
				`validator:exists resource:spec FAIL resource "spec": file "docs/gone.md" does not exist under the working directory`, "validator:test_no_secrets resource:spec ok",
			}}},
		{name: "permissive does not soften", step: "build", strictness: Permissive,
			in:   &Input{Done: map[string]bool{}},
			want: gateSummary{blockedBy: []string{"dependency plan not done", "dependency spec not done", "resource plan missing", "resource spec missing"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := mustStep(t, pipeline(tc.strictness), tc.step)
			got := summarize(st.PreGate(context.Background(), tc.in))
			if got.passed != (len(tc.want.blockedBy) == 0) {
				t.Errorf("passed = %v with blockedBy %q", got.passed, got.blockedBy)
			}
			if !slices.Equal(got.blockedBy, tc.want.blockedBy) {
				t.Errorf("blockedBy\n got %q\nwant %q", got.blockedBy, tc.want.blockedBy)
			}
			if tc.want.results == nil {
				return
			}
			for i := range tc.want.results {
				if tc.want.results[i] == "FAIL" { // a dependency's failure, checked by blockedBy
					tc.want.results[i] = got.results[i]
				}
			}
			if !slices.Equal(got.results, tc.want.results) {
				t.Errorf("results\n got %q\nwant %q", got.results, tc.want.results)
			}
		})
	}
}

func TestPreGateResultFields(t *testing.T) {
	t.Parallel()
	st := mustStep(t, pipeline(Loose), "spec")
	g := st.PreGate(context.Background(), &Input{Done: map[string]bool{}})
	want := []ValidationResult{
		{Check: "dependency", Target: "plan", Type: Assert, Message: "step plan has succeeded", Reason: "step plan has not succeeded"},
		{Check: "consumes", Target: "resource:plan", Type: Assert, Message: "resource plan is available", Reason: "no step has provided resource plan"},
	}
	if !slices.Equal(g.Results, want) {
		t.Errorf("results\n got %+v\nwant %+v", g.Results, want)
	}
	// A nil input is an empty one.
	if g := mustStep(t, pipeline(Loose), "plan").PreGate(context.Background(), nil); !g.Passed {
		t.Errorf("nil input: %+v", g)
	}
}

func TestExtractResources(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "out"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "out", "schema.json"), []byte(`{"tables":["users"]}`), 0o600))
	must(os.WriteFile(filepath.Join(dir, "notes.md"), []byte("# Notes\n"), 0o600))
	must(os.WriteFile(filepath.Join(dir, "broken.json"), []byte(`{"tables":`), 0o600))
	must(os.WriteFile(filepath.Join(dir, "blob"), []byte{0xff, 0xfe, 0}, 0o600))

	c := &AgentContract{
		ID: "x",
		Steps: []ContractStep{{ID: "s", Creates: []string{
			"schema", "notes", "broken", "blob", "missing_file", "escape",
			"report", "by_id", "missing_artifact",
			"stats", "plain_data", "answer", "summary",
		}}},
		Resources: []ContractResource{
			{ID: "schema", Type: ResourceFile, Location: "out/schema.json"},
			{ID: "notes", Type: ResourceFile, Location: "notes.md", Format: "markdown"},
			{ID: "broken", Type: ResourceFile, Location: "broken.json"},
			{ID: "blob", Type: ResourceFile},
			{ID: "missing_file", Type: ResourceFile, Location: "nope.txt"},
			{ID: "escape", Type: ResourceFile, Location: "../etc/passwd"},
			{ID: "report", Type: ResourceArtifact},
			{ID: "by_id", Type: ResourceArtifact, Location: "a3"},
			{ID: "missing_artifact", Type: ResourceArtifact, Location: "log"},
			{ID: "stats", Type: ResourceData, Location: "stats"},
			{ID: "answer", Type: ResourceMessage},
		},
	}
	st := mustStep(t, c, "s")
	res := reportResult()
	res.Artifacts = append(res.Artifacts, task.Artifact{ID: "a4", Name: "extra", Parts: []task.Part{task.DataPart(json.RawMessage(`[1,2]`))}})
	found, created := ExtractResources(st, &Input{Result: res, WorkDir: dir})

	var ids []string
	for _, r := range created {
		ids = append(ids, r.ID)
	}
	// summary has no definition: a data resource from the output's first
	// data part (the stats artifact's).
	wantIDs := []string{"schema", "notes", "broken", "blob", "report", "by_id", "stats", "plain_data", "answer", "summary"}
	if !slices.Equal(ids, wantIDs) {
		t.Fatalf("created %v, want %v", ids, wantIDs)
	}
	if len(found) != len(wantIDs) {
		t.Errorf("found %d resources, want %d", len(found), len(wantIDs))
	}
	check := func(id, text, data, mediaType, location string) {
		t.Helper()
		r := found[id]
		if r.Text != text {
			t.Errorf("%s: text %q, want %q", id, r.Text, text)
		}
		got := ""
		if r.Data != nil {
			b, _ := json.Marshal(r.Data)
			got = string(b)
		}
		if got != data {
			t.Errorf("%s: data %s, want %s", id, got, data)
		}
		if r.MediaType != mediaType {
			t.Errorf("%s: media type %q, want %q", id, r.MediaType, mediaType)
		}
		if r.Location != location {
			t.Errorf("%s: location %q, want %q", id, r.Location, location)
		}
	}
	check("schema", `{"tables":["users"]}`, `{"tables":["users"]}`, "application/json", "out/schema.json")
	check("notes", "# Notes\n", "", "text/markdown", "notes.md")
	check("broken", `{"tables":`, "", "application/json", "broken.json")
	check("blob", "\xff\xfe\x00", "", "application/octet-stream", "blob")
	check("report", reportJSON, "", "text/plain", "")
	check("by_id", "{\"rows\":1200,\"ok\":true}", `{"ok":true,"rows":1200}`, "application/json", "a3")
	check("stats", `{"rows":1200,"ok":true}`, `{"ok":true,"rows":1200}`, "application/json", "stats")
	check("plain_data", `{"rows":1200,"ok":true}`, `{"ok":true,"rows":1200}`, "application/json", "")
	check("summary", `{"rows":1200,"ok":true}`, `{"ok":true,"rows":1200}`, "application/json", "")
	check("answer", reportJSON+"\n"+handoffMD+"\ndone", "", "text/plain", "")
	if created[0].Type != ResourceFile || created[7].Type != ResourceData {
		t.Errorf("definitions not kept: %+v", created)
	}

	t.Run("no result", func(t *testing.T) {
		found, created := ExtractResources(st, &Input{WorkDir: dir})
		if len(found) != 4 || len(created) != 4 { // the four files
			t.Errorf("found %d, created %v", len(found), created)
		}
	})
	t.Run("nil input", func(t *testing.T) {
		found, created := ExtractResources(st, nil)
		if len(found) != 0 || len(created) != 0 {
			t.Errorf("found %v", found)
		}
	})
}

// TestPostGateValidators: the contract's validators run on the resources
// the step created, by type, and weigh as asserts.
func TestPostGateValidators(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "spec.md"), []byte("password: hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mk := func(s Strictness) *AgentContract {
		c := pipeline(s)
		c.Resources[1].Location = "spec.md"
		c.Steps[1].Assertions = []ContractAssertion{{Type: Suggest, Message: "has a title", Check: Check{Type: "regex", Target: "resource:spec", Pattern: "^# "}}}
		c.Validators = append(c.Validators, ResourceValidator{Type: "schema_match", ResourceTypes: []string{"data"}})
		return c
	}
	for _, tc := range []struct {
		s      Strictness
		passed bool
		failed []string
	}{
		{Strict, false, []string{"has a title", "resource spec passes validator test_no_secrets: holds a secret"}},
		{Loose, false, []string{"resource spec passes validator test_no_secrets: holds a secret"}},
		{Permissive, true, nil},
	} {
		st := mustStep(t, mk(tc.s), "spec")
		in := &Input{Result: textResult("wrote the spec"), WorkDir: dir}
		found, created := ExtractResources(st, in)
		if len(created) != 1 || created[0].ID != "spec" {
			t.Fatalf("created %v", created)
		}
		in.Resources = found
		g := st.PostGate(context.Background(), in)
		got := summarize(g)
		want := []string{
			`regex resource:spec FAIL resource "spec" does not match /^# /: "password: hunter2\n"`,
			"validator:exists resource:spec ok",
			"validator:test_no_secrets resource:spec FAIL holds a secret",
		}
		if !slices.Equal(got.results, want) {
			t.Errorf("%s: results\n got %q\nwant %q", tc.s, got.results, want)
		}
		var failed []string
		for _, a := range g.FailedAssertions {
			failed = append(failed, a.Message)
		}
		if g.Passed != tc.passed || !slices.Equal(failed, tc.failed) {
			t.Errorf("%s: passed %v failed %q, want %v %q", tc.s, g.Passed, failed, tc.passed, tc.failed)
		}
	}

	// The plan step's schema_match validator checks its data against the
	// resource's schema; not created, not checked.
	st := mustStep(t, mk(Loose), "plan")
	if g := st.PostGate(context.Background(), &Input{Result: textResult("no plan")}); !g.Passed || len(g.Results) != 0 {
		t.Errorf("nothing created: %+v", g)
	}
	in := &Input{Result: &task.Result{Artifacts: []task.Artifact{{Parts: []task.Part{task.DataPart(json.RawMessage(`{"tables":[]}`))}}}}}
	in.Resources, _ = ExtractResources(st, in)
	g := st.PostGate(context.Background(), in)
	got := summarize(g)
	want := []string{"validator:test_no_secrets resource:plan ok", `validator:schema_match resource:plan FAIL at "/tables": minItems: got 0, want 1`}
	if g.Passed || !slices.Equal(got.results, want) {
		t.Errorf("plan: passed %v results %q, want %q", g.Passed, got.results, want)
	}
}
