package crewai_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/config"
)

// TestDocExample builds every agent of the crewai example in
// docs/runtimes.md, so the documented settings stay the runtime's.
func TestDocExample(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "runtimes.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## crewai\n")
	if !ok {
		t.Fatal("docs/runtimes.md has no crewai section")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	_, y, ok := strings.Cut(sec, "```yaml\n")
	if !ok {
		t.Fatal("the crewai section has no yaml example")
	}
	y, _, _ = strings.Cut(y, "```")
	y = strings.ReplaceAll(y, "CREWAI_TOKEN", tokenEnv)
	c, err := config.Parse([]byte(y), "runtimes.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Agents) == 0 {
		t.Fatal("no agents in the example")
	}
	for _, a := range c.Agents {
		ag, err := agent.New(t.Context(), agent.Spec(c.AgentSpec(a, "")))
		if err != nil {
			t.Errorf("agent %s: %v", a.Name, err)
			continue
		}
		_ = agent.Close(ag)
	}
}
