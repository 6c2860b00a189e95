package task

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// TestEveryCodeIsClassified reads the Code constants declared in this
// package and checks that each has an exposure decided in exposed, so a new
// code cannot reach callers of any transport unconsidered.
func TestEveryCodeIsClassified(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var codes []Code
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Code" {
				continue
			}
			for _, v := range vs.Values {
				codes = append(codes, Code(strings.Trim(v.(*ast.BasicLit).Value, `"`)))
			}
		}
	}
	if len(codes) < 10 {
		t.Fatalf("found only %d codes in errors.go: %v", len(codes), codes)
	}
	for _, c := range codes {
		if _, ok := exposed[c]; !ok {
			t.Errorf("code %q has no exposure decided", c)
		}
	}
	if len(exposed) != len(codes) {
		t.Errorf("exposed has %d entries, errors.go declares %d codes", len(exposed), len(codes))
	}
	for _, c := range []Code{CodeAgentFailed, CodeGateBlocked, CodeLeaseExpired, CodeInternal, "no_such_code"} {
		if c.Exposed() {
			t.Errorf("%q.Exposed() = true, want hidden", c)
		}
	}
}
