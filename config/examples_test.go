package config_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pactum/pactum/config"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestExamples parses every examples/*.yaml and compares the result, with
// defaults applied and runtime settings decoded generically, with
// testdata/examples/NAME.json (go test ./config -run TestExamples -update
// rewrites them).
func TestExamples(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// examples/contract*.yaml are contracts and examples/toolspecs.yaml a
	// ToolSpecs file (package toolspec tests it), not configurations.
	files = slices.DeleteFunc(files, func(f string) bool {
		b := filepath.Base(f)
		return strings.HasPrefix(b, "contract") || b == "toolspecs.yaml"
	})
	if len(files) < 3 {
		t.Fatalf("found %d examples, want at least 3 (echo, exec, webhook)", len(files))
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := config.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			got := render(t, c)
			golden := filepath.Join("testdata", "examples", name+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s parses differently from %s (run with -update if intended):\n%s", file, golden, got)
			}
		})
	}
}

// render is a stable JSON view of c: the Config itself plus each agent's
// settings decoded into a generic value.
func render(t *testing.T, c *config.Config) []byte {
	t.Helper()
	settings := map[string]any{}
	for _, a := range c.Agents {
		var v map[string]any
		if err := c.AgentSpec(a, "").DecodeInto(&v); err != nil {
			t.Fatalf("decoding %s's settings: %v", a.Name, err)
		}
		if v != nil {
			settings[a.Name] = v
		}
	}
	out, err := json.MarshalIndent(struct {
		Config   *config.Config
		Settings map[string]any
	}{c, settings}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

// TestDocExamples parses every yaml block of docs/config.md.
func TestDocExamples(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "config.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(doc), "```yaml\n")[1:]
	if len(blocks) < 2 {
		t.Fatalf("found %d yaml blocks, want at least 2", len(blocks))
	}
	for i, b := range blocks {
		b, _, _ = strings.Cut(b, "```")
		if _, err := config.Parse([]byte(b), "config.md block "+string(rune('1'+i))); err != nil {
			t.Errorf("%v\n%s", err, b)
		}
	}
}
