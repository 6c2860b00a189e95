package toolspec

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// defaultRegistry is the registry of the built-in catalogue.
func defaultRegistry(t *testing.T) *Registry {
	t.Helper()
	r, err := NewRegistry(Default())
	if err != nil {
		t.Fatalf("NewRegistry(Default()): %v", err)
	}
	return r
}

// qdrantV2Registry is the default catalogue with qdrant-vector at 2.0.0
// and its "search" operation removed: the context of the seed's
// assertion 4 FAIL example ("Contract: 2.0.0 (breaking change - 'search'
// operation removed)").
func qdrantV2Registry(t *testing.T) *Registry {
	t.Helper()
	c := Default()
	for i := range c.Adapters {
		if c.Adapters[i].AdapterID == "qdrant-vector" {
			c.Adapters[i].Version = "2.0.0"
			delete(c.Adapters[i].Operations, "search")
		}
	}
	r, err := NewRegistry(c)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// withVersion is the default catalogue with adapter id at version v and
// its operations unchanged.
func withVersion(t *testing.T, id, v string) *Registry {
	t.Helper()
	c := Default()
	for i := range c.Adapters {
		if c.Adapters[i].AdapterID == id {
			c.Adapters[i].Version = v
		}
	}
	r, err := NewRegistry(c)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// want is the assertion and field of one expected violation.
type want struct {
	a     Assertion
	field string
}

// TestSeedExamples has every PASS and FAIL example of the seed
// adapter-contract-assertions.md as a case: the ToolSpec is the seed's
// JSON (without its // comments). The seed's fragments for assertions 2
// to 4 have no execution_mode; the cases add "execution_mode": "remote"
// (and a tool_id), which those assertions presuppose.
func TestSeedExamples(t *testing.T) {
	t.Parallel()
	def := defaultRegistry(t)
	v2 := qdrantV2Registry(t)
	cases := []struct {
		name string
		reg  *Registry
		json string
		want []want
	}{
		// Assertion 1: Required adapter_id Invariant.
		{
			name: `assertion 1 PASS: "adapter_id": "qdrant-vector"  // ← Valid adapter_id`,
			reg:  def,
			json: `{"tool_id": "vector-search", "execution_mode": "remote", "adapter_id": "qdrant-vector", "adapter_operation": "search"}`,
		},
		{
			name: `assertion 1 FAIL: // adapter_id is MISSING  // ← VIOLATION`,
			reg:  def,
			json: `{"tool_id": "vector-search", "execution_mode": "remote", "adapter_operation": "search"}`,
			want: []want{{AdapterIDRequired, "adapter_id"}},
		},
		{
			name: `assertion 1 logic: IF execution_mode = "remote" AND adapter_id DOES NOT MATCH PATTERN → FAIL`,
			reg:  def,
			json: `{"tool_id": "vector-search", "execution_mode": "remote", "adapter_id": "Qdrant_Vector", "adapter_operation": "search"}`,
			want: []want{{AdapterIDRequired, "adapter_id"}},
		},
		{
			name: `assertion 1 logic: IF execution_mode = "local" AND adapter_id IS NOT NULL → FAIL (local tools have no adapters)`,
			reg:  def,
			json: `{"tool_id": "format-date", "execution_mode": "local", "adapter_id": "qdrant-vector"}`,
			want: []want{{AdapterIDRequired, "adapter_id"}},
		},
		{
			name: `assertion 1 logic: a local tool without adapter_id passes`,
			reg:  def,
			json: `{"tool_id": "format-date", "execution_mode": "local"}`,
		},
		// Assertion 2: Adapter Existence Invariant.
		{
			name: `assertion 2 PASS: "adapter_id": "qdrant-vector",  // ← Valid adapter`,
			reg:  def,
			json: `{"tool_id": "t", "execution_mode": "remote", "adapter_id": "qdrant-vector", "adapter_operation": "search"}`,
		},
		{
			name: `assertion 2 FAIL: "adapter_id": "invalid-adapter",  // ← Not in valid list`,
			reg:  def,
			json: `{"tool_id": "t", "execution_mode": "remote", "adapter_id": "invalid-adapter", "adapter_operation": "search"}`,
			want: []want{{AdapterExists, "adapter_id"}},
		},
		// Assertion 3: Adapter Operation Invariant.
		{
			name: `assertion 3 PASS: "adapter_operation": "search"  // ← Valid operation for qdrant-vector`,
			reg:  def,
			json: `{"tool_id": "t", "execution_mode": "remote", "adapter_id": "qdrant-vector", "adapter_operation": "search"}`,
		},
		{
			name: `assertion 3 FAIL: "adapter_operation": "drop_all_collections"  // ← Invalid operation`,
			reg:  def,
			json: `{"tool_id": "t", "execution_mode": "remote", "adapter_id": "qdrant-vector", "adapter_operation": "drop_all_collections"}`,
			want: []want{{OperationExists, "adapter_operation"}},
		},
		// Assertion 4: Contract Version Invariant.
		{
			name: `assertion 4 PASS (Version Compatible): // Contract: 1.0.0 "adapter_contract_version": "1.0.0"  // ← Explicit version`,
			reg:  def,
			json: `{"tool_id": "t", "execution_mode": "remote", "adapter_id": "qdrant-vector", "adapter_operation": "search", "adapter_contract_version": "1.0.0"}`,
		},
		{
			name: `assertion 4 FAIL (Version Incompatible): // Contract: 2.0.0 (breaking change - 'search' operation removed) "adapter_operation": "search",  // ← Operation removed in v2.0.0`,
			reg:  v2,
			json: `{"tool_id": "t", "execution_mode": "remote", "adapter_id": "qdrant-vector", "adapter_operation": "search", "adapter_contract_version": "1.0.0"}`,
			want: []want{{VersionCompatible, "adapter_contract_version"}, {VersionCompatible, "adapter_operation"}},
		},
		{
			name: `assertion 4 detection: const contractVersion = toolspec.adapter_contract_version || "1.0.0" (none given, contract 1.0.0)`,
			reg:  def,
			json: `{"tool_id": "t", "execution_mode": "remote", "adapter_id": "qdrant-vector", "adapter_operation": "search"}`,
		},
		{
			name: `assertion 4 detection: adapter_contract_version || "1.0.0" against a contract at 2.0.0 → Contract version mismatch`,
			reg:  withVersion(t, "qdrant-vector", "2.0.0"),
			json: `{"tool_id": "t", "execution_mode": "remote", "adapter_id": "qdrant-vector", "adapter_operation": "search"}`,
			want: []want{{VersionCompatible, "adapter_contract_version"}},
		},
		{
			name: `assertion 4 invariant: IF CONTRACT MINOR VERSION INCREASES → EXISTING TOOLSPECS STILL VALID`,
			reg:  withVersion(t, "qdrant-vector", "1.1.0"),
			json: `{"tool_id": "t", "execution_mode": "remote", "adapter_id": "qdrant-vector", "adapter_operation": "search", "adapter_contract_version": "1.0.0"}`,
		},
		{
			name: `assertion 4 invariant: IF CONTRACT MAJOR VERSION CHANGES → ALL TOOLSPECS MUST UPDATE (updated to 2.0.0 passes)`,
			reg:  withVersion(t, "qdrant-vector", "2.0.0"),
			json: `{"tool_id": "t", "execution_mode": "remote", "adapter_id": "qdrant-vector", "adapter_operation": "search", "adapter_contract_version": "2.0.0"}`,
		},
		{
			name: `assertion 4: a ToolSpec ahead of the contract (2.0.0 against 1.0.0) is a mismatch too`,
			reg:  def,
			json: `{"tool_id": "t", "execution_mode": "remote", "adapter_id": "qdrant-vector", "adapter_operation": "search", "adapter_contract_version": "2.0.0"}`,
			want: []want{{VersionCompatible, "adapter_contract_version"}},
		},
		{
			name: `assertion 4: adapter_contract_version that is no semver`,
			reg:  def,
			json: `{"tool_id": "t", "execution_mode": "remote", "adapter_id": "qdrant-vector", "adapter_operation": "search", "adapter_contract_version": "v1"}`,
			want: []want{{VersionCompatible, "adapter_contract_version"}},
		},
		// Assertion 6: ToolSpec → Adapter Mapping Invariant.
		{
			name: `assertion 6 PASS: // Result: ToolSpec registered successfully`,
			reg:  def,
			json: `{"tool_id": "vector-search", "execution_mode": "remote", "adapter_id": "qdrant-vector", "adapter_operation": "search", "adapter_contract_version": "1.0.0"}`,
		},
		{
			name: `assertion 6 FAIL: // ❌ operation "drop_all_collections" not in qdrant-vector interface // Result: ToolSpec rejected`,
			reg:  def,
			json: `{"tool_id": "vector-search", "execution_mode": "remote", "adapter_id": "qdrant-vector", "adapter_operation": "drop_all_collections", "adapter_contract_version": "1.0.0"}`,
			want: []want{{OperationExists, "adapter_operation"}},
		},
		{
			name: `assertion 6 detection Check 2: LOCAL tools must NOT have adapter_id`,
			reg:  def,
			json: `{"tool_id": "vector-search", "execution_mode": "local", "adapter_id": "qdrant-vector", "adapter_operation": "search"}`,
			want: []want{{AdapterIDRequired, "adapter_id"}},
		},
		{
			name: `remote ToolSpec without adapter_operation`,
			reg:  def,
			json: `{"tool_id": "t", "execution_mode": "remote", "adapter_id": "qdrant-vector"}`,
			want: []want{{OperationExists, "adapter_operation"}},
		},
		{
			name: `execution_mode neither remote nor local`,
			reg:  def,
			json: `{"tool_id": "t", "execution_mode": "hybrid", "adapter_id": "qdrant-vector", "adapter_operation": "search"}`,
			want: []want{{AdapterIDRequired, "execution_mode"}},
		},
		// The ToolSpec's own input schema against the operation's
		// (assertion 4: the operation's signature).
		{
			name: `signature: a ToolSpec whose inputs the operation accepts`,
			reg:  def,
			json: `{"tool_id": "t", "execution_mode": "remote", "adapter_id": "qdrant-vector", "adapter_operation": "search",
				"input_schema": {"type": "object", "properties": {"collection": {"type": "string"}, "vector": {"type": "array"}, "limit": {"type": "integer"}}, "required": ["collection", "vector"]}}`,
		},
		{
			name: `signature: a ToolSpec requiring an input the operation does not accept`,
			reg:  def,
			json: `{"tool_id": "t", "execution_mode": "remote", "adapter_id": "qdrant-vector", "adapter_operation": "search",
				"input_schema": {"type": "object", "properties": {"vector": {"type": "array"}, "filter": {"type": "object"}}, "required": ["vector", "filter"]}}`,
			want: []want{{VersionCompatible, "input_schema.required[1]"}},
		},
		{
			name: `signature: an input of a type the operation refuses`,
			reg:  def,
			json: `{"tool_id": "t", "execution_mode": "remote", "adapter_id": "qdrant-vector", "adapter_operation": "search",
				"input_schema": {"type": "object", "properties": {"limit": {"type": ["integer", "string"]}}}}`,
			want: []want{{VersionCompatible, "input_schema.properties.limit.type"}},
		},
		{
			name: `signature: integer fits number`,
			reg:  def,
			json: `{"tool_id": "t", "execution_mode": "remote", "adapter_id": "supabase-postgres", "adapter_operation": "vector_search",
				"input_schema": {"type": "object", "properties": {"match_count": {"type": "integer"}}}}`,
		},
		{
			name: `signature: an input schema that does not compile`,
			reg:  def,
			json: `{"tool_id": "t", "execution_mode": "remote", "adapter_id": "qdrant-vector", "adapter_operation": "search",
				"input_schema": {"type": "objekt"}}`,
			want: []want{{VersionCompatible, "input_schema"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var ts ToolSpec
			if err := json.Unmarshal([]byte(tc.json), &ts); err != nil {
				t.Fatal(err)
			}
			vs := tc.reg.Check(ts)
			var got []want
			for _, v := range vs {
				got = append(got, want{v.Assertion, v.Field})
				if v.ToolID != ts.ToolID || v.Msg == "" || v.Fix == "" {
					t.Errorf("violation %+v: want the ToolSpec, a message and a fix", v)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Check = %v\nviolations: %v", got, Violations(vs))
			}
		})
	}
}

// TestSeedAdapterList: "Valid Adapter IDs (from STEP 10)" and the
// seed's "Adapter Operation Mappings" are exactly the default catalogue,
// every contract "v1.0.0 (FROZEN)"; each adapter passes assertion 2
// and each operation assertion 3, and an operation of another adapter
// fails it.
func TestSeedAdapterList(t *testing.T) {
	t.Parallel()
	seed := map[string][]string{
		"supabase-postgres": {"query", "vector_search"},
		"qdrant-vector":     {"search", "upsert", "create_collection", "health_check"},
		"meilisearch":       {"search"},
		"cloudflare-r2":     {"put_object", "get_object"},
		"prometheus":        {"query_metrics"},
		"loki":              {"query_logs"},
		"grafana":           {"query_dashboard"},
		"livekit":           {"create_room", "join_room"},
	}
	reg := defaultRegistry(t)
	if got := reg.AdapterIDs(); len(got) != len(seed) {
		t.Fatalf("AdapterIDs = %v, want the seed's eight", got)
	}
	for id, ops := range seed {
		c, ok := reg.Lookup(id)
		if !ok {
			t.Fatalf("adapter %s missing", id)
		}
		if c.Version != "1.0.0" || c.Status != Frozen {
			t.Errorf("%s: version %s status %s, want 1.0.0 frozen", id, c.Version, c.Status)
		}
		got := sortedKeys(c.Operations)
		want := slices.Sorted(slices.Values(ops))
		if !slices.Equal(got, want) {
			t.Errorf("%s operations = %v, want %v", id, got, want)
		}
		for _, op := range ops {
			o := c.Operations[op]
			if o.Description == "" || o.InputSchema == nil || o.OutputSchema == nil {
				t.Errorf("%s.%s: want a description and both schemas", id, op)
			}
			ts := ToolSpec{ToolID: id + "-" + op, ExecutionMode: Remote, AdapterID: id, AdapterOperation: op}
			if vs := reg.Check(ts); vs != nil {
				t.Errorf("%s.%s: %v", id, op, Violations(vs))
			}
		}
		ts := ToolSpec{ToolID: "x", ExecutionMode: Remote, AdapterID: id, AdapterOperation: "drop_all_collections"}
		if vs := reg.Check(ts); len(vs) != 1 || vs[0].Assertion != OperationExists {
			t.Errorf("%s.drop_all_collections: %v", id, Violations(vs))
		}
	}
}

func TestViolationError(t *testing.T) {
	t.Parallel()
	reg := defaultRegistry(t)
	vs := reg.Check(ToolSpec{ToolID: "vector-search", ExecutionMode: Remote, AdapterID: "qdrant-vector", AdapterOperation: "serch"})
	if len(vs) != 1 {
		t.Fatalf("violations: %v", vs)
	}
	got := vs[0].Error()
	for _, s := range []string{`assertion 3 (adapter operation) failed`, `ToolSpec "vector-search"`, `adapter_operation: `,
		`invalid operation "serch" for adapter "qdrant-vector" (v1.0.0)`, `fix: use one of: create_collection, health_check, search, upsert (did you mean "search"?)`} {
		if !strings.Contains(got, s) {
			t.Errorf("Error() = %q, want it to contain %q", got, s)
		}
	}
	vs = reg.Check(ToolSpec{ToolID: "t", ExecutionMode: Remote, AdapterID: "qdrant-vectr", AdapterOperation: "search"})
	if got := Violations(vs).Error(); !strings.Contains(got, `assertion 2 (adapter existence) failed for ToolSpec "t": adapter_id: adapter "qdrant-vectr" does not exist; fix:`) ||
		!strings.Contains(got, `(did you mean "qdrant-vector"?)`) {
		t.Errorf("Error() = %q", got)
	}
	v := Violation{Assertion: FrozenUnchanged, AdapterID: "loki", Field: "version", Msg: "operation removed without a MAJOR bump", Fix: "set version: 2.0.0"}
	if got, want := v.Error(), `assertion 5 (contract immutability) failed for adapter "loki": version: operation removed without a MAJOR bump; fix: set version: 2.0.0`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// TestAdapterRemoved: "IF ADAPTER REMOVED → ALL TOOLSPECS USING IT MUST
// FAIL".
func TestAdapterRemoved(t *testing.T) {
	t.Parallel()
	c := Default()
	c.Adapters = slices.DeleteFunc(c.Adapters, func(a AdapterContract) bool { return a.AdapterID == "loki" })
	reg, err := NewRegistry(c)
	if err != nil {
		t.Fatal(err)
	}
	vs := reg.Check(ToolSpec{ToolID: "logs", ExecutionMode: Remote, AdapterID: "loki", AdapterOperation: "query_logs"})
	if len(vs) != 1 || vs[0].Assertion != AdapterExists {
		t.Fatalf("violations: %v", Violations(vs))
	}
}
