package config_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoProjectImports: package config parses files and nothing else; it
// imports no other pactum package (in particular not agent, whose runtimes
// are built and checked by internal/node), so that parsing a file can
// never build, register or open anything. The one exception is
// internal/yamlnode, a leaf that imports only the standard library and
// go-yaml: the YAML walking config shares with package contract.
func TestNoProjectImports(t *testing.T) {
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
			if strings.HasPrefix(path, "github.com/pactum/pactum") && path != "github.com/pactum/pactum/internal/yamlnode" {
				t.Errorf("%s imports %s", fset.Position(imp.Pos()), path)
			}
		}
	}
}
