package builtin_test

import (
	"slices"
	"testing"

	"github.com/pactum/pactum/agent"
	_ "github.com/pactum/pactum/agent/builtin"
)

func TestRegistersBuiltinTypes(t *testing.T) {
	types := agent.Types()
	for _, typ := range []string{"a2a", "echo", "exec", "mcp", "openai", "python", "webhook"} {
		if !slices.Contains(types, typ) {
			t.Errorf("type %q is not registered (have %v)", typ, types)
		}
	}
}
