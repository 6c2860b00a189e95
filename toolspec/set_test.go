package toolspec

import (
	"slices"
	"sync"
	"testing"
)

var (
	vectorSearch = ToolSpec{ToolID: "vector-search", ExecutionMode: Remote, AdapterID: "qdrant-vector", AdapterOperation: "search", AdapterContractVersion: "1.0.0"}
	upsertDocs   = ToolSpec{ToolID: "upsert-docs", ExecutionMode: Remote, AdapterID: "qdrant-vector", AdapterOperation: "upsert"}
	siteSearch   = ToolSpec{ToolID: "site-search", ExecutionMode: Remote, AdapterID: "meilisearch", AdapterOperation: "search"}
	formatDate   = ToolSpec{ToolID: "format-date", ExecutionMode: Local}
)

func newSet(t *testing.T) *Set {
	t.Helper()
	s := NewSet(defaultRegistry(t))
	for _, ts := range []ToolSpec{vectorSearch, upsertDocs, siteSearch, formatDate} {
		if vs := s.Put(ts); vs != nil {
			t.Fatalf("Put(%s): %v", ts.ToolID, Violations(vs))
		}
	}
	return s
}

func assertions(vs []Violation) []Assertion {
	var out []Assertion
	for _, v := range vs {
		out = append(out, v.Assertion)
	}
	return out
}

// TestSetPut: "IF ToolSpec IS REGISTERED → MAPPING IS VALIDATED; IF
// ToolSpec MODIFIED → MAPPING IS RE-VALIDATED"; a ToolSpec that fails is
// rejected ("ToolSpec cannot be registered if validation fails").
func TestSetPut(t *testing.T) {
	t.Parallel()
	s := newSet(t)
	bad := vectorSearch
	bad.AdapterOperation = "drop_all_collections"
	vs := s.Put(bad)
	if !slices.Equal(assertions(vs), []Assertion{OperationExists}) {
		t.Fatalf("Put(drop_all_collections) = %v", Violations(vs))
	}
	if got, _ := s.Get("vector-search"); got.AdapterOperation != "search" {
		t.Errorf("a rejected modification replaced the registered ToolSpec: %+v", got)
	}
	fresh := bad
	fresh.ToolID = "new-tool"
	if vs := s.Put(fresh); vs == nil {
		t.Error("an invalid new ToolSpec was registered")
	}
	if _, ok := s.Get("new-tool"); ok {
		t.Error("an invalid new ToolSpec was registered")
	}
	mod := vectorSearch
	mod.AdapterOperation = "upsert"
	if vs := s.Put(mod); vs != nil {
		t.Fatalf("Put(modified) = %v", Violations(vs))
	}
	if got, _ := s.Get("vector-search"); got.AdapterOperation != "upsert" {
		t.Errorf("Get = %+v", got)
	}
	s.Remove("vector-search")
	if _, ok := s.Get("vector-search"); ok {
		t.Error("Remove left the ToolSpec")
	}
}

