package toolspec_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/pactum/pactum/toolspec"
)

// TestCheckBumps: assertion 5 — missing bump, too small, frozen, draft,
// version down, malformed, removed.
func TestCheckBumps(t *testing.T) {
	t.Parallel()
	const removeOp = "      create_collection: {description: create a collection}\n"
	tests := []struct {
		name  string
		pairs []string
		// want: adapter and substrings of the message and fix; empty = no
		// violation.
		adapter  string
		msg, fix []string
	}{
		{name: "unchanged"},
		{name: "bump without change is fine", pairs: []string{"adapter_id: meilisearch\n    version: 1.0.0", "adapter_id: meilisearch\n    version: 1.1.0"}},
		{name: "breaking change with major bump", pairs: []string{removeOp, "", "adapter_id: qdrant-vector\n    version: 1.0.0", "adapter_id: qdrant-vector\n    version: 2.0.0"}},
		{name: "breaking change without bump", pairs: []string{removeOp, ""}, adapter: "qdrant-vector",
			msg: []string{"operation_removed", "needs a MAJOR bump", "1.0.0 → 1.0.0 (NONE)"}, fix: []string{"set version: 2.0.0"}},
		{name: "breaking change with minor bump", pairs: []string{removeOp, "", "adapter_id: qdrant-vector\n    version: 1.0.0", "adapter_id: qdrant-vector\n    version: 1.1.0"}, adapter: "qdrant-vector",
			msg: []string{"operation_removed", "MAJOR", "(MINOR)"}, fix: []string{"2.0.0"}},
		{name: "minor change with patch bump", pairs: []string{"      search: {description: full text search}\n", "      search: {description: full text search}\n      suggest: {}\n", "adapter_id: meilisearch\n    version: 1.0.0", "adapter_id: meilisearch\n    version: 1.0.1"},
			adapter: "meilisearch", msg: []string{"operation_added", "needs a MINOR bump"}, fix: []string{"set version: 1.1.0"}},
		{name: "minor change with major bump is fine", pairs: []string{"      search: {description: full text search}\n", "      search: {description: full text search}\n      suggest: {}\n", "adapter_id: meilisearch\n    version: 1.0.0", "adapter_id: meilisearch\n    version: 2.0.0"}},
		{name: "frozen description needs a patch", pairs: []string{"full text search", "full-text search"}, adapter: "meilisearch",
			msg: []string{"description_changed", "PATCH"}, fix: []string{"1.0.1"}},
		{name: "frozen to draft needs a patch", pairs: []string{"adapter_id: meilisearch\n    version: 1.0.0\n    status: frozen", "adapter_id: meilisearch\n    version: 1.0.0\n    status: draft"}, adapter: "meilisearch",
			msg: []string{"status_changed", "PATCH"}},
		{name: "draft may change freely", pairs: []string{"      anything: {}\n", "      other: {}\n"}},
		{name: "freezing a draft needs no bump", pairs: []string{"0.1.0\n    status: draft", "0.1.0\n    status: frozen"}},
		{name: "version down", pairs: []string{"adapter_id: meilisearch\n    version: 1.0.0", "adapter_id: meilisearch\n    version: 0.9.0"}, adapter: "meilisearch",
			msg: []string{"went down: 1.0.0 → 0.9.0"}, fix: []string{"above 1.0.0"}},
		{name: "draft version down", pairs: []string{"version: 0.1.0", "version: 0.0.1"}, adapter: "scratch", msg: []string{"went down"}},
		{name: "malformed new version", pairs: []string{"adapter_id: meilisearch\n    version: 1.0.0", "adapter_id: meilisearch\n    version: v1"}, adapter: "meilisearch",
			msg: []string{`version "v1"`, "MAJOR.MINOR.PATCH"}},
		{name: "malformed added adapter", pairs: []string{"adapters:\n", "adapters:\n  - {adapter_id: loki, version: \"1.0\", status: frozen}\n"}, adapter: "loki",
			msg: []string{`version "1.0"`}},
		{name: "frozen adapter removed", pairs: []string{"  - adapter_id: meilisearch\n    version: 1.0.0\n    status: frozen\n    operations:\n      search: {description: full text search}\n", ""}, adapter: "meilisearch",
			msg: []string{"removed", "adapter_removed"}, fix: []string{"status: draft"}},
		{name: "draft adapter removed", pairs: []string{"  - adapter_id: scratch\n    version: 0.1.0\n    status: draft\n    operations:\n      anything: {}\n", ""}},
	}
	old := parseCat(t, seedCatalogue)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := toolspec.CheckBumps(old, edit(t, tc.pairs...))
			if tc.adapter == "" {
				if len(got) != 0 {
					t.Fatalf("violations %+v, want none", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("violations %+v, want one", got)
			}
			v := got[0]
			if v.Assertion != toolspec.FrozenUnchanged || v.AdapterID != tc.adapter || v.Fix == "" {
				t.Fatalf("violation %+v, want assertion 5 on %s with a fix", v, tc.adapter)
			}
			for _, s := range tc.msg {
				if !strings.Contains(v.Msg, s) {
					t.Errorf("message %q lacks %q", v.Msg, s)
				}
			}
			for _, s := range tc.fix {
				if !strings.Contains(v.Fix, s) {
					t.Errorf("fix %q lacks %q", v.Fix, s)
				}
			}
		})
	}
}

