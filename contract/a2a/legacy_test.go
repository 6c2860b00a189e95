package a2a_test

import (
	"encoding/json"
	"errors"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/a2a"
)

// seedTask is the 0.2 shape the seed documents write: the message that
// started the task, parts with "type", a session id.
const seedTask = `{"task": {"id": "t2", "sessionId": "s1", "status": {"state": "completed"},
  "message": {"role": "user", "parts": [{"type": "text", "text": "write it"}, {"type": "data", "data": {"n": 1}},
    {"type": "file", "file": {"uri": "https://h/a.csv", "mimeType": "text/csv", "name": "a.csv"}}]},
  "artifacts": [{"name": "out", "parts": [{"type": "text", "text": "done"}]}]}}`

func TestToContractLegacy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		id, ctx  string
		state    string
		texts    int
		desc     string
	}{
		{"0.2 task", seedTask, "contract_a2a_t2", "s1", "TASK_STATE_COMPLETED", 1, "write it"},
		{"0.3 task", `{"task": {"kind": "task", "id": "t3", "contextId": "c3", "status": {"state": "input-required"},
		   "history": [{"kind": "message", "messageId": "m", "role": "user", "parts": [{"kind": "text", "text": "hello"}]}]}}`,
			"contract_a2a_t3", "c3", "TASK_STATE_INPUT_REQUIRED", 1, "hello"},
		{"0.2 bare task", `{"id": "t4", "sessionId": "s4", "status": {"state": "working"}, "message": {"role": "user", "parts": [{"type": "text", "text": "x"}]}}`,
			"contract_a2a_t4", "s4", "TASK_STATE_WORKING", 1, "x"},
		{"message only", `{"task": {"message": {"role": "user", "parts": [{"type": "text", "text": "only"}]}}}`,
			"", "", "TASK_STATE_SUBMITTED", 1, "only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if !a2a.New().Detects([]byte(tc.in)) {
				t.Fatal("not detected")
			}
			c, err := a2a.New().ToContract([]byte(tc.in), contract.AdapterOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.id != "" && c.ID != tc.id {
				t.Errorf("id %q, want %q", c.ID, tc.id)
			}
			if tc.id == "" && len(c.ID) <= len(a2a.ContractIDPrefix) {
				t.Errorf("id %q, want one named by content", c.ID)
			}
			if tc.ctx != "" && c.Metadata[a2a.MetaContextID] != tc.ctx {
				t.Errorf("context %v, want %q", c.Metadata[a2a.MetaContextID], tc.ctx)
			}
			if c.Metadata[a2a.MetaState] != tc.state {
				t.Errorf("state %v, want %s", c.Metadata[a2a.MetaState], tc.state)
			}
			if c.Steps[0].Description != tc.desc {
				t.Errorf("description %q, want %q (the message was dropped)", c.Steps[0].Description, tc.desc)
			}
		})
	}
	// The 0.2 task's data and file parts are resources, as a 1.0 task's are.
	c, err := a2a.New().ToContract([]byte(seedTask), contract.AdapterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, r := range c.Resources {
		kinds = append(kinds, r.ID+":"+string(r.Type)+":"+r.Location)
	}
	want := []string{"text_0:message:", "data_1:data:", "file_a_csv:file:https://h/a.csv", "artifact_out:artifact:out"}
	if len(kinds) != len(want) {
		t.Fatalf("resources %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("resources %v, want %v", kinds, want)
		}
	}
}