// TestSetReplace: "IF ADAPTER CONTRACT CHANGES → ALL TOOLSPECS MUST
// RE-VALIDATE": replacing the registry re-checks every ToolSpec of a
// changed adapter, and only those.
func TestSetReplace(t *testing.T) {
	t.Parallel()
	s := newSet(t)
	def := s.Registry()

	// The seed's assertion 4 FAIL: qdrant-vector 2.0.0 removes search.
	got := s.Replace(qdrantV2Registry(t))
	if len(got) != 2 {
		t.Fatalf("re-checked %v, want the two qdrant-vector ToolSpecs", got)
	}
	if a := assertions(got["vector-search"]); !slices.Equal(a, []Assertion{VersionCompatible, VersionCompatible}) {
		t.Errorf("vector-search: %v", Violations(got["vector-search"]))
	}
	if a := assertions(got["upsert-docs"]); !slices.Equal(a, []Assertion{VersionCompatible}) {
		t.Errorf("upsert-docs (1.0.0 by default, contract 2.0.0): %v", Violations(got["upsert-docs"]))
	}
	if _, ok := got["site-search"]; ok {
		t.Error("site-search re-checked though meilisearch did not change")
	}
	if vs := s.Violations("vector-search"); len(vs) != 2 {
		t.Errorf("Violations(vector-search) = %v", vs)
	}
	if inv := s.Invalid(); len(inv) != 2 {
		t.Errorf("Invalid = %v", inv)
	}
	// Still registered: they fail where they are used.
	if _, ok := s.Get("vector-search"); !ok {
		t.Error("Replace unregistered a ToolSpec")
	}

	// Back to the default: the same two are re-checked and hold again.
	got = s.Replace(def)
	if len(got) != 2 || got["vector-search"] == nil || len(got["vector-search"]) != 0 || len(got["upsert-docs"]) != 0 {
		t.Errorf("re-checked %v, want two empty lists", got)
	}
	if len(s.Invalid()) != 0 || s.Violations("vector-search") != nil {
		t.Errorf("Invalid after revert = %v", s.Invalid())
	}

	// An unchanged registry re-checks nothing.
	if got := s.Replace(defaultRegistry(t)); len(got) != 0 {
		t.Errorf("identical registry re-checked %v", got)
	}

	// A description change re-checks (the contract differs), and the
	// ToolSpecs still hold.
	c := Default()
	for i := range c.Adapters {
		if c.Adapters[i].AdapterID == "meilisearch" {
			op := c.Adapters[i].Operations["search"]
			op.Description = "Full-text search of a Meilisearch index."
			c.Adapters[i].Operations["search"] = op
		}
	}
	reg, err := NewRegistry(c)
	if err != nil {
		t.Fatal(err)
	}
	got = s.Replace(reg)
	if len(got) != 1 || got["site-search"] == nil || len(got["site-search"]) != 0 {
		t.Errorf("re-checked %v", got)
	}

	// "IF ADAPTER REMOVED → ALL TOOLSPECS USING IT MUST FAIL".
	c = Default()
	c.Adapters = slices.DeleteFunc(c.Adapters, func(a AdapterContract) bool { return a.AdapterID == "meilisearch" })
	reg, err = NewRegistry(c)
	if err != nil {
		t.Fatal(err)
	}
	got = s.Replace(reg)
	if len(got) != 1 || !slices.Equal(assertions(got["site-search"]), []Assertion{AdapterExists}) {
		t.Errorf("re-checked %v", got)
	}
}

// TestSetContractCheck: the hook of assertion 5 sees each changed
// contract (old and new), and its violations go to every ToolSpec of
// that adapter.
func TestSetContractCheck(t *testing.T) {
	t.Parallel()
	s := newSet(t)
	type call struct{ old, new string }
	var calls []call
	s.ContractCheck = func(old, new *AdapterContract) []Violation {
		c := call{}
		if old != nil {
			c.old = old.AdapterID + "@" + old.Version
		}
		if new != nil {
			c.new = new.AdapterID + "@" + new.Version
		}
		calls = append(calls, c)
		return []Violation{{Assertion: FrozenUnchanged, AdapterID: old.AdapterID, Field: "version",
			Msg: "frozen contract changed", Fix: "bump the version"}}
	}
	c := Default()
	for i := range c.Adapters {
		if c.Adapters[i].AdapterID == "qdrant-vector" {
			delete(c.Adapters[i].Operations, "health_check") // a breaking change without a bump
		}
	}
	reg, err := NewRegistry(c)
	if err != nil {
		t.Fatal(err)
	}
	got := s.Replace(reg)
	if !slices.Equal(calls, []call{{"qdrant-vector@1.0.0", "qdrant-vector@1.0.0"}}) {
		t.Errorf("ContractCheck calls = %v", calls)
	}
	for _, id := range []string{"vector-search", "upsert-docs"} {
		vs := got[id]
		if len(vs) != 1 || vs[0].Assertion != FrozenUnchanged || vs[0].ToolID != id || vs[0].AdapterID != "qdrant-vector" {
			t.Errorf("%s: %v", id, vs)
		}
	}
	if len(got) != 2 {
		t.Errorf("re-checked %v", got)
	}
}

// TestSetConcurrent: Put, Replace and reads may run at once (-race).
func TestSetConcurrent(t *testing.T) {
	t.Parallel()
	s := newSet(t)
	regs := []*Registry{defaultRegistry(t), qdrantV2Registry(t)}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for j := range 50 {
				switch (i + j) % 4 {
				case 0:
					s.Replace(regs[j%2])
				case 1:
					s.Put(siteSearch)
				case 2:
					s.Violations("vector-search")
				case 3:
					s.Invalid()
				}
			}
		})
	}
	wg.Wait()
}
