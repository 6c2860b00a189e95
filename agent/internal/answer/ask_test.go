package answer

import (
	"strings"
	"testing"

	"github.com/pactum/pactum/task"
)

func TestFromJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		doc    string
		answer string // pointer to the answer
		ask    string // input_required pointer; "-" for none
		// want: "question" or "answer" with the part kind and text, or
		// "error" with a substring of the error.
		want, kind, text string
	}{
		{"asks with text", `{"output":"Which city?","needs_input":true}`, "/output", "/needs_input", "question", "text", "Which city?"},
		{"asks with data", `{"output":{"fields":["city","date"]},"needs_input":true}`, "/output", "/needs_input", "question", "data", `{"fields":["city","date"]}`},
		{"asks with a number", `{"output":42,"needs_input":true}`, "/output", "/needs_input", "question", "text", "42"},
		{"nested flag", `{"output":"q?","state":{"ask":true}}`, "/output", "/state/ask", "question", "text", "q?"},
		{"escaped flag", `{"output":"q?","a/b":true}`, "/output", "/a~1b", "question", "text", "q?"},
		{"false", `{"output":"Sunny","needs_input":false}`, "/output", "/needs_input", "answer", "text", "Sunny"},
		{"null", `{"output":"Sunny","needs_input":null}`, "/output", "/needs_input", "answer", "text", "Sunny"},
		{"missing", `{"output":"Sunny"}`, "/output", "/needs_input", "answer", "text", "Sunny"},
		{"missing parent", `{"output":"Sunny"}`, "/output", "/state/ask", "answer", "text", "Sunny"},
		{"not set", `{"output":"Sunny","needs_input":true}`, "/output", "-", "answer", "text", "Sunny"},
		{"data answer", `{"output":{"t":21},"needs_input":false}`, "/output", "/needs_input", "answer", "data", `{"t":21}`},
		{"string flag", `{"output":"q","needs_input":"true"}`, "/output", "/needs_input", "error", "", `input_required pointer "/needs_input" names a string`},
		{"number flag", `{"output":"q","needs_input":1}`, "/output", "/needs_input", "error", "", `input_required pointer "/needs_input" names a number`},
		{"object flag", `{"output":"q","needs_input":{}}`, "/output", "/needs_input", "error", "", `input_required pointer "/needs_input" names an object`},
		{"array flag", `{"output":"q","needs_input":[true]}`, "/output", "/needs_input", "error", "", `input_required pointer "/needs_input" names an array`},
		{"whole document", `true`, "", "", "question", "text", "true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc, err := Decode([]byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			v, ok := MustPointer(tt.answer).Lookup(doc)
			if !ok {
				t.Fatalf("no answer at %q", tt.answer)
			}
			var ask *Pointer
			if tt.ask != "-" {
				p := MustPointer(tt.ask)
				ask = &p
			}
			res, err := FromJSON("id1", "output", doc, v, ask)
			if tt.want == "error" {
				if err == nil || !strings.Contains(err.Error(), tt.text) || !task.IsPermanent(err) {
					t.Fatalf("err = %v, want a permanent error containing %q", err, tt.text)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.InputRequired != (tt.want == "question") {
				t.Errorf("InputRequired = %v, want %v", res.InputRequired, tt.want == "question")
			}
			if res.Message == nil || res.Message.Role != task.RoleAgent || res.Message.ID == "" || len(res.Message.Parts) != 1 {
				t.Fatalf("message = %+v, want an agent message with one part", res.Message)
			}
			var p task.Part
			if tt.want == "question" {
				if len(res.Artifacts) != 0 {
					t.Errorf("a question came with artifacts: %+v", res.Artifacts)
				}
				p = res.Message.Parts[0]
			} else {
				if len(res.Artifacts) != 1 || res.Artifacts[0].ID != "id1" || len(res.Artifacts[0].Parts) != 1 {
					t.Fatalf("artifacts = %+v, want one", res.Artifacts)
				}
				p = res.Artifacts[0].Parts[0]
			}
			got := p.Text
			if p.Kind == task.PartData {
				got = string(p.Data)
			}
			if string(p.Kind) != tt.kind || got != tt.text {
				t.Errorf("part = %s %q, want %s %q", p.Kind, got, tt.kind, tt.text)
			}
		})
	}
}