// TestLockRoundTrip: a lock encodes, decodes to the same lock, and its
// contracts classify as unchanged against the catalogue it was made of.
func TestLockRoundTrip(t *testing.T) {
	t.Parallel()
	cat := parseCat(t, seedCatalogue)
	l, err := toolspec.NewLock(cat)
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	l2, err := toolspec.DecodeLock(b)
	if err != nil {
		t.Fatalf("decode: %v\n%s", err, b)
	}
	b2, err := l2.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(b2) {
		t.Fatalf("re-encoded lock differs:\n%s\n%s", b, b2)
	}
	back, err := l2.Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	if ch := toolspec.Classify(cat, back); len(ch) != 0 {
		t.Fatalf("lock's catalogue differs: %v", ch)
	}
	if d, err := l2.Drifted(cat); err != nil || len(d) != 0 {
		t.Fatalf("drifted %v, %v", d, err)
	}
	if e := l2.Adapters["qdrant-vector"]; e.Version != "1.0.0" || len(e.SHA256) != 64 {
		t.Fatalf("entry %+v", e)
	}
	changed := edit(t, "full text search", "full-text search")
	if d, err := l2.Drifted(changed); err != nil || !reflect.DeepEqual(d, []string{"meilisearch"}) {
		t.Fatalf("drifted %v, %v; want meilisearch", d, err)
	}
}

