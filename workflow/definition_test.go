package workflow_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pactum/pactum/workflow"
)

func TestParseDefinition(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		data string
		want *workflow.Definition // File is "agents/x.md" unless set
	}{
		{
			name: "tools as a list",
			data: "---\nname: planner\ndescription: Plans the work.\ntools:\n  - Read\n  - Grep\nmodel: sonnet\nruntime: openai\n---\n\nYou plan.\n\nStep by step.\n",
			want: &workflow.Definition{Name: "planner", Description: "Plans the work.", Tools: []string{"Read", "Grep"},
				Model: "sonnet", Runtime: "openai", Body: "You plan.\n\nStep by step.", Line: 2},
		},
		{
			name: "tools as Claude Code's comma-separated string",
			data: "---\ndescription: Reviews.\nname: code-reviewer\ntools: Read, Grep,Glob , \n---\nReview.",
			want: &workflow.Definition{Name: "code-reviewer", Description: "Reviews.", Tools: []string{"Read", "Grep", "Glob"},
				Body: "Review.", Line: 3},
		},
		{
			name: "extra keys kept as metadata",
			data: "---\nname: x\ncolor: blue\npermissionMode: acceptEdits\nhooks:\n  pre: [a, 1, true]\nempty:\n---\nbody\n",
			want: &workflow.Definition{Name: "x", Body: "body", Line: 2, Metadata: map[string]any{
				"color": "blue", "permissionMode": "acceptEdits",
				"hooks": map[string]any{"pre": []any{"a", 1, true}}, "empty": nil,
			}},
		},
		{
			name: "no body, CRLF, byte order mark, null tools",
			data: "\uFEFF---\r\nname: A.b_c-9\r\ntools:\r\n---\r\n",
			want: &workflow.Definition{Name: "A.b_c-9", Line: 2},
		},
		{
			name: "closing fence at end of file without newline",
			data: "---\nname: x\n---",
			want: &workflow.Definition{Name: "x", Line: 2},
		},
		{
			name: "a later --- in the body is body text",
			data: "---\nname: x\n---\none\n---\ntwo\n",
			want: &workflow.Definition{Name: "x", Line: 2, Body: "one\n---\ntwo"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := workflow.ParseDefinition("agents/x.md", []byte(tt.data))
			if err != nil {
				t.Fatalf("ParseDefinition: %v", err)
			}
			tt.want.File = "agents/x.md"
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestParseDefinitionErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		data string
		want string // the whole message
	}{
		{
			name: "no front matter",
			data: "# planner\nYou plan.\n",
			want: `a.md:1: no front matter: a definition starts with a line "---", then YAML (name, description, tools, model), then a line "---"`,
		},
		{
			name: "empty file",
			data: "",
			want: `a.md:1: no front matter: a definition starts with a line "---", then YAML (name, description, tools, model), then a line "---"`,
		},
		{
			name: "unterminated front matter",
			data: "---\nname: x\nYou plan.\n",
			want: `a.md:1: front matter opened here is never closed by a line "---"`,
		},
		{
			name: "only an opening fence",
			data: "---",
			want: `a.md:1: front matter opened here is never closed by a line "---"`,
		},
		{
			name: "missing name",
			data: "---\ndescription: d\n---\nbody\n",
			want: `a.md:1: front matter: required key "name" is missing or empty`,
		},
		{
			name: "empty front matter",
			data: "---\n---\nbody\n",
			want: `a.md:1: front matter: required key "name" is missing`,
		},
		{
			name: "null name",
			data: "---\ndescription: d\nname:\n---\n",
			want: `a.md:3: front matter: required key "name" is missing or empty`,
		},
		{
			name: "bad name",
			data: "---\ndescription: d\nname: Code Reviewer\n---\n",
			want: `a.md:3: front matter: name: invalid name "Code Reviewer": use letters, digits, '.', '_' and '-' (at most 64, starting with a letter or digit)`,
		},
		{
			name: "name too long",
			data: "---\nname: " + strings.Repeat("a", 65) + "\n---\n",
			want: `a.md:2: front matter: name: invalid name "` + strings.Repeat("a", 65) + `": use letters, digits, '.', '_' and '-' (at most 64, starting with a letter or digit)`,
		},
		{
			name: "name not a string",
			data: "---\nname: [a]\n---\n",
			want: `a.md:2: front matter: name: expected a string, got a list`,
		},
		{
			name: "model not a string",
			data: "---\nname: a\n\nmodel: 4\n---\n",
			want: `a.md:4: front matter: model: expected a string, got a number`,
		},
		{
			name: "tools a mapping",
			data: "---\nname: a\ntools: {read: true}\n---\n",
			want: `a.md:3: front matter: tools: expected a list of tool names or a comma-separated string, got a mapping`,
		},
		{
			name: "tools with a non-string item",
			data: "---\nname: a\ntools: [Read, 3]\n---\n",
			want: `a.md:3: front matter: tools: item 1: expected a string, got a number`,
		},
		{
			name: "YAML error at its line in the file",
			data: "---\nname: a\ndescription: d\ntools: [Read\n---\n",
			want: `a.md:4: front matter: invalid YAML: did not find expected ',' or ']'`,
		},
		{
			name: "YAML error: a colon in an unquoted value",
			data: "---\nname: a\ndescription: Use when: always\n---\n",
			want: `a.md:3: front matter: invalid YAML: mapping values are not allowed in this context`,
		},
		{
			name: "front matter not a mapping",
			data: "---\n- a\n---\n",
			want: `a.md:2: front matter: document: front matter must be a mapping of keys (name, description, ...), got a list`,
		},
		{
			name: "duplicate key",
			data: "---\nname: a\nname: b\n---\n",
			want: `a.md:3: front matter: name: duplicate key (first defined at line 2)`,
		},
		{
			name: "invalid UTF-8 in the body",
			data: "---\nname: a\n---\nline\nbad \xff\n",
			want: `a.md:5: role body is not valid UTF-8`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := workflow.ParseDefinition("a.md", []byte(tt.data))
			if err == nil {
				t.Fatalf("ParseDefinition = %#v, want an error", d)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got %s\nwant %s", err, tt.want)
			}
			var e *workflow.Error
			if !errors.As(err, &e) || e.File != "a.md" {
				t.Errorf("error %v is no *workflow.Error for a.md", err)
			}
		})
	}
}

