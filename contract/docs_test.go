package contract_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocExample: docs/contracts.md shows examples/contract.yaml as it is
// (TestContractCheckExample in internal/cli keeps the file valid).
func TestDocExample(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "contracts.md"))
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile(filepath.Join("..", "examples", "contract.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```yaml\n"+string(example)+"```\n") {
		t.Fatal("docs/contracts.md does not show examples/contract.yaml verbatim in a yaml block")
	}
}
