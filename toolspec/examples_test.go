package toolspec

import (
	"os"
	"path/filepath"
	"testing"
)

// TestExampleToolSpecs: examples/toolspecs.yaml parses and every
// ToolSpec in it holds against the default catalogue.
func TestExampleToolSpecs(t *testing.T) {
	t.Parallel()
	file := filepath.Join("..", "examples", "toolspecs.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	tss, err := ParseToolSpecs(file, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(tss) < 5 {
		t.Fatalf("%d ToolSpecs, want a few", len(tss))
	}
	s := NewSet(defaultRegistry(t))
	for _, ts := range tss {
		if vs := s.Put(ts); vs != nil {
			t.Errorf("%s: %v", ts.ToolID, Violations(vs))
		}
	}
}
