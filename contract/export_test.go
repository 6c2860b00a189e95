package contract_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/task"
)

func TestSections(t *testing.T) {
	t.Parallel()
	src := "preamble\n\n## HANDOFF: a -> b\n\n### Context\n\n  some *text*  \n\n### Open Questions\nNone\n\nSUMMARY\n-------\nall done\n\n# Top\n<!-- hidden -->\n"
	got := contract.Sections([]byte(src))
	want := []contract.Section{
		{Title: "HANDOFF: a -> b", Level: 2, Body: "Context\nsome *text*Open Questions\nNone"},
		{Title: "Context", Level: 3, Body: "some *text*"},
		{Title: "Open Questions", Level: 3, Body: "None"},
		{Title: "SUMMARY", Level: 2, Body: "all done"},
		{Title: "Top", Level: 1, Body: ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Sections:\n got %#v\nwant %#v", got, want)
	}
	if got := contract.Sections(nil); len(got) != 0 {
		t.Fatalf("Sections(nil) = %#v", got)
	}
}

func TestOutputText(t *testing.T) {
	t.Parallel()
	text := "## HANDOFF: a -> b"
	cases := []struct {
		name string
		r    *task.Result
		want string
	}{
		{"nil", nil, ""},
		{"artifact and repeating message", &task.Result{
			Artifacts: []task.Artifact{{ID: "1", Parts: []task.Part{task.TextPart(text)}}},
			Message:   &task.Message{Role: task.RoleAgent, Parts: []task.Part{task.TextPart(text)}},
		}, text},
		{"artifact and other message", &task.Result{
			Artifacts: []task.Artifact{{ID: "1", Parts: []task.Part{task.TextPart("one")}}},
			Message:   &task.Message{Role: task.RoleAgent, Parts: []task.Part{task.TextPart("two")}},
		}, "one\ntwo"},
		{"data only", &task.Result{
			Artifacts: []task.Artifact{{ID: "1", Parts: []task.Part{task.DataPart(json.RawMessage(` {"a":1} `))}}},
		}, `{"a":1}`},
	}
	for _, c := range cases {
		if got := contract.OutputText(c.r); got != c.want {
			t.Errorf("%s: OutputText = %q, want %q", c.name, got, c.want)
		}
	}
}
