package python_test

import (
	"testing"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/node"
)

// TestConfigErrorsAtFileLine: a python agent's settings errors point at
// the file, line and field path, like every runtime's.
func TestConfigErrorsAtFileLine(t *testing.T) {
	t.Parallel()
	tests := []struct{ yaml, want string }{
		{"agents:\n  - name: a\n    type: python\n    python:\n      object: m:x\n      framework: autogen\n",
			`pactum.yaml:6:18: agents[0].python.framework: "autogen" is not one of auto, langgraph, langchain, crewai, callable`},
		{"agents:\n  - name: a\n    type: python\n    python:\n      object: my-agents\n",
			`pactum.yaml:5:15: agents[0].python.object: "my-agents" is not package.module:attr (e.g. myagents.graph:app)`},
		{"agents:\n  - name: a\n    type: python\n    python:\n      object: m:x\n      pyhton: .venv/bin/python\n",
			`pactum.yaml:6:7: agents[0].python.pyhton: unknown field "pyhton" (did you mean "python"?)`},
		{"agents:\n  - name: a\n    type: python\n    python:\n      python: python3.12\n",
			`pactum.yaml:4:5: agents[0].python: agent "a" (python): object: required: what to run, as package.module:attr (e.g. myagents.graph:app)`},
	}
	for _, tt := range tests {
		c, err := config.Parse([]byte(tt.yaml), "pactum.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if err := node.Check(t.Context(), c, ""); err == nil || err.Error() != tt.want {
			t.Errorf("Check = %v\nwant %s", err, tt.want)
		}
	}
}
