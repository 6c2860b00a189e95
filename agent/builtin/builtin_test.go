package builtin_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/pactum/pactum/agent"
	_ "github.com/pactum/pactum/agent/builtin"
	"github.com/pactum/pactum/config"
)

func TestRegistersBuiltinTypes(t *testing.T) {
	types := agent.Types()
	for _, typ := range []string{"a2a", "crewai", "echo", "exec", "langgraph", "mcp", "openai", "python", "webhook"} {
		if !slices.Contains(types, typ) {
			t.Errorf("type %q is not registered (have %v)", typ, types)
		}
	}
}

// Every built-in runtime type is one configuration knows (config's
// knownTypes): its settings key under an agent of another type is
// reported as settings for the wrong type, not as an unknown field. A new
// runtime that is registered here but not listed there fails this test.
func TestConfigKnowsEveryBuiltinType(t *testing.T) {
	for _, typ := range agent.Types() {
		other := "echo"
		if typ == other {
			other = "exec"
		}
		yaml := "agents:\n  - name: a\n    type: " + other + "\n    " + typ + ":\n      x: 1\n"
		_, err := config.Parse([]byte(yaml), "pactum.yaml")
		want := `settings for runtime type "` + typ + `"`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: settings under a %s agent: err = %v, want one saying %s", typ, other, err, want)
		}
	}
}
