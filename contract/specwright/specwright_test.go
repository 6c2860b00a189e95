package specwright_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/quick"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/specwright"
	"github.com/pactum/pactum/task"
)

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func init() {
	// Contracts made here use file-export: register it as a registry would.
	if err := contract.NewRegistry().Register(specwright.New()); err != nil {
		panic(err)
	}
}

// canonical re-serializes a spec's contract so that two specs compare by
// what the mapping keeps.
func canonical(t *testing.T, w specwright.Workflow) specwright.Workflow {
	t.Helper()
	if w.Spec.Contract != "" {
		var sc specwright.SpecContract
		if err := json.Unmarshal([]byte(w.Spec.Contract), &sc); err != nil {
			t.Fatal(err)
		}
		w.Spec.Contract = jsonOf(t, sc)
		if sc.Types == nil && sc.Files == nil {
			// Nothing in it: no resources, so nothing comes back.
			w.Spec.Contract = ""
		}
	}
	return w
}

// expected is what FromContract(ToContract(w)) must give without
// PreserveMetadata: the spec's id, title and contract; each chunk but its
// status (pending) and its spec id (the spec's).
func expected(t *testing.T, w specwright.Workflow) specwright.Workflow {
	w = canonical(t, w)
	w.Spec = specwright.Spec{ID: w.Spec.ID, Title: w.Spec.Title, Contract: w.Spec.Contract, Status: "approved"}
	chunks := make([]specwright.Chunk, len(w.Chunks))
	for i, ch := range w.Chunks {
		ch.Status = "pending"
		ch.SpecID = w.Spec.ID
		if ch.Agent == specwright.DefaultAgent {
			ch.Agent = ""
		}
		chunks[i] = ch
	}
	w.Chunks = chunks
	return w
}

func roundTrip(t *testing.T, w specwright.Workflow, opts contract.AdapterOptions) (specwright.Workflow, *contract.AgentContract) {
	t.Helper()
	c, err := specwright.ToContract(w, opts)
	if err != nil {
		t.Fatalf("ToContract: %v", err)
	}
	if _, err := contract.Compile(c); err != nil {
		t.Fatalf("the contract does not compile: %v", err)
	}
	back, err := specwright.FromContract(c)
	if err != nil {
		t.Fatal(err)
	}
	var decoded contract.AgentContract
	if err := json.Unmarshal([]byte(jsonOf(t, c)), &decoded); err != nil {
		t.Fatal(err)
	}
	back2, err := specwright.FromContract(&decoded)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := jsonOf(t, back), jsonOf(t, back2); a != b {
		t.Fatalf("the contract read back from JSON converts differently:\n in memory: %s\n from JSON: %s", a, b)
	}
	return back, c
}

func authSpec() specwright.Workflow {
	sc := `{"types": [{"name": "User", "file": "src/types.ts", "exportedFrom": "src/types.ts", "definition": "interface User { id: string }"}],
	        "files": [{"path": "src/types.ts", "action": "create", "purpose": "shared types", "exports": ["User"]},
	                  {"path": "src/auth.ts", "action": "create", "exports": ["login"]}]}`
	return specwright.Workflow{
		Spec: specwright.Spec{ID: "auth", ProjectID: "p1", Title: "Authentication", Content: "# Auth", Status: "approved", Contract: sc},
		Chunks: []specwright.Chunk{
			{ID: "types", SpecID: "auth", Title: "Types", Description: "Define the User type", Order: 0, Status: "done",
				Creates: []string{"file_src_types_ts", "type_User"},
				Assertions: []contract.ContractAssertion{
					{Type: contract.Assert, Message: "User has an id", Check: contract.Check{Type: "contains", Target: "resource:file_src_types_ts", Value: "id: string"}},
					{Type: contract.Suggest, Message: "document the type", Check: contract.Check{Type: "contains", Target: "resource:file_src_types_ts", Value: "/**"}},
				}},
			{ID: "login", SpecID: "auth", Title: "Login", Description: "Implement login", Order: 1, Agent: "claude",
				Dependencies: []string{"types"}, Creates: []string{"file_src_auth_ts"}, Consumes: []string{"type_User"}},
		},
	}
}

