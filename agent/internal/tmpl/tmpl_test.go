package tmpl

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pactum/pactum/task"
)

func TestExpandEnv(t *testing.T) {
	t.Parallel()
	env := map[string]string{"TOKEN": "s3cret", "EMPTY": "", "A_1": "x"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"Bearer ${TOKEN}", "Bearer s3cret"},
		{"${TOKEN}${A_1}", "s3cretx"},
		{"[${EMPTY}]", "[]"},
		{"$TOKEN stays", "$TOKEN stays"},
		{"cost $5 and ${", "cost $5 and ${"},
		{"${not valid} ${1X} ${}", "${not valid} ${1X} ${}"},
		{"${TOKEN", "${TOKEN"},
	}
	for _, tt := range tests {
		got, err := ExpandEnv(tt.in, lookup)
		if err != nil || got != tt.want {
			t.Errorf("ExpandEnv(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	_, err := ExpandEnv("Bearer ${MISSING} ${TOKEN}", lookup)
	if err == nil || !strings.Contains(err.Error(), "MISSING") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("unset variable error = %v; want it to name MISSING and no value", err)
	}
}

func TestTemplate(t *testing.T) {
	t.Parallel()
	req := &task.Request{
		TaskID: "t1", ContextID: "c1", Attempt: 2,
		Envelope: task.Envelope{Action: "summarize", Actor: "alice", Metadata: map[string]any{"lang": "fr"}},
		Message: task.Message{ID: "m1", Role: task.RoleUser, Parts: []task.Part{
			task.TextPart(`say "hi" <now>`),
			task.DataPart(json.RawMessage(`{"k":1}`)),
			task.DataPart(json.RawMessage(`{"k":2}`)),
		}},
	}
	tp, err := Parse("body", `{"q":{{json .Input}},"t":"{{.TaskID}}/{{.ContextID}}/{{.Attempt}}","a":"{{.Action}} by {{.Actor}}","d":{{.Data}},"lang":{{json .Metadata.lang}},"none":{{json .Metadata.none}},"mid":{{json .Message.ID}}}`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tp.Execute(NewData(req))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"q":"say \"hi\" <now>","t":"t1/c1/2","a":"summarize by alice","d":{"k":1},"lang":"fr","none":null,"mid":"m1"}`
	if got != want {
		t.Errorf("Execute =\n%s\nwant\n%s", got, want)
	}
	if d := NewData(&task.Request{}); d.Data != "null" || d.Transcript != "" {
		t.Errorf("Data, Transcript without a data part or history = %q, %q; want null and empty", d.Data, d.Transcript)
	}
	// After input_required the conversation has several turns.
	turns := &task.Request{Message: task.Message{Role: task.RoleUser, Parts: []task.Part{task.TextPart("in Paris")}}, History: []task.Message{
		{ID: "u1", Role: task.RoleUser, Parts: []task.Part{task.TextPart("weather?")}},
		{ID: "a1", Role: task.RoleAgent, Parts: []task.Part{task.TextPart("Which city?")}},
		{ID: "d1", Role: task.RoleUser, Parts: []task.Part{task.DataPart(json.RawMessage(`{}`))}},
		{ID: "u2", Role: task.RoleUser, Parts: []task.Part{task.TextPart("in Paris")}},
	}}
	hist, err := Parse("hist", `{{.Transcript}}|{{len .History}}|{{range .History}}{{.ID}},{{end}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := hist.Execute(NewData(turns)); err != nil || got != "user: weather?\nagent: Which city?\nuser: in Paris|4|u1,a1,d1,u2," {
		t.Errorf("history template = %q, %v", got, err)
	}
	lit, err := Parse("lit", "no actions")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := lit.Execute(Data{}); got != "no actions" {
		t.Errorf("literal = %q", got)
	}
	for _, bad := range []string{"{{.Nope}}", "{{.Input", "{{nofunc .Input}}"} {
		if _, err := Parse("bad", bad); err == nil {
			t.Errorf("Parse(%q): want error", bad)
		}
	}
}

func TestExpandEnvList(t *testing.T) {
	lookup := func(name string) (string, bool) { return "v-" + name, name != "UNSET" }
	got, err := ExpandEnvList(map[string]string{"B": "${X}", "A": "plain"}, lookup)
	if err != nil || strings.Join(got, ",") != "A=plain,B=v-X" {
		t.Fatalf("ExpandEnvList = %q, %v; want name order, expanded", got, err)
	}
	if _, err := ExpandEnvList(map[string]string{"K": "${UNSET}"}, lookup); err == nil || !strings.HasPrefix(err.Error(), "env.K:") {
		t.Fatalf("unset variable: err = %v, want one naming env.K", err)
	}
	if got, err := ExpandEnvList(nil, lookup); err != nil || got != nil {
		t.Fatalf("no env = %q, %v; want nil", got, err)
	}
}

// TestArgumentsAndRole: .Arguments is the string the task's input carries
// under metadata.pactum.arguments (what a workflow run writes into each
// step's input), also on a turn after input_required; .Tools writes
// comma-separated and ranges as a list; the role fields are the runtime's
// to fill.
func TestArgumentsAndRole(t *testing.T) {
	t.Parallel()
	in := task.Message{Role: task.RoleUser, Parts: []task.Part{task.TextPart("# Task\nx")},
		Metadata: map[string]any{"pactum": map[string]any{"arguments": "a b", "workflow": "w"}}}
	reply := task.Message{Role: task.RoleUser, Parts: []task.Part{task.TextPart("yes")}}
	d := NewData(&task.Request{Envelope: task.Envelope{Input: in}, Message: reply})
	if d.Arguments != "a b" || d.System != "" || d.Tools != nil || d.Model != "" {
		t.Errorf("NewData: arguments %q, role %q %v %q", d.Arguments, d.System, d.Tools, d.Model)
	}
	for _, md := range []map[string]any{nil, {"pactum": "x"}, {"pactum": map[string]any{"arguments": 3}}} {
		if d := NewData(&task.Request{Envelope: task.Envelope{Input: task.Message{Metadata: md}}}); d.Arguments != "" {
			t.Errorf("metadata %v: arguments %q", md, d.Arguments)
		}
	}
	d.Tools = List{"Read", "Bash(git diff:*)"}
	d.System, d.Model = "be brief", "m"
	tp, err := Parse("role", `{{.Arguments}}|{{.System}}|{{.Tools}}|{{range .Tools}}<{{.}}>{{end}}|{{json .Tools}}|{{.Model}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := tp.Execute(d); err != nil || got != `a b|be brief|Read,Bash(git diff:*)|<Read><Bash(git diff:*)>|["Read","Bash(git diff:*)"]|m` {
		t.Errorf("role template = %q, %v", got, err)
	}
	if got, err := tp.Execute(Data{}); err != nil || got != `||||null|` {
		t.Errorf("empty role template = %q, %v", got, err)
	}
}
