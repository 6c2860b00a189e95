package config_test

import (
	"strings"
	"testing"

	"github.com/pactum/pactum/config"
)

func TestToolSpecKeys(t *testing.T) {
	t.Parallel()
	doc := `agents:
  - name: a
    type: echo
    toolspec: search
toolspecs:
  - tool_id: search
    execution_mode: remote
    adapter_id: meilisearch
    adapter_operation: search
adapters:
  - adapters/mine.yaml
`
	c, err := config.Parse([]byte(doc), "/etc/pactum/p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.ToolSpecs) != 1 || c.ToolSpecs[0].ID != "search" || c.Agents[0].ToolSpec != "search" {
		t.Fatalf("toolspecs %+v, agent toolspec %q", c.ToolSpecs, c.Agents[0].ToolSpec)
	}
	if p, _ := c.AdapterPath(0, ""); p != "/etc/pactum/adapters/mine.yaml" {
		t.Fatalf("adapter path %q", p)
	}
	src := c.ToolSpecSource(0)
	if e := src.Error("adapter_operation", "boom", nil); e.Line != 9 || e.Path != "toolspecs[0].adapter_operation" {
		t.Fatalf("placed at %d %s", e.Line, e.Path)
	}
	var v struct {
		ToolID string `yaml:"tool_id"`
	}
	if err := src.Decode(&v); err == nil || !strings.Contains(err.Error(), "execution_mode") {
		t.Fatalf("strict decode: %v", err)
	}
}

func TestToolSpecErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, yaml, want string }{
		{"unknown id", "agents:\n  - name: a\n    type: echo\n    toolspec: nope\ntoolspecs:\n  - tool_id: search\n", `p.yaml:4:15: agents[0].toolspec: unknown toolspec "nope" (toolspecs: search)`},
		{"no list", "agents:\n  - name: a\n    type: echo\n    toolspec: nope\n", `p.yaml:4:15: agents[0].toolspec: unknown toolspec "nope": the configuration has no toolspecs: list`},
		{"duplicate", "agents:\n  - name: a\n    type: echo\ntoolspecs:\n  - tool_id: s\n  - tool_id: s\n", `p.yaml:6:14: toolspecs[1].tool_id: duplicate tool_id "s" (first used at line 5)`},
		{"no id", "agents:\n  - name: a\n    type: echo\ntoolspecs:\n  - execution_mode: local\n", `toolspecs[0].tool_id: required`},
		{"scalar", "agents:\n  - name: a\n    type: echo\ntoolspecs:\n  - search\n", `toolspecs[0]: expected a ToolSpec mapping`},
		{"empty adapter", "agents:\n  - name: a\n    type: echo\nadapters:\n  - \"\"\n", `adapters[0]: must not be empty`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := config.Parse([]byte(tt.yaml), "p.yaml")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
