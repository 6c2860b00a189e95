package a2a_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/a2a"
)

func TestExtractResources(t *testing.T) {
	step := &contract.ContractStep{ID: "write"}
	task := &sdk.Task{
		ID: "t", Status: sdk.TaskStatus{State: sdk.TaskStateCompleted, Message: &sdk.Message{Role: sdk.MessageRoleAgent, Parts: sdk.ContentParts{
			sdk.NewTextPart("done"), sdk.NewDataPart(map[string]any{"n": 1}), filePart("https://h/out.csv", "out.csv", "text/csv"),
		}}},
		Artifacts: []*sdk.Artifact{
			{ID: "a1", Name: "summary", Parts: sdk.ContentParts{sdk.NewDataPart(map[string]any{"s": "x"})}},
			{ID: "a2", Parts: sdk.ContentParts{sdk.NewTextPart("notes"), filePart("https://h/notes.md", "notes.md", "text/markdown")}},
		},
	}
	want := []struct {
		id, typ, loc, format string
	}{
		{"artifact_summary", "artifact", "summary", "json"},
		{"artifact_a2", "artifact", "a2", "text/markdown"},
		{"file_notes_md", "file", "https://h/notes.md", "text/markdown"},
		{"text_write_0", "message", "", "text"},
		{"data_write_1", "data", "", "json"},
		{"file_out_csv", "file", "https://h/out.csv", "text/csv"},
	}
	check := func(name string, got []contract.Resource) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d resources: %+v", name, len(got), got)
		}
		for i, w := range want {
			g := got[i]
			if g.ID != w.id || string(g.Type) != w.typ || g.Location != w.loc || g.Format != w.format || g.Metadata["createdByStep"] != "write" {
				t.Fatalf("%s: resource %d = %+v, want %+v", name, i, g, w)
			}
		}
	}
	ad := a2a.New()
	got, err := ad.ExtractResources(task, step)
	if err != nil {
		t.Fatal(err)
	}
	check("task", got)
	raw, _ := json.Marshal(task)
	got, err = ad.ExtractResources(json.RawMessage(raw), step)
	if err != nil {
		t.Fatal(err)
	}
	check("task JSON", got)

	// The ids of the artifacts are the ones ToContract puts in the step's creates.
	c, err := a2a.ToContract(a2a.Workflow{Task: task}, contract.AdapterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.Steps[0].Creates, ",") != "artifact_summary,artifact_a2" {
		t.Fatalf("creates %v", c.Steps[0].Creates)
	}

	got, err = ad.ExtractResources(task.Status.Message, step)
	if err != nil || len(got) != 3 || got[0].Type != contract.ResourceMessage {
		t.Fatalf("message: %+v %v", got, err)
	}
	got, err = ad.ExtractResources(task.Artifacts, step)
	if err != nil || len(got) != 3 {
		t.Fatalf("artifacts: %+v %v", got, err)
	}
	for _, bad := range []any{42, "text", []byte(`{"x": 1}`), []byte(`[`)} {
		if _, err := ad.ExtractResources(bad, step); !errors.Is(err, contract.ErrUnsupportedInput) {
			t.Fatalf("%v: %v", bad, err)
		}
	}
}

func TestInjectContext(t *testing.T) {
	available := []contract.Resource{
		{ContractResource: contract.ContractResource{ID: "spec", Type: contract.ResourceData, Format: "json"}, Data: map[string]any{"name": "x"}},
		{ContractResource: contract.ContractResource{ID: "notes", Type: contract.ResourceMessage}, Text: "remember", MediaType: "text/plain"},
		{ContractResource: contract.ContractResource{ID: "img", Type: contract.ResourceFile, Location: "https://h/a.png", Format: "image/png"}},
		{ContractResource: contract.ContractResource{ID: "local", Type: contract.ResourceFile, Location: "out/a.txt"}},
	}
	v, err := a2a.New().InjectContext(&contract.ContractStep{ID: "next"}, available)
	if err != nil {
		t.Fatal(err)
	}
	m := v.(*sdk.Message)
	if m.Role != sdk.MessageRoleUser || m.ID == "" || len(m.Parts) != 4 {
		t.Fatalf("message: %+v", m)
	}
	head := m.Parts[0].Text()
	for _, line := range []string{"Context from previous steps:", "- spec: data (json)", "- notes: message (unknown format)", "- img: file (image/png)", "- local: file (unknown format)"} {
		if !strings.Contains(head, line) {
			t.Fatalf("summary %q lacks %q", head, line)
		}
	}
	if d := m.Parts[1].Data().(map[string]any); d["name"] != "x" || m.Parts[1].Metadata["resourceId"] != "spec" {
		t.Fatalf("data part: %+v", m.Parts[1])
	}
	if m.Parts[2].Text() != "remember" || m.Parts[2].MediaType != "text/plain" {
		t.Fatalf("text part: %+v", m.Parts[2])
	}
	if m.Parts[3].URL() != "https://h/a.png" || m.Parts[3].Filename != "a.png" {
		t.Fatalf("file part: %+v", m.Parts[3])
	}
	// The message is valid A2A: it survives the SDK's JSON.
	raw, _ := json.Marshal(m)
	var back sdk.Message
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	none := a2a.InjectMessage(nil, nil)
	if len(none.Parts) != 1 || none.Parts[0].Text() != "Context from previous steps: none" {
		t.Fatalf("empty: %+v", none.Parts[0])
	}
}
