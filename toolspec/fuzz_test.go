package toolspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
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

// FuzzCheckFiles: CheckFiles never panics on any pair of files; each
// report is either a file it could not take (ErrUnknownFile, naming the
// file) or one of a kind whose every problem is placed in that file, and
// a file it takes alone for a catalogue or ToolSpecs file passes exactly
// when ParseCatalogue or ParseToolSpecs (and, for ToolSpecs, the default
// registry) accepts it.
func FuzzCheckFiles(f *testing.F) {
	f.Add([]byte(mailCatalogueSeed), []byte("toolspecs:\n  - {tool_id: n, execution_mode: remote, adapter_id: acme-mail, adapter_operation: send}\n"))
	f.Add([]byte("adapters:\n  - adapter_id: qdrant-vector\n    version: 1.0.0\n    status: draft\n    operations: {a: {}}\n"), []byte(`{"toolspecs": [{"tool_id": "m", "execution_mode": "local", "adapter_id": "mcp"}]}`))
	f.Add([]byte("agents: []\n"), []byte("adapters: []\ntoolspecs: []\n"))
	f.Add([]byte("base: &b {toolspecs: []}\n<<: *b\n"), []byte("a: [\n"))
	f.Add([]byte("toolspecs:\n  - {tool_id: a, execution_mode: remote, adapter_id: loki, adapter_operation: query_logs, adapter_contract_version: 2.0.0, input_schema: {required: [x]}}\n"), []byte(""))
	reg, err := NewRegistry(Default())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		reports := CheckFiles(FileInput{"a.yaml", a}, FileInput{"b.yaml", b})
		if len(reports) != 2 {
			t.Fatalf("%d reports for 2 files", len(reports))
		}
		for _, r := range reports {
			if r.Err != nil {
				if !errors.Is(r.Err, ErrUnknownFile) || r.Kind != "" || len(r.Problems) > 0 || !strings.HasPrefix(r.Err.Error(), r.Name+":") {
					t.Fatalf("unknown file reported as %+v", r)
				}
				continue
			}
			if r.Kind != CatalogueFile && r.Kind != ToolSpecsFile {
				t.Fatalf("kind %q", r.Kind)
			}
			for _, p := range r.Problems {
				if p.File != r.Name || p.Line < 0 || p.Msg == "" {
					t.Fatalf("problem not placed in %s: %+v", r.Name, p)
				}
			}
		}
		// One file alone: the same verdict as the decoders and Check.
		r := CheckFiles(FileInput{"a.yaml", a})[0]
		switch r.Kind {
		case CatalogueFile:
			c, err := ParseCatalogue("a.yaml", a)
			if err == nil {
				_, err = NewRegistry(Default(), c)
			}
			if (err == nil) != r.OK() {
				t.Fatalf("CheckFiles OK %v, ParseCatalogue and NewRegistry: %v", r.OK(), err)
			}
		case ToolSpecsFile:
			tss, err := ParseToolSpecs("a.yaml", a)
			ok := err == nil
			for _, ts := range tss {
				if IsLive(ts) {
					ok = ok && ts.ExecutionMode == Remote
				} else {
					ok = ok && len(reg.Check(ts)) == 0
				}
			}
			if ok != r.OK() {
				t.Fatalf("CheckFiles OK %v, ParseToolSpecs %v and Check: %v", r.OK(), err, ok)
			}
		}
	})
}

const mailCatalogueSeed = `adapters:
  - adapter_id: acme-mail
    version: 1.0.0
    status: frozen
    operations:
      send: {input_schema: {type: object, properties: {to: {type: string}}, required: [to]}}
`
