package yamlnode_test

import (
	"go/build"
	"strings"
	"testing"
)

// TestLeaf: package yamlnode imports only the standard library and
// go-yaml, so that package config, which imports no other pactum package
// so that parsing never builds anything, may import it.
func TestLeaf(t *testing.T) {
	t.Parallel()
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range pkg.Imports {
		first, _, _ := strings.Cut(path, "/")
		if path != "go.yaml.in/yaml/v3" && strings.Contains(first, ".") {
			t.Errorf("yamlnode imports %s", path)
		}
	}
}