// TestClaudeCodeDefinition: a subagent file as Claude Code writes it, with
// keys pactum does not use, loads unchanged.
func TestClaudeCodeDefinition(t *testing.T) {
	t.Parallel()
	const file = `---
name: test-runner
description: Use proactively to run tests and fix failures. Invoke after code changes.
tools: Read, Edit, Bash, Grep, Glob
model: haiku
color: blue
permissionMode: acceptEdits
---

You are a test automation expert. When you see code changes, run the
appropriate tests. If tests fail, analyze the failures and fix them while
preserving the original test intent.
`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "test-runner.md"), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	defs, err := workflow.Load(dir)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	d, err := defs.Resolve("test-runner")
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	want := &workflow.Definition{
		Name:        "test-runner",
		Description: "Use proactively to run tests and fix failures. Invoke after code changes.",
		Tools:       []string{"Read", "Edit", "Bash", "Grep", "Glob"},
		Model:       "haiku",
		Body: "You are a test automation expert. When you see code changes, run the\n" +
			"appropriate tests. If tests fail, analyze the failures and fix them while\n" +
			"preserving the original test intent.",
		Metadata: map[string]any{"color": "blue", "permissionMode": "acceptEdits"},
		File:     filepath.Join(dir, "test-runner.md"),
		Line:     2,
	}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("got  %#v\nwant %#v", d, want)
	}
}

func FuzzParseDefinition(f *testing.F) {
	for _, s := range []string{
		"---\nname: planner\ntools: Read, Grep\n---\nbody\n",
		"---\nname: x\ntools: [a, b]\ncolor: blue\nhooks: {a: [1, 2.5, true, null]}\n---\n",
		"---\r\nname: x\r\n---\r\n",
		"---\n- a\n---\n",
		"---\na: &x [*x]\n---\n",
		"---\nname: a\ntools: [Read\n---\n",
		"---\n",
		"no front matter",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := workflow.ParseDefinition("f.md", data)
		if (d == nil) == (err == nil) {
			t.Fatalf("ParseDefinition = %v, %v: want exactly one", d, err)
		}
		if err != nil {
			var e *workflow.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is no *workflow.Error", err)
			}
			return
		}
		if d.Name == "" || d.File != "f.md" || d.Line < 2 {
			t.Fatalf("definition %#v", d)
		}
	})
}
