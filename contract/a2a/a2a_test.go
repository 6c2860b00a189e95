package a2a_test

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"testing/quick"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/a2a"
)

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// roundTrip converts w to a contract, writes the contract as JSON and
// reads it back (as from a file), and converts it back.
func roundTrip(t *testing.T, w a2a.Workflow, opts contract.AdapterOptions) (a2a.Workflow, *contract.AgentContract) {
	t.Helper()
	c, err := a2a.ToContract(w, opts)
	if err != nil {
		t.Fatalf("ToContract: %v", err)
	}
	if _, err := contract.Compile(c); err != nil {
		t.Fatalf("the contract does not compile: %v", err)
	}
	back, err := a2a.FromContract(c)
	if err != nil {
		t.Fatalf("FromContract: %v", err)
	}
	var decoded contract.AgentContract
	if err := json.Unmarshal([]byte(jsonOf(t, c)), &decoded); err != nil {
		t.Fatal(err)
	}
	back2, err := a2a.FromContract(&decoded)
	if err != nil {
		t.Fatalf("FromContract (decoded): %v", err)
	}
	if a, b := jsonOf(t, back), jsonOf(t, back2); a != b {
		t.Fatalf("the contract read back from JSON converts differently:\n in memory: %s\n from JSON: %s", a, b)
	}
	return back, c
}

func userMessage(id string, parts ...*sdk.Part) *sdk.Message {
	return &sdk.Message{ID: id, Role: sdk.MessageRoleUser, Parts: parts}
}

func filePart(url, name, mt string) *sdk.Part {
	p := sdk.NewFileURLPart(sdk.URL(url), mt)
	p.Filename = name
	return p
}

func card() *sdk.AgentCard {
	return &sdk.AgentCard{
		Name: "summarizer", Description: "summarizes documents", Version: "2.1.0",
		SupportedInterfaces: []*sdk.AgentInterface{sdk.NewAgentInterface("http://127.0.0.1:9000/agents/summarizer", sdk.TransportProtocolJSONRPC)},
		DefaultInputModes:   []string{"text/plain", "application/pdf"},
		DefaultOutputModes:  []string{"application/json"},
		Capabilities:        sdk.AgentCapabilities{Streaming: true},
		Skills: []sdk.AgentSkill{
			{ID: "summarize", Name: "Summarize", Description: "a summary", Tags: []string{"text"}, OutputModes: []string{"application/json"}},
			{ID: "translate", Name: "Translate", Description: "a translation", Tags: []string{}},
		},
	}
}