// TestHashStable: the hash is of the canonical form, so key order,
// whitespace, number spelling and the decoder do not change it; any
// content change does.
func TestHashStable(t *testing.T) {
	t.Parallel()
	var a, b, c toolspec.AdapterContract
	for _, x := range []struct {
		s   string
		dst *toolspec.AdapterContract
	}{
		{`{"adapter_id":"x","version":"1.0.0","status":"frozen","operations":{"op":{"input_schema":{"type":"object","properties":{"n":{"type":"integer","maximum":10}},"required":["n"]}}}}`, &a},
		{`{"operations":{"op":{"input_schema":{"required":["n"],"properties":{"n":{"maximum":1e1,"type":"integer"}},"type":"object"}}},
		   "status":"frozen","version":"1.0.0","adapter_id":"x"}`, &b},
		{`{"adapter_id":"x","version":"1.0.0","status":"frozen","operations":{"op":{"input_schema":{"type":"object","properties":{"n":{"type":"integer","maximum":11}},"required":["n"]}}}}`, &c},
	} {
		if err := json.Unmarshal([]byte(x.s), x.dst); err != nil {
			t.Fatal(err)
		}
	}
	y := parseCat(t, `adapters:
  - operations: {op: {input_schema: {required: [n], type: object, properties: {n: {maximum: 10, type: integer}}}}}
    adapter_id: x
    status: frozen
    version: 1.0.0
`).Adapters[0]
	ha, _ := toolspec.Hash(a)
	hb, _ := toolspec.Hash(b)
	hy, err := toolspec.Hash(y)
	if err != nil {
		t.Fatal(err)
	}
	hc, _ := toolspec.Hash(c)
	if ha != hb || ha != hy {
		t.Fatalf("same contract, different hashes: %s %s %s", ha, hb, hy)
	}
	if ha == hc {
		t.Fatal("different contracts, same hash")
	}
	canon, _ := toolspec.Canonical(a)
	want := `{"adapter_id":"x","operations":{"op":{"input_schema":{"properties":{"n":{"maximum":10,"type":"integer"}},"required":["n"],"type":"object"}}},"status":"frozen","version":"1.0.0"}`
	if string(canon) != want {
		t.Fatalf("canonical\n%s\nwant\n%s", canon, want)
	}
	// No operations and empty operations are the same contract.
	e1, _ := toolspec.Hash(toolspec.AdapterContract{AdapterID: "e", Version: "1.0.0"})
	e2, _ := toolspec.Hash(toolspec.AdapterContract{AdapterID: "e", Version: "1.0.0", Operations: map[string]toolspec.Operation{}})
	if e1 != e2 {
		t.Fatal("nil and empty operations hash differently")
	}
}

// TestDecodeLockRefuses: malformed or inconsistent locks are errors
// wrapping ErrLock.
func TestDecodeLockRefuses(t *testing.T) {
	t.Parallel()
	l, err := toolspec.NewLock(parseCat(t, seedCatalogue))
	if err != nil {
		t.Fatal(err)
	}
	good, _ := l.Marshal()
	tampered := strings.Replace(string(good), "full text search", "full-text search", 1)
	wrongVersion := strings.Replace(string(good), `"version": "0.1.0"`, `"version": "0.2.0"`, 1)
	tests := map[string]string{
		"empty":           ``,
		"not json":        `adapters:`,
		"format version":  `{"version": 2, "adapters": {}}`,
		"no adapters":     `{"version": 1}`,
		"unknown field":   `{"version": 1, "adapters": {}, "extra": true}`,
		"trailing data":   `{"version": 1, "adapters": {}} {}`,
		"tampered":        tampered,
		"version differs": wrongVersion,
		"misfiled":        `{"version": 1, "adapters": {"a": {"version": "1.0.0", "sha256": "", "contract": {"adapter_id": "b", "version": "1.0.0", "status": "draft", "operations": {}}}}}`,
		"null contract":   `{"version": 1, "adapters": {"a": {"version": "", "sha256": "", "contract": null}}}`,
	}
	for name, data := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := toolspec.DecodeLock([]byte(data)); !errors.Is(err, toolspec.ErrLock) {
				t.Fatalf("err %v, want ErrLock", err)
			}
		})
	}
	if _, err := toolspec.NewLock(rawCat(t, "adapters: [{adapter_id: a, version: 1.0.0}, {adapter_id: a, version: 1.0.0}]")); !errors.Is(err, toolspec.ErrLock) {
		t.Fatalf("duplicate adapter: %v", err)
	}
	empty, err := toolspec.DecodeLock([]byte(`{"version": 1, "adapters": {}}`))
	if err != nil || len(empty.Adapters) != 0 {
		t.Fatalf("empty lock: %v", err)
	}
}

