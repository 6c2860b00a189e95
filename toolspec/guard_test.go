package toolspec_test

import (
	"strings"
	"testing"

	"github.com/pactum/pactum/toolspec"
)

// TestBumpGuard: across reloads, a frozen contract changed without a bump
// fails its ToolSpecs with assertion 5; undoing the change repairs them;
// a properly bumped change is accepted and becomes the reference.
func TestBumpGuard(t *testing.T) {
	t.Parallel()
	wiki := func(version string, ops ...string) *toolspec.Registry {
		t.Helper()
		c := toolspec.AdapterContract{AdapterID: "wiki", Version: version, Status: toolspec.Frozen, Operations: map[string]toolspec.Operation{}}
		for _, op := range ops {
			c.Operations[op] = toolspec.Operation{}
		}
		reg, err := toolspec.NewRegistry(&toolspec.Catalogue{Adapters: []toolspec.AdapterContract{c}})
		if err != nil {
			t.Fatal(err)
		}
		return reg
	}
	ts := toolspec.ToolSpec{ToolID: "look", ExecutionMode: toolspec.Remote, AdapterID: "wiki", AdapterOperation: "lookup"}
	other := toolspec.ToolSpec{ToolID: "vs", ExecutionMode: toolspec.Remote, AdapterID: "qdrant-vector", AdapterOperation: "search"}
	g := toolspec.NewBumpGuard(toolspec.CheckContractBump)
	if vs := g.Admit(wiki("1.0.0", "lookup", "edit")).Check(ts); len(vs) != 0 {
		t.Fatalf("first: %+v", vs)
	}
	// An operation removed without a bump.
	vs := g.Admit(wiki("1.0.0", "lookup")).Check(ts)
	if len(vs) != 1 || vs[0].Assertion != toolspec.FrozenUnchanged || vs[0].ToolID != "look" || !strings.Contains(vs[0].Error(), "needs a MAJOR bump") {
		t.Fatalf("unbumped: %+v", vs)
	}
	// Undone: fine again.
	if vs := g.Admit(wiki("1.0.0", "lookup", "edit")).Check(ts); len(vs) != 0 {
		t.Fatalf("undone: %+v", vs)
	}
	// Bumped: accepted, and the reference from now on.
	if vs := g.Admit(wiki("1.1.0", "lookup", "edit", "list")).Check(ts); len(vs) != 0 {
		t.Fatalf("bumped: %+v", vs)
	}
	if vs := g.Admit(wiki("1.1.0", "lookup", "edit", "list")).Check(ts); len(vs) != 0 {
		t.Fatalf("after the bump: %+v", vs)
	}
	vs = g.Admit(wiki("1.1.0", "lookup", "edit", "list", "move")).Check(ts)
	if len(vs) != 1 || !strings.Contains(vs[0].Error(), "needs a MINOR bump") {
		t.Fatalf("added without a bump: %+v", vs)
	}
	// Another adapter's ToolSpec is not affected (its adapter is not in
	// this registry: assertion 2 only).
	if vs := g.Admit(wiki("1.1.0", "lookup", "edit", "list", "move")).Check(other); len(vs) != 1 || vs[0].Assertion != toolspec.AdapterExists {
		t.Fatalf("other: %+v", vs)
	}
}