func TestMappingTable(t *testing.T) {
	w := authSpec()
	back, c := roundTrip(t, w, contract.AdapterOptions{})
	if got, want := jsonOf(t, back), jsonOf(t, expected(t, w)); got != want {
		t.Fatalf("round trip:\n got  %s\n want %s", got, want)
	}
	if c.ID != "contract_auth" || c.Protocol != "specwright" || len(c.Steps) != 2 || len(c.Resources) != 3 {
		t.Fatalf("contract: %s", jsonOf(t, c))
	}
	s0, s1 := c.Steps[0], c.Steps[1]
	if s0.Agent != specwright.DefaultAgent || s1.Agent != "claude" || strings.Join(s1.DependsOn, ",") != "types" ||
		s0.Metadata["title"] != "Types" || s1.Metadata["order"] != 1 {
		t.Fatalf("steps: %s", jsonOf(t, c.Steps))
	}
	r := c.Resources[0]
	if r.ID != "type_User" || r.Type != contract.ResourceFile || r.Location != "src/types.ts" || r.Format != "typescript" || r.Metadata["exportName"] != "User" {
		t.Fatalf("type resource: %s", jsonOf(t, r))
	}
	if c.Resources[1].ID != "file_src_types_ts" || c.Resources[2].Metadata["action"] != "create" {
		t.Fatalf("file resources: %s", jsonOf(t, c.Resources))
	}
	if jsonOf(t, c.Validators) != `[{"type":"file-export","resourceTypes":["file"]},{"type":"exists","resourceTypes":["*"]}]` {
		t.Fatalf("validators: %s", jsonOf(t, c.Validators))
	}

	// PreserveMetadata keeps the spec's project, content and status.
	back, _ = roundTrip(t, w, contract.AdapterOptions{PreserveMetadata: true})
	if back.Spec.ProjectID != "p1" || back.Spec.Content != "# Auth" || back.Spec.Status != "approved" {
		t.Fatalf("preserved spec: %+v", back.Spec)
	}

	// AutoAssertions: an exists assertion per created file resource, left
	// out again by FromContract.
	back, c = roundTrip(t, w, contract.AdapterOptions{AutoAssertions: true})
	if n := len(c.Steps[0].Assertions); n != 3 || c.Steps[0].Assertions[2].Check.Target != "resource:file_src_types_ts" {
		t.Fatalf("auto assertions: %s", jsonOf(t, c.Steps[0].Assertions))
	}
	if len(c.Steps[1].Assertions) != 1 {
		t.Fatalf("login auto assertions: %s", jsonOf(t, c.Steps[1].Assertions))
	}
	if got, want := jsonOf(t, back), jsonOf(t, expected(t, w)); got != want {
		t.Fatalf("round trip with auto assertions:\n got  %s\n want %s", got, want)
	}

	// MaxSteps keeps the first steps and drops dependencies on the others.
	w.Chunks = append([]specwright.Chunk{w.Chunks[1]}, w.Chunks[0])
	c, err := specwright.ToContract(w, contract.AdapterOptions{MaxSteps: 1})
	if err != nil || len(c.Steps) != 1 || len(c.Steps[0].DependsOn) != 0 || c.Metadata["truncatedFrom"] != 2 {
		t.Fatalf("MaxSteps: %v %s", err, jsonOf(t, c))
	}

	for name, bad := range map[string]specwright.Workflow{
		"no spec id":   {Chunks: w.Chunks},
		"bad contract": {Spec: specwright.Spec{ID: "x", Contract: "{"}},
		"no chunk id":  {Spec: specwright.Spec{ID: "x"}, Chunks: []specwright.Chunk{{Title: "t"}}},
	} {
		if _, err := specwright.ToContract(bad, contract.AdapterOptions{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

type genWorkflow struct{ W specwright.Workflow }

func (genWorkflow) Generate(r *rand.Rand, _ int) reflect.Value {
	word := func() string {
		ws := []string{"alpha", "beta", "src/a.ts", "a b", "ünï", "", "x-1"}
		return ws[r.Intn(len(ws))]
	}
	maybe := func(ss ...string) []string {
		if r.Intn(3) == 0 {
			return nil
		}
		return ss
	}
	w := specwright.Workflow{Spec: specwright.Spec{ID: "spec-" + word(), Title: word()}}
	if r.Intn(2) == 0 {
		var sc specwright.SpecContract
		for range r.Intn(3) {
			sc.Types = append(sc.Types, specwright.ContractType{Name: "T" + word(), File: word(), ExportedFrom: word(), Definition: word()})
		}
		for range r.Intn(3) {
			sc.Files = append(sc.Files, specwright.ContractFile{Path: "f/" + word(), Action: word(), Purpose: word(), Exports: maybe(word())})
		}
		b, _ := json.Marshal(sc)
		w.Spec.Contract = string(b)
	}
	n := r.Intn(5)
	for i := range n {
		ch := specwright.Chunk{ID: fmt.Sprintf("c%d", i), Title: word(), Description: word(), Order: r.Intn(10), Status: word(),
			Agent: []string{"", "claude", specwright.DefaultAgent}[r.Intn(3)], Creates: maybe(word(), word()), Consumes: maybe(word())}
		if i > 0 && r.Intn(2) == 0 {
			ch.Dependencies = []string{fmt.Sprintf("c%d", r.Intn(i))}
		}
		for range r.Intn(3) {
			ch.Assertions = append(ch.Assertions, contract.ContractAssertion{
				Type: []contract.AssertionType{contract.Assert, contract.Suggest}[r.Intn(2)], Condition: word(), Message: word(),
				Check: contract.Check{Type: "contains", Value: "v" + word()},
			})
		}
		w.Chunks = append(w.Chunks, ch)
	}
	return reflect.ValueOf(genWorkflow{w})
}

func TestRoundTripProperty(t *testing.T) {
	prop := func(g genWorkflow) bool {
		back, _ := roundTrip(t, g.W, contract.AdapterOptions{})
		if got, want := jsonOf(t, back), jsonOf(t, expected(t, g.W)); got != want {
			t.Logf("round trip:\n got  %s\n want %s", got, want)
			return false
		}
		return true
	}
	if err := quick.Check(prop, &quick.Config{MaxCount: 300, Rand: rand.New(rand.NewSource(1))}); err != nil {
		t.Fatal(err)
	}
}

func TestExtractResources(t *testing.T) {
	out := `[main 1a2b3c] add auth
 create mode 100644 src/auth.ts
 modify src/types.ts
Updated the docs in place.
export interface Session { id: string }
export async function login(u: User) {}
export const TIMEOUT = 5`
	got, err := specwright.New().ExtractResources(specwright.ChunkOutput{Output: out}, &contract.ContractStep{ID: "login"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range got {
		ids = append(ids, r.ID+"@"+r.Location)
		if r.Metadata["createdByStep"] != "login" {
			t.Fatalf("%s lacks createdByStep", r.ID)
		}
		if r.Text != "" || r.Data != nil {
			t.Fatalf("%s has content; a chunk's output only names what it made", r.ID)
		}
	}
	want := "file_src_auth_ts@src/auth.ts,file_src_types_ts@src/types.ts,export_Session@,export_login@,export_TIMEOUT@"
	if strings.Join(ids, ",") != want {
		t.Fatalf("got %s\nwant %s", strings.Join(ids, ","), want)
	}
	if got[3].Metadata["exportType"] != "function" {
		t.Fatalf("export type %v", got[3].Metadata)
	}
	if got, err := specwright.New().ExtractResources("nothing here", nil); err != nil || len(got) != 0 {
		t.Fatalf("plain string: %v %v", got, err)
	}
}

func TestPrompt(t *testing.T) {
	c, err := specwright.ToContract(authSpec(), contract.AdapterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	available := []contract.Resource{
		{ContractResource: c.Resources[0]},
		{ContractResource: contract.ContractResource{ID: "export_login", Location: "src/auth.ts", Metadata: map[string]any{"exportName": "login", "exportType": "function"}}},
		{ContractResource: contract.ContractResource{ID: "plain"}},
	}
	v, err := specwright.New().InjectContext(&c.Steps[0], available)
	if err != nil {
		t.Fatal(err)
	}
	want := `# Task: Types

Define the User type

## YOU MUST CREATE
- file_src_types_ts
- type_User

These are REQUIRED. The step will fail if any are missing.

## AVAILABLE IMPORTS (verified to exist)

From "src/types.ts":
  - User (export)

From "src/auth.ts":
  - login (function)

## REQUIREMENTS (Must Pass)
- User has an id

## GUIDANCE (Should Follow)
- document the type`
	if v.(string) != want {
		t.Fatalf("prompt:\n%s\nwant:\n%s", v, want)
	}
	p := specwright.Prompt(&c.Steps[1], nil)
	if strings.Contains(p, "REQUIREMENTS") || strings.Contains(p, "IMPORTS") || !strings.HasPrefix(p, "# Task: Login\n\nImplement login") {
		t.Fatalf("login prompt:\n%s", p)
	}
}

func TestFileExportValidator(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "src", "types.ts"), []byte("/** a user */\nexport interface User { id: string }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := specwright.ToContract(authSpec(), contract.AdapterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := contract.Compile(c)
	if err != nil {
		t.Fatal(err)
	}
	// The types chunk writes src/types.ts; the validators check it after
	// the step (file-export: it exports User, as the resource says).
	_, vr, err := contract.Wrap(context.Background(), cc, "types", &contract.Input{WorkDir: dir}, func(context.Context) (any, *task.Result, error) {
		return nil, &task.Result{}, nil
	})
	if err != nil {
		t.Fatalf("types: %v\n%s", err, jsonOf(t, vr))
	}
	var sawExport bool
	for _, r := range vr.Verification.PostGate.Results {
		if r.Check == "validator:file-export" && r.Passed {
			sawExport = true
		}
	}
	if !sawExport {
		t.Fatalf("file-export did not run: %s", jsonOf(t, vr.Verification.PostGate.Results))
	}

	check := func(r contract.Resource, cfg map[string]any) contract.Verdict {
		return specwright.FileExportValidator(context.Background(), &contract.Check{Type: "file-export", Target: "resource:" + r.ID, Config: cfg},
			&contract.Input{WorkDir: dir, Resources: map[string]contract.Resource{r.ID: r}})
	}
	user := contract.ContractResource{ID: "u", Type: contract.ResourceFile, Location: "src/types.ts", Metadata: map[string]any{"exportName": "User"}}
	if v := check(contract.Resource{ContractResource: user}, nil); !v.Passed {
		t.Fatalf("from the file: %+v", v)
	}
	if v := check(contract.Resource{ContractResource: user}, map[string]any{"exports": []any{"Admin"}}); v.Passed || !strings.Contains(v.Reason, "does not export Admin") {
		t.Fatalf("missing export: %+v", v)
	}
	if v := check(contract.Resource{ContractResource: user, Text: "const User = 1; export { User as Person, User }"}, nil); !v.Passed {
		t.Fatalf("export list: %+v", v)
	}
	user.Location = "../outside.ts"
	if v := check(contract.Resource{ContractResource: user}, nil); v.Passed {
		t.Fatalf("outside the working directory: %+v", v)
	}
	if v := specwright.FileExportValidator(context.Background(), &contract.Check{Target: "resource:none"}, &contract.Input{}); v.Passed {
		t.Fatal("a missing resource passed")
	}
}
