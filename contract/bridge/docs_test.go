package bridge_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pactum/pactum/internal/e2e/mdblock"
)

// TestDocs: docs/contracts.md ("The cross-protocol bridge") shows
// ExampleCall as it is in example_test.go (which go test runs), and the
// two files of examples/bridge verbatim (which internal/e2e/bridge
// serves).
func TestDocs(t *testing.T) {
	t.Parallel()
	read := func(p ...string) string {
		b, err := os.ReadFile(filepath.Join(p...))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	doc := read("..", "..", "docs", "contracts.md")
	shown, err := mdblock.Extract(doc, "<!-- bridge example: contract/bridge/example_test.go -->", "<!-- /bridge example -->", "go", "the bridge example's")
	if err != nil {
		t.Fatal(err)
	}
	src := read("example_test.go")
	start := strings.Index(src, "func ExampleCall() {")
	end := strings.Index(src[start:], "\n}\n")
	if start < 0 || end < 0 {
		t.Fatal("example_test.go has no ExampleCall")
	}
	if want := src[start : start+end+3]; shown != want {
		t.Fatalf("docs/contracts.md shows ExampleCall as\n%s\nexample_test.go has\n%s", shown, want)
	}
	for _, f := range []string{"add.yaml", "pactum.yaml"} {
		if !strings.Contains(doc, "```yaml\n"+read("..", "..", "examples", "bridge", f)+"```\n") {
			t.Errorf("docs/contracts.md does not show examples/bridge/%s verbatim in a yaml block", f)
		}
	}
}