func TestRoundTripTable(t *testing.T) {
	tests := []struct {
		name string
		w    a2a.Workflow
	}{
		{"text only", a2a.Workflow{Task: &sdk.Task{ID: "t1", ContextID: "c1", Status: sdk.TaskStatus{State: sdk.TaskStateSubmitted},
			History: []*sdk.Message{userMessage("m1", sdk.NewTextPart("summarize the report"))}}}},
		{"parts of every kind, artifacts, card", a2a.Workflow{AgentCard: card(), Task: &sdk.Task{
			ID: "t2", ContextID: "c2", Status: sdk.TaskStatus{State: sdk.TaskStateCompleted},
			History: []*sdk.Message{userMessage("m2",
				sdk.NewTextPart("summarize"), sdk.NewTextPart("in French"),
				sdk.NewDataPart(map[string]any{"maxWords": 100.0, "style": "brief", "tags": []any{"a", "b"}}),
				filePart("https://example.com/report.pdf", "report.pdf", "application/pdf"),
				&sdk.Part{Content: sdk.Raw("raw bytes\x00\x01"), Filename: "blob.bin", MediaType: "application/octet-stream"},
			)},
			Artifacts: []*sdk.Artifact{
				{ID: "a1", Name: "summary", Description: "the summary", Parts: sdk.ContentParts{sdk.NewDataPart(map[string]any{"summary": "short"})}},
				{ID: "a2", Parts: sdk.ContentParts{sdk.NewTextPart("# Notes"), filePart("file:///tmp/x.md", "x.md", "text/markdown")}},
			},
		}}},
		{"no history", a2a.Workflow{Task: &sdk.Task{ID: "t3", ContextID: "c3", Status: sdk.TaskStatus{State: sdk.TaskStateWorking},
			Artifacts: []*sdk.Artifact{{ID: "only", Name: "only", Parts: sdk.ContentParts{sdk.NewTextPart("x")}}}}}},
		{"two files of one name", a2a.Workflow{Task: &sdk.Task{ID: "t4", ContextID: "c4", Status: sdk.TaskStatus{State: sdk.TaskStateInputRequired},
			History: []*sdk.Message{userMessage("m4", filePart("https://a/x.txt", "x.txt", "text/plain"), filePart("https://b/x.txt", "x.txt", "text/plain"))}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			back, c := roundTrip(t, tt.w, contract.AdapterOptions{})
			if got, want := jsonOf(t, back), jsonOf(t, tt.w); got != want {
				t.Fatalf("round trip changed the workflow:\n got  %s\n want %s", got, want)
			}
			if c.Protocol != "a2a" || c.ID != "contract_a2a_"+string(tt.w.Task.ID) || len(c.Steps) != 1 || c.Steps[0].ID != a2a.StepID {
				t.Fatalf("contract: %s", jsonOf(t, c))
			}
			ids := map[string]bool{}
			for _, r := range c.Resources {
				if ids[r.ID] {
					t.Fatalf("resource id %s twice", r.ID)
				}
				ids[r.ID] = true
			}
			for _, id := range c.Steps[0].Creates {
				if !ids[id] {
					t.Fatalf("step creates %s, which is not a resource", id)
				}
			}
		})
	}
}

func TestMappingTable(t *testing.T) {
	w := a2a.Workflow{AgentCard: card(), Task: &sdk.Task{
		ID: "t2", ContextID: "ctx", Status: sdk.TaskStatus{State: sdk.TaskStateCompleted},
		History:   []*sdk.Message{userMessage("m", sdk.NewTextPart("do it"), sdk.NewDataPart(map[string]any{"n": 1.0}), filePart("https://x/y.pdf", "y.pdf", "application/pdf"))},
		Artifacts: []*sdk.Artifact{{ID: "a1", Name: "result", Parts: sdk.ContentParts{sdk.NewDataPart(map[string]any{"ok": true})}}},
	}}
	c, err := a2a.ToContract(w, contract.AdapterOptions{AutoAssertions: true, Strictness: contract.Strict})
	if err != nil {
		t.Fatal(err)
	}
	st := c.Steps[0]
	if st.Agent != "summarizer" || st.Description != "do it" || c.Strictness != contract.Strict {
		t.Fatalf("step: %s", jsonOf(t, st))
	}
	if c.Metadata[a2a.MetaContextID] != "ctx" || c.Metadata[a2a.MetaTaskID] != "t2" || c.Metadata[a2a.MetaAgentURL] != "http://127.0.0.1:9000/agents/summarizer" {
		t.Fatalf("metadata: %v", c.Metadata)
	}
	if got := strings.Join(st.Metadata["capabilities"].([]string), ","); got != "summarize,translate" {
		t.Fatalf("capabilities %s", got)
	}
	want := map[string]contract.ResourceType{"text_0": contract.ResourceMessage, "data_1": contract.ResourceData, "file_y_pdf": contract.ResourceFile, "artifact_result": contract.ResourceArtifact}
	for _, r := range c.Resources {
		if want[r.ID] != r.Type {
			t.Fatalf("resource %s is %s, want %s", r.ID, r.Type, want[r.ID])
		}
		delete(want, r.ID)
	}
	if len(want) > 0 {
		t.Fatalf("resources missing: %v", want)
	}
	if c.Resources[1].Schema == nil || c.Resources[1].Format != "json" || c.Resources[2].Location != "https://x/y.pdf" {
		t.Fatalf("resources: %s", jsonOf(t, c.Resources))
	}
	if len(st.Assertions) != 1 || st.Assertions[0].Check.Type != "exists" || st.Assertions[0].Check.Target != "artifact:result" {
		t.Fatalf("auto assertions: %s", jsonOf(t, st.Assertions))
	}
	if _, err := contract.Compile(c); err != nil {
		t.Fatal(err)
	}

	// ResourceMappings retype a kind; the round trip still recognizes it.
	c, err = a2a.ToContract(w, contract.AdapterOptions{ResourceMappings: map[string]string{"file": "artifact", "artifact": "data"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Resources[2].Type != contract.ResourceArtifact || c.Resources[3].Type != contract.ResourceData {
		t.Fatalf("mapped: %s", jsonOf(t, c.Resources))
	}
	back, err := a2a.FromContract(c)
	if err != nil || jsonOf(t, back.Task) != jsonOf(t, w.Task) {
		t.Fatalf("mapped round trip: %v\n%s", err, jsonOf(t, back.Task))
	}
	if _, err := a2a.ToContract(w, contract.AdapterOptions{ResourceMappings: map[string]string{"file": "blob"}}); err == nil {
		t.Fatal("a mapping to no resource type was accepted")
	}
}

func TestPreserveMetadata(t *testing.T) {
	w := a2a.Workflow{AgentCard: card(), Task: &sdk.Task{
		ID: "t", ContextID: "c", Status: sdk.TaskStatus{State: sdk.TaskStateCompleted},
		Metadata: map[string]any{"x-ext": map[string]any{"k": "v"}},
		History: []*sdk.Message{
			userMessage("m1", &sdk.Part{Content: sdk.Text("hi"), Metadata: map[string]any{"lang": "en"}}),
			{ID: "m2", Role: sdk.MessageRoleAgent, Parts: sdk.ContentParts{sdk.NewTextPart("hello")}},
		},
		Artifacts: []*sdk.Artifact{{ID: "a", Name: "a", Metadata: map[string]any{"m": 1.0}, Parts: sdk.ContentParts{sdk.NewTextPart("x")}}},
	}}
	w.AgentCard.SupportedInterfaces = append(w.AgentCard.SupportedInterfaces, sdk.NewAgentInterface("http://h/grpc", sdk.TransportProtocolGRPC))
	w.AgentCard.DocumentationURL = "https://docs"

	back, _ := roundTrip(t, w, contract.AdapterOptions{PreserveMetadata: true})
	if got, want := jsonOf(t, back), jsonOf(t, w); got != want {
		t.Fatalf("preserved round trip:\n got  %s\n want %s", got, want)
	}
	// Without it, what the mapping table does not carry is dropped.
	back, _ = roundTrip(t, w, contract.AdapterOptions{})
	if back.Task.Metadata != nil || len(back.Task.History) != 1 || back.Task.History[0].Parts[0].Metadata != nil ||
		back.AgentCard.DocumentationURL != "" || len(back.AgentCard.SupportedInterfaces) != 1 {
		t.Fatalf("unpreserved: %s", jsonOf(t, back))
	}
}

// genWorkflow generates workflows within the mapping table: one user
// message, cards with one JSON-RPC interface, no extension metadata.
type genWorkflow struct{ W a2a.Workflow }

func (genWorkflow) Generate(r *rand.Rand, _ int) reflect.Value {
	word := func() string {
		ws := []string{"alpha", "beta", "report.pdf", "a b/c", "ünï", "", "x-1", "data_0", "file_0"}
		return ws[r.Intn(len(ws))]
	}
	nonEmpty := func() string {
		if s := word(); s != "" {
			return s
		}
		return "z"
	}
	var value func(depth int) any
	value = func(depth int) any {
		switch n := r.Intn(6); {
		case n == 0:
			return word()
		case n == 1:
			return float64(r.Intn(1000)) / 4
		case n == 2:
			return r.Intn(2) == 0
		case n == 3 && depth < 2:
			l := []any{}
			for range r.Intn(3) {
				l = append(l, value(depth+1))
			}
			return l
		default:
			m := map[string]any{}
			if depth < 2 {
				for range r.Intn(3) {
					m[nonEmpty()] = value(depth + 1)
				}
			}
			return m
		}
	}
	part := func() *sdk.Part {
		p := &sdk.Part{}
		switch r.Intn(4) {
		case 0:
			p.Content = sdk.Text(word())
		case 1:
			p.Content = sdk.Data{Value: value(0)}
		case 2:
			p.Content = sdk.URL("https://example.com/" + nonEmpty())
			p.Filename = word()
		default:
			b := make([]byte, r.Intn(8))
			r.Read(b)
			p.Content = sdk.Raw(b)
			p.Filename = word()
		}
		if r.Intn(2) == 0 {
			p.MediaType = []string{"text/plain", "application/json", "image/png"}[r.Intn(3)]
		}
		return p
	}
	states := []sdk.TaskState{sdk.TaskStateSubmitted, sdk.TaskStateWorking, sdk.TaskStateCompleted, sdk.TaskStateFailed, sdk.TaskStateInputRequired, sdk.TaskStateCanceled}
	t := &sdk.Task{ID: sdk.TaskID("task-" + nonEmpty()), ContextID: word(), Status: sdk.TaskStatus{State: states[r.Intn(len(states))]}}
	if r.Intn(4) > 0 {
		m := userMessage("msg-"+word(), nil)
		m.Parts = nil
		for range r.Intn(5) {
			m.Parts = append(m.Parts, part())
		}
		if m.Parts == nil {
			m.Parts = sdk.ContentParts{}
		}
		t.History = []*sdk.Message{m}
	}
	for i := range r.Intn(4) {
		a := &sdk.Artifact{ID: sdk.ArtifactID("art-" + string(rune('a'+i))), Name: word(), Description: word(), Parts: sdk.ContentParts{}}
		for range 1 + r.Intn(3) {
			a.Parts = append(a.Parts, part())
		}
		t.Artifacts = append(t.Artifacts, a)
	}
	w := a2a.Workflow{Task: t}
	if r.Intn(2) == 0 {
		c := &sdk.AgentCard{Name: word(), Description: word(), Version: word()}
		if r.Intn(2) == 0 {
			c.SupportedInterfaces = []*sdk.AgentInterface{sdk.NewAgentInterface("http://h/"+nonEmpty(), sdk.TransportProtocolJSONRPC)}
		}
		if r.Intn(2) == 0 {
			c.DefaultInputModes = []string{word()}
			c.DefaultOutputModes = []string{word(), word()}
		}
		for range r.Intn(3) {
			c.Skills = append(c.Skills, sdk.AgentSkill{ID: nonEmpty(), Name: word(), Description: word(), Tags: []string{word()}})
		}
		c.Capabilities.PushNotifications = r.Intn(2) == 0
		w.AgentCard = c
	}
	return reflect.ValueOf(genWorkflow{w})
}

func TestRoundTripProperty(t *testing.T) {
	prop := func(g genWorkflow) bool {
		back, _ := roundTrip(t, g.W, contract.AdapterOptions{})
		if got, want := jsonOf(t, back), jsonOf(t, g.W); got != want {
			t.Logf("round trip changed the workflow:\n got  %s\n want %s", got, want)
			return false
		}
		return true
	}
	if err := quick.Check(prop, &quick.Config{MaxCount: 300, Rand: rand.New(rand.NewSource(1))}); err != nil {
		t.Fatal(err)
	}
}

func TestToContractErrors(t *testing.T) {
	ad := a2a.New()
	for name, in := range map[string]any{
		"no task":      a2a.Workflow{},
		"no task id":   &sdk.Task{},
		"not a task":   42,
		"bad json":     []byte(`{"task": {"id": "x", "history": [{"parts": [{}]}]}}`),
		"null part":    a2a.Workflow{Task: &sdk.Task{ID: "x", History: []*sdk.Message{{Parts: sdk.ContentParts{nil}}}}},
		"nil workflow": (*a2a.Workflow)(nil),
	} {
		if _, err := ad.ToContract(in, contract.AdapterOptions{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// A bare task as JSON, and the {"task": …} shape, both convert.
	for _, raw := range []string{
		`{"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}, "history": [{"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}]}`,
		`{"task": {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}, "history": [{"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}]}}`,
	} {
		c, err := ad.ToContract(json.RawMessage(raw), contract.AdapterOptions{})
		if err != nil || c.Steps[0].Description != "hi" || c.Metadata[a2a.MetaState] != "TASK_STATE_COMPLETED" {
			t.Fatalf("%s: %v %+v", raw, err, c)
		}
	}
}

func TestFromOtherContract(t *testing.T) {
	c := &contract.AgentContract{ID: "mine", Steps: []contract.ContractStep{{ID: "s", Description: "write it"}},
		Resources: []contract.ContractResource{{ID: "out", Type: contract.ResourceArtifact, Location: "out.md"}, {ID: "f", Type: contract.ResourceFile}}}
	v, err := a2a.New().FromContract(c)
	if err != nil {
		t.Fatal(err)
	}
	w := v.(a2a.Workflow)
	if w.Task.ID != "mine" || w.Task.Status.State != sdk.TaskStateSubmitted || w.AgentCard != nil ||
		w.Task.History[0].Parts[0].Text() != "write it" || len(w.Task.Artifacts) != 1 || w.Task.Artifacts[0].Name != "out.md" {
		t.Fatalf("%s", jsonOf(t, w))
	}
	if _, err := a2a.FromContract(nil); err == nil {
		t.Fatal("nil contract")
	}
}
