package yamlnode_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLeaf: package yamlnode imports only the standard library and
// go-yaml, so that package config, which imports no other pactum package
// so that parsing never builds anything, may import it.
func TestLeaf(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(path, "/")
			if path != "go.yaml.in/yaml/v3" && strings.Contains(first, ".") {
				t.Errorf("%s imports %s", fset.Position(imp.Pos()), path)
			}
		}
	}
}
