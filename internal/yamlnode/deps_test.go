package yamlnode_test

import (
	"testing"

	"github.com/pactum/pactum/internal/importcheck"
)

// TestLeaf: package yamlnode imports only the standard library and
// go-yaml, so that package config, which imports no other pactum package
// so that parsing never builds anything, may import it.
func TestLeaf(t *testing.T) {
	t.Parallel()
	importcheck.Only(t, ".", "yamlnode", func(path string) bool { return path == "go.yaml.in/yaml/v3" })
}
