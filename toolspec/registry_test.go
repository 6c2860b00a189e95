package toolspec

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestNewRegistryDuplicateNamesBothSources(t *testing.T) {
	t.Parallel()
	mine, err := ParseCatalogue("mine.yaml", []byte(`adapters:
  - adapter_id: loki
    version: 1.1.0
    status: draft
    operations:
      query_logs: {description: mine}
  - adapter_id: my-crm
    version: 0.3.0
    status: draft
    operations:
      find_customer: {}
`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewRegistry(Default(), mine)
	var pe ParseErrors
	if !errors.As(err, &pe) || len(pe) != 1 {
		t.Fatalf("NewRegistry = %v, want one error", err)
	}
	want := `mine.yaml: adapters[0].adapter_id: adapter "loki" is defined both in default (built in) and in mine.yaml; keep one`
	if pe[0].Error() != want {
		t.Errorf("error = %q\nwant    %q", pe[0].Error(), want)
	}
	// Without the clash, both catalogues make one registry.
	mine.Adapters = mine.Adapters[1:]
	reg, err := NewRegistry(Default(), mine)
	if err != nil {
		t.Fatal(err)
	}
	if got := reg.AdapterIDs(); len(got) != 9 || !slices.Contains(got, "my-crm") || !slices.IsSorted(got) {
		t.Errorf("AdapterIDs = %v", got)
	}
	if reg.Source("my-crm") != "mine.yaml" || reg.Source("loki") != DefaultSource || reg.Source("nope") != "" {
		t.Errorf("Source: %q %q", reg.Source("my-crm"), reg.Source("loki"))
	}
	if vs := reg.Check(ToolSpec{ToolID: "crm", ExecutionMode: Remote, AdapterID: "my-crm", AdapterOperation: "find_customer", AdapterContractVersion: "0.1.0"}); vs != nil {
		t.Errorf("Check: %v", Violations(vs))
	}
}

// TestNewRegistryValidates: catalogues built in code are checked as
// files are.
func TestNewRegistryValidates(t *testing.T) {
	t.Parallel()
	c := &Catalogue{Source: "code", Adapters: []AdapterContract{{AdapterID: "Bad", Version: "1", Status: Frozen,
		Operations: map[string]Operation{"op": {InputSchema: map[string]any{"type": 7}}}}}}
	_, err := NewRegistry(c)
	if err == nil {
		t.Fatal("NewRegistry accepted an invalid contract")
	}
	for _, s := range []string{`code: adapters[0].adapter_id: "Bad" does not match`, `code: adapters[0].version: "1" is not a semantic version`,
		`code: adapters[0].operations.op.input_schema: not a valid JSON Schema`} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
	// A catalogue without Source is named by its position.
	_, err = NewRegistry(nil, &Catalogue{Adapters: []AdapterContract{{}}})
	if err == nil || !strings.HasPrefix(err.Error(), "catalogue 2: ") {
		t.Errorf("error = %v", err)
	}
}

func TestLookupAndEmptyRegistry(t *testing.T) {
	t.Parallel()
	reg := defaultRegistry(t)
	c, ok := reg.Lookup("livekit")
	if !ok || c.AdapterID != "livekit" || len(c.Operations) != 2 {
		t.Fatalf("Lookup(livekit) = %+v, %v", c, ok)
	}
	if _, ok := reg.Lookup("nope"); ok {
		t.Error("Lookup(nope) found something")
	}
	var empty *Registry
	if _, ok := empty.Lookup("loki"); ok || empty.AdapterIDs() != nil {
		t.Error("a nil registry holds something")
	}
	vs := empty.Check(ToolSpec{ToolID: "t", ExecutionMode: Remote, AdapterID: "loki", AdapterOperation: "query_logs"})
	if len(vs) != 1 || vs[0].Assertion != AdapterExists {
		t.Errorf("Check on a nil registry: %v", vs)
	}
}

// TestDefaultIsACopy: Default returns a fresh catalogue each time, so a
// caller's change is not the next caller's.
func TestDefaultIsACopy(t *testing.T) {
	t.Parallel()
	a := Default()
	a.Adapters[0].Version = "9.0.0"
	delete(a.Adapters[0].Operations, "query")
	b := Default()
	if b.Adapters[0].Version != "1.0.0" || len(b.Adapters[0].Operations) != 2 {
		t.Fatal("Default shares state between calls")
	}
	if b.Source != DefaultSource {
		t.Errorf("Source = %q", b.Source)
	}
	re, err := ParseCatalogue("copy.yaml", DefaultCatalogueYAML())
	if err != nil {
		t.Fatal(err)
	}
	re.Source = DefaultSource
	if !reflect.DeepEqual(re, b) {
		t.Error("DefaultCatalogueYAML does not parse to Default()")
	}
}