// FuzzDecodeLock: the lock decoder never panics, and whatever it accepts
// re-encodes to a lock it accepts again with the same contracts.
func FuzzDecodeLock(f *testing.F) {
	l, err := toolspec.NewLock(parseCat(f, seedCatalogue))
	if err != nil {
		f.Fatal(err)
	}
	good, _ := l.Marshal()
	f.Add(good)
	f.Add([]byte(`{"version": 1, "adapters": {}}`))
	f.Add([]byte(`{"version": 1, "adapters": {"a": {"version": "1.0.0", "sha256": "00", "contract": {"adapter_id": "a"}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := toolspec.DecodeLock(data)
		if err != nil {
			if !errors.Is(err, toolspec.ErrLock) {
				t.Fatalf("error %v does not wrap ErrLock", err)
			}
			return
		}
		cat, err := l.Catalogue()
		if err != nil {
			t.Fatalf("accepted lock's catalogue: %v", err)
		}
		l2, err := toolspec.NewLock(cat)
		if err != nil {
			t.Fatalf("relock: %v", err)
		}
		if !reflect.DeepEqual(l.Adapters, l2.Adapters) {
			// Contracts may be indented differently; the hashes and
			// versions must agree.
			for id, e := range l.Adapters {
				if l2.Adapters[id].SHA256 != e.SHA256 || l2.Adapters[id].Version != e.Version {
					t.Fatalf("relocked %q differs: %+v vs %+v", id, e, l2.Adapters[id])
				}
			}
		}
		b, err := l2.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := toolspec.DecodeLock(b); err != nil {
			t.Fatalf("re-encoded lock refused: %v\n%s", err, b)
		}
	})
}

// TestCheckContractBumpInSet: CheckContractBump as a Set's ContractCheck
// gives the ToolSpecs of a frozen contract changed without its bump the
// violation of assertion 5, and none once the version is bumped.
func TestCheckContractBumpInSet(t *testing.T) {
	t.Parallel()
	reg, err := toolspec.NewRegistry(toolspec.Default())
	if err != nil {
		t.Fatal(err)
	}
	s := toolspec.NewSet(reg)
	s.ContractCheck = toolspec.CheckContractBump
	if vs := s.Put(toolspec.ToolSpec{ToolID: "vector-search", ExecutionMode: toolspec.Remote, AdapterID: "qdrant-vector",
		AdapterOperation: "search", AdapterContractVersion: "1.0.0"}); vs != nil {
		t.Fatalf("put: %v", vs)
	}
	changed := func(version string) *toolspec.Registry {
		c := toolspec.Default()
		for i := range c.Adapters {
			if c.Adapters[i].AdapterID == "qdrant-vector" {
				delete(c.Adapters[i].Operations, "health_check")
				c.Adapters[i].Version = version
			}
		}
		r, err := toolspec.NewRegistry(c)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	got := s.Replace(changed("1.0.0"))
	vs := got["vector-search"]
	if len(vs) != 1 || vs[0].Assertion != toolspec.FrozenUnchanged || vs[0].ToolID != "vector-search" ||
		!strings.Contains(vs[0].Msg, "operation_removed") || !strings.Contains(vs[0].Fix, "2.0.0") {
		t.Fatalf("unbumped: %v", got)
	}
	s2 := toolspec.NewSet(reg)
	s2.ContractCheck = toolspec.CheckContractBump
	if vs := s2.Put(toolspec.ToolSpec{ToolID: "vector-search", ExecutionMode: toolspec.Remote, AdapterID: "qdrant-vector",
		AdapterOperation: "search", AdapterContractVersion: "1.0.0"}); vs != nil {
		t.Fatalf("put: %v", vs)
	}
	// Bumped to 2.0.0: assertion 5 holds; the ToolSpec, written against
	// 1.0.0, now fails assertion 4 (another MAJOR), as the seed wants.
	got = s2.Replace(changed("2.0.0"))
	vs = got["vector-search"]
	if len(vs) != 1 || vs[0].Assertion != toolspec.VersionCompatible {
		t.Fatalf("bumped: %v", got)
	}
}
