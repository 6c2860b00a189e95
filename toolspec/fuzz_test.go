package toolspec

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzParseCatalogue: ParseCatalogue never panics, and a catalogue it
// accepts encodes to JSON that parses again to the same encoding.
func FuzzParseCatalogue(f *testing.F) {
	f.Add(DefaultCatalogueYAML())
	f.Add([]byte("adapters:\n  - adapter_id: x\n    version: 1.0.0\n    status: draft\n    operations:\n      a: {input_schema: {type: object, properties: {n: {type: number, minimum: 2.5}}}}\n"))
	f.Add([]byte(`{"adapters": [{"adapter_id": "a-b", "version": "0.1.0-rc.1", "status": "frozen", "operations": {"op": {"description": "d"}}}]}`))
	f.Add([]byte("base: &b {adapter_id: x, version: 1.0.0, status: draft, operations: {a: {}}}\nadapters: [*b]\n"))
	f.Add([]byte("adapters: [{<<: {adapter_id: y}, version: 2.0.0, status: frozen, operations: {q: {output_schema: {enum: [1, 1.5, ~, true]}}}}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCatalogue("f.yaml", data)
		if err != nil {
			return
		}
		b1, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("accepted catalogue does not encode: %v", err)
		}
		c2, err := ParseCatalogue("f.json", b1)
		if err != nil {
			t.Fatalf("re-encoded catalogue does not parse: %v\n%s", err, b1)
		}
		b2, _ := json.Marshal(c2)
		if !bytes.Equal(b1, b2) {
			t.Fatalf("round trip differs:\n%s\n%s", b1, b2)
		}
		if _, err := NewRegistry(c); err != nil {
			t.Fatalf("accepted catalogue makes no registry: %v", err)
		}
	})
}

// FuzzParseToolSpecs: ParseToolSpecs never panics, a file it accepts
// re-encodes and parses the same, and checking what it accepts against
// the default registry never panics.
func FuzzParseToolSpecs(f *testing.F) {
	f.Add([]byte("toolspecs:\n  - tool_id: vector-search\n    execution_mode: remote\n    adapter_id: qdrant-vector\n    adapter_operation: search\n    adapter_contract_version: 1.0.0\n    input_schema: {type: object, properties: {vector: {type: array}}, required: [vector, filter]}\n"))
	f.Add([]byte(`{"toolspecs": [{"tool_id": "t", "execution_mode": "local", "adapter_id": "x"}]}`))
	f.Add([]byte("toolspecs:\n  - {tool_id: a, execution_mode: remote, adapter_id: Bad_Id}\n  - {tool_id: b, execution_mode: remote, adapter_id: loki, adapter_operation: query_logs, adapter_contract_version: 2.0.0}\n"))
	f.Add([]byte("toolspecs: []\n"))
	reg, err := NewRegistry(Default())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tss, err := ParseToolSpecs("f.yaml", data)
		if err != nil {
			return
		}
		for _, ts := range tss {
			for _, v := range reg.Check(ts) {
				if v.Msg == "" || v.Fix == "" || v.Error() == "" {
					t.Fatalf("violation without message or fix: %+v", v)
				}
			}
		}
		b1, err := json.Marshal(toolSpecsFile{tss})
		if err != nil {
			t.Fatalf("accepted ToolSpecs do not encode: %v", err)
		}
		tss2, err := ParseToolSpecs("f.json", b1)
		if err != nil {
			t.Fatalf("re-encoded ToolSpecs do not parse: %v\n%s", err, b1)
		}
		b2, _ := json.Marshal(toolSpecsFile{tss2})
		if !bytes.Equal(b1, b2) {
			t.Fatalf("round trip differs:\n%s\n%s", b1, b2)
		}
	})
}