func TestExtractResourcesLegacy(t *testing.T) {
	t.Parallel()
	step := &contract.ContractStep{ID: "s"}
	for _, tc := range []struct {
		name, in string
		wantID   string
		text     string
		data     any
	}{
		{"0.2 message, text", `{"role": "agent", "parts": [{"type": "text", "text": "hi"}]}`, "text_s_0", "hi", nil},
		{"0.3 message, data", `{"kind": "message", "messageId": "m", "role": "agent", "parts": [{"kind": "data", "data": {"n": 2}}]}`, "data_s_0", `{"n":2}`, map[string]any{"n": float64(2)}},
		{"parts without a role", `{"parts": [{"text": "plain"}]}`, "text_s_0", "plain", nil},
		{"0.2 task, status message", `{"id": "t", "sessionId": "x", "status": {"state": "completed", "message": {"role": "agent", "parts": [{"type": "text", "text": "ok"}]}}}`, "text_s_0", "ok", nil},
		{"0.3 artifact", `{"artifactId": "a", "name": "rep", "parts": [{"kind": "text", "text": "body"}]}`, "artifact_rep", "body", nil},
		{"1.0 result wrapping a task", `{"task": {"id": "t", "status": {"state": "TASK_STATE_COMPLETED"}, "artifacts": [{"artifactId": "a", "name": "r", "parts": [{"text": "wrapped"}]}]}}`, "artifact_r", "wrapped", nil},
		{"1.0 result wrapping a message", `{"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "reply"}]}}`, "text_s_0", "reply", nil},
		{"0.2 file bytes", `{"role": "agent", "parts": [{"type": "file", "file": {"bytes": "aGVsbG8=", "name": "h.txt", "mimeType": "text/plain"}}]}`, "file_h_txt", "hello", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := a2a.New().ExtractResources([]byte(tc.in), step)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 || got[0].ID != tc.wantID || got[0].Text != tc.text {
				t.Fatalf("got %+v, want %s with text %q", got, tc.wantID, tc.text)
			}
			if tc.data != nil {
				a, _ := json.Marshal(got[0].Data)
				b, _ := json.Marshal(tc.data)
				if string(a) != string(b) {
					t.Fatalf("data %s, want %s", a, b)
				}
			}
		})
	}
}

// TestUpgradeLeavesInputAlone: reading an old shape does not change the
// caller's value.
func TestUpgradeLeavesInputAlone(t *testing.T) {
	t.Parallel()
	in := map[string]any{"role": "user", "parts": []any{map[string]any{"type": "text", "text": "x"}}}
	if _, err := a2a.DecodeOutput(in); err != nil {
		t.Fatal(err)
	}
	if p := in["parts"].([]any)[0].(map[string]any); p["type"] != "text" || in["role"] != "user" {
		t.Fatalf("input changed: %v", in)
	}
}

// FuzzDecodeOutput: an A2A agent's output, of any version or none, never
// panics the decoder; what it accepts is a task, message or artifact,
// and it extracts without error.
func FuzzDecodeOutput(f *testing.F) {
	for _, s := range []string{seedTask, `{"role": "agent", "parts": [{"type": "text", "text": "hi"}]}`,
		`{"parts": [{"type": "file", "file": {"bytes": "!!"}}]}`, `{"parts": [{"kind": "nope"}]}`,
		`{"id": "t", "status": {"state": 3}, "message": 7}`, `{"artifactId": "a", "parts": [null]}`,
		`{"task": {"message": {"parts": []}}}`, `{"history": [{"parts": [{"type": "file", "file": null}]}]}`, `[]`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := a2a.DecodeOutput(data)
		if err != nil {
			if !errors.Is(err, contract.ErrUnsupportedInput) && json.Valid(data) {
				var probe map[string]any
				if json.Unmarshal(data, &probe) == nil && probe != nil {
					return // an object the SDK refused: a decode error
				}
				t.Fatalf("error %v for %s does not wrap ErrUnsupportedInput", err, data)
			}
			return
		}
		switch v.(type) {
		case *sdk.Task, *sdk.Message, *sdk.Artifact:
		default:
			t.Fatalf("DecodeOutput gave %T", v)
		}
		if _, err := a2a.ExtractResources(v, &contract.ContractStep{ID: "s"}); err != nil {
			t.Fatal(err)
		}
		_, _ = a2a.New().ToContract(data, contract.AdapterOptions{AutoAssertions: true})
		_ = a2a.New().Detects(data)
	})
}
