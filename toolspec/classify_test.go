package toolspec_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/pactum/pactum/toolspec"
)

func schema(t *testing.T, s string) map[string]any {
	t.Helper()
	if s == "" {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("schema %s: %v", s, err)
	}
	return m
}

// TestCompareSchemas: every schema change kind, in both directions, with
// the bump the table in classify.go gives it.
func TestCompareSchemas(t *testing.T) {
	t.Parallel()
	const base = `{"type":"object","properties":{"vector":{"type":"array","items":{"type":"number"}},"limit":{"type":"integer"}},"required":["vector"]}`
	tests := []struct {
		name     string
		old, new string
		// kind (without direction) and the bump for input, then output;
		// "" kind means no change.
		kind      string
		path      string
		in, out   toolspec.Bump
		moreKinds int // further changes expected besides the first
	}{
		{name: "identical", old: base, new: base},
		{name: "key order and number spelling do not matter", old: `{"type":"integer","maximum":10}`, new: `{"maximum":10.0,"type":"integer"}`},
		{name: "optional property added (seed example 1)", old: base,
			new:  `{"type":"object","properties":{"vector":{"type":"array","items":{"type":"number"}},"limit":{"type":"integer"},"filter":{"type":"object"}},"required":["vector"]}`,
			kind: "property_added", path: "filter", in: toolspec.Minor, out: toolspec.Minor},
		{name: "required property added", old: base,
			new:  `{"type":"object","properties":{"vector":{"type":"array","items":{"type":"number"}},"limit":{"type":"integer"},"collection":{"type":"string"}},"required":["vector","collection"]}`,
			kind: "required_added", path: "collection", in: toolspec.Major, out: toolspec.Minor},
		{name: "existing property became required", old: base,
			new:  `{"type":"object","properties":{"vector":{"type":"array","items":{"type":"number"}},"limit":{"type":"integer"}},"required":["vector","limit"]}`,
			kind: "required_added", path: "limit", in: toolspec.Major, out: toolspec.Minor},
		{name: "required property became optional", old: base,
			new:  `{"type":"object","properties":{"vector":{"type":"array","items":{"type":"number"}},"limit":{"type":"integer"}}}`,
			kind: "required_removed", path: "vector", in: toolspec.Minor, out: toolspec.Major},
		{name: "property removed", old: base,
			new:  `{"type":"object","properties":{"vector":{"type":"array","items":{"type":"number"}}},"required":["vector"]}`,
			kind: "property_removed", path: "limit", in: toolspec.Major, out: toolspec.Major},
		{name: "type narrowed", old: `{"type":["string","null"]}`, new: `{"type":"string"}`,
			kind: "type_narrowed", in: toolspec.Major, out: toolspec.Minor},
		{name: "number narrowed to integer", old: `{"type":"number"}`, new: `{"type":"integer"}`,
			kind: "type_narrowed", in: toolspec.Major, out: toolspec.Minor},
		{name: "type added where there was none", old: `{}`, new: `{"type":"string"}`,
			kind: "type_narrowed", in: toolspec.Major, out: toolspec.Minor},
		{name: "type widened", old: `{"type":"integer"}`, new: `{"type":["integer","string"]}`,
			kind: "type_widened", in: toolspec.Minor, out: toolspec.Major},
		{name: "type changed", old: `{"type":"integer"}`, new: `{"type":"string"}`,
			kind: "type_changed", in: toolspec.Major, out: toolspec.Major},
		{name: "same types written differently", old: `{"type":["string","integer"]}`, new: `{"type":["integer","string"]}`},
		{name: "enum widened", old: `{"type":"string","enum":["cosine","dot"]}`, new: `{"type":"string","enum":["cosine","dot","euclid"]}`,
			kind: "enum_widened", in: toolspec.Minor, out: toolspec.Major},
		{name: "enum narrowed", old: `{"enum":["cosine","dot"]}`, new: `{"enum":["cosine"]}`,
			kind: "enum_narrowed", in: toolspec.Major, out: toolspec.Minor},
		{name: "enum added", old: `{"type":"string"}`, new: `{"type":"string","enum":["a"]}`,
			kind: "enum_narrowed", in: toolspec.Major, out: toolspec.Minor},
		{name: "enum removed", old: `{"type":"string","enum":["a"]}`, new: `{"type":"string"}`,
			kind: "enum_widened", in: toolspec.Minor, out: toolspec.Major},
		{name: "enum values swapped", old: `{"enum":["a","b"]}`, new: `{"enum":["a","c"]}`,
			kind: "enum_changed", in: toolspec.Major, out: toolspec.Major},
		{name: "enum reordered", old: `{"enum":["a","b"]}`, new: `{"enum":["b","a"]}`},
		{name: "const changed", old: `{"const":"a"}`, new: `{"const":"b"}`,
			kind: "enum_changed", in: toolspec.Major, out: toolspec.Major},
		{name: "const to enum widens", old: `{"const":"a"}`, new: `{"enum":["a","b"]}`,
			kind: "enum_widened", in: toolspec.Minor, out: toolspec.Major},
		{name: "maximum lowered", old: `{"type":"integer","maximum":100}`, new: `{"type":"integer","maximum":10}`,
			kind: "constraint_narrowed", in: toolspec.Major, out: toolspec.Minor},
		{name: "maximum raised", old: `{"type":"integer","maximum":10}`, new: `{"type":"integer","maximum":100}`,
			kind: "constraint_widened", in: toolspec.Minor, out: toolspec.Major},
		{name: "minLength added", old: `{"type":"string"}`, new: `{"type":"string","minLength":1}`,
			kind: "constraint_narrowed", in: toolspec.Major, out: toolspec.Minor},
		{name: "minItems removed", old: `{"type":"array","minItems":1}`, new: `{"type":"array"}`,
			kind: "constraint_widened", in: toolspec.Minor, out: toolspec.Major},
		{name: "pattern added", old: `{"type":"string"}`, new: `{"type":"string","pattern":"^[a-z]+$"}`,
			kind: "constraint_narrowed", in: toolspec.Major, out: toolspec.Minor},
		{name: "format removed", old: `{"type":"string","format":"uri"}`, new: `{"type":"string"}`,
			kind: "constraint_widened", in: toolspec.Minor, out: toolspec.Major},
		{name: "pattern replaced", old: `{"pattern":"^a"}`, new: `{"pattern":"^b"}`,
			kind: "constraint_changed", in: toolspec.Major, out: toolspec.Major},
		{name: "additionalProperties closed", old: `{"type":"object"}`, new: `{"type":"object","additionalProperties":false}`,
			kind: "constraint_narrowed", in: toolspec.Major, out: toolspec.Minor},
		{name: "additionalProperties opened", old: `{"type":"object","additionalProperties":false}`, new: `{"type":"object","additionalProperties":true}`,
			kind: "constraint_widened", in: toolspec.Minor, out: toolspec.Major},
		{name: "default changed", old: `{"type":"integer","default":10}`, new: `{"type":"integer","default":20}`,
			kind: "default_changed", in: toolspec.Minor, out: toolspec.Minor},
		{name: "description only", old: `{"type":"integer","description":"how many"}`, new: `{"type":"integer","description":"how many results"}`,
			kind: "annotation_changed", in: toolspec.Patch, out: toolspec.Patch},
		{name: "nested property type narrowed", old: `{"type":"object","properties":{"filter":{"type":"object","properties":{"tag":{"type":["string","null"]}}}}}`,
			new:  `{"type":"object","properties":{"filter":{"type":"object","properties":{"tag":{"type":"string"}}}}}`,
			kind: "type_narrowed", path: "filter.tag", in: toolspec.Major, out: toolspec.Minor},
		{name: "array items property removed", old: `{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"score":{"type":"number"}}}}`,
			new:  `{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"}}}}`,
			kind: "property_removed", path: "[].score", in: toolspec.Major, out: toolspec.Major},
		{name: "array items enum widened", old: `{"type":"array","items":{"enum":["a"]}}`, new: `{"type":"array","items":{"enum":["a","b"]}}`,
			kind: "enum_widened", path: "[]", in: toolspec.Minor, out: toolspec.Major},
		{name: "$ref changed", old: `{"$ref":"#/$defs/a"}`, new: `{"$ref":"#/$defs/b"}`,
			kind: "schema_uncomparable", in: toolspec.Major, out: toolspec.Major},
		{name: "oneOf changed", old: `{"oneOf":[{"type":"string"}]}`, new: `{"oneOf":[{"type":"string"},{"type":"integer"}]}`,
			kind: "schema_uncomparable", in: toolspec.Major, out: toolspec.Major},
		{name: "identical oneOf is no change", old: `{"oneOf":[{"type":"string"}],"title":"a"}`, new: `{"oneOf":[{"type":"string"}],"title":"b"}`,
			kind: "annotation_changed", in: toolspec.Patch, out: toolspec.Patch},
		{name: "tuple items changed", old: `{"items":[{"type":"string"}]}`, new: `{"items":[{"type":"integer"}]}`,
			kind: "schema_uncomparable", in: toolspec.Major, out: toolspec.Major},
		{name: "schema added where there was none", old: ``, new: `{"type":"object"}`,
			kind: "type_narrowed", in: toolspec.Major, out: toolspec.Minor},
		{name: "two changes: property added and enum narrowed", old: `{"properties":{"m":{"enum":["a","b"]}}}`, new: `{"properties":{"m":{"enum":["a"]},"n":{}}}`,
			kind: "enum_narrowed", path: "m", in: toolspec.Major, out: toolspec.Minor, moreKinds: 1},
	}
	for _, tc := range tests {
		for _, d := range []toolspec.Direction{toolspec.Input, toolspec.Output} {
			t.Run(tc.name+"/"+d.String(), func(t *testing.T) {
				t.Parallel()
				got := toolspec.CompareSchemas(d, schema(t, tc.old), schema(t, tc.new))
				if tc.kind == "" {
					if len(got) != 0 {
						t.Fatalf("changes %+v, want none", got)
					}
					return
				}
				if len(got) != 1+tc.moreKinds {
					t.Fatalf("%d changes %+v, want %d", len(got), got, 1+tc.moreKinds)
				}
				want := tc.in
				if d == toolspec.Output {
					want = tc.out
				}
				path := d.String()
				if tc.path != "" {
					path += "." + tc.path
					if strings.HasPrefix(tc.path, "[]") {
						path = d.String() + tc.path
					}
				}
				c := got[0]
				if c.Kind != d.String()+"_"+tc.kind || c.Bump != want || c.Path != path {
					t.Fatalf("change %+v, want kind %s_%s, bump %s, path %s", c, d, tc.kind, want, path)
				}
				if !strings.HasPrefix(c.Detail, path+": ") {
					t.Errorf("detail %q does not start with the path", c.Detail)
				}
			})
		}
	}
}

const seedCatalogue = `
adapters:
  - adapter_id: qdrant-vector
    version: 1.0.0
    status: frozen
    operations:
      search:
        description: nearest neighbours of a vector
        input_schema:
          type: object
          properties:
            vector: {type: array, items: {type: number}}
            limit: {type: integer, default: 10}
          required: [vector]
        output_schema:
          type: object
          properties:
            hits:
              type: array
              items:
                type: object
                properties:
                  id: {type: string}
                  score: {type: number}
      upsert: {description: write points}
      create_collection: {description: create a collection}
      health_check: {description: is it up}
  - adapter_id: meilisearch
    version: 1.0.0
    status: frozen
    operations:
      search: {description: full text search}
  - adapter_id: scratch
    version: 0.1.0
    status: draft
    operations:
      anything: {}
`

// parseCat decodes and validates a catalogue as pactum reads files.
func parseCat(t testing.TB, s string) *toolspec.Catalogue {
	t.Helper()
	c, err := toolspec.ParseCatalogue("test.yaml", []byte(s))
	if err != nil {
		t.Fatalf("catalogue: %v", err)
	}
	return c
}

// rawCat decodes a catalogue without validating it (one with a malformed
// version, as a hand-made Catalogue could be).
func rawCat(t testing.TB, s string) *toolspec.Catalogue {
	t.Helper()
	var c toolspec.Catalogue
	if err := yaml.Unmarshal([]byte(s), &c); err != nil {
		t.Fatalf("catalogue: %v", err)
	}
	return &c
}

// edit returns the seed catalogue with replacements applied.
func edit(t *testing.T, pairs ...string) *toolspec.Catalogue {
	t.Helper()
	s := seedCatalogue
	for i := 0; i < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			t.Fatalf("catalogue has no %q", pairs[i])
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return rawCat(t, s)
}

type kindBump struct {
	adapter, op, kind string
	bump              toolspec.Bump
}

// TestClassify: whole catalogues, the seed's breaking and non-breaking
// change lists.
func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		pairs []string
		want  []kindBump
	}{
		{name: "unchanged", want: nil},
		{name: "seed example 2: operation removed",
			pairs: []string{"      create_collection: {description: create a collection}\n", ""},
			want:  []kindBump{{"qdrant-vector", "create_collection", "operation_removed", toolspec.Major}}},
		{name: "operation added",
			pairs: []string{"      search: {description: full text search}\n", "      search: {description: full text search}\n      suggest: {}\n"},
			want:  []kindBump{{"meilisearch", "suggest", "operation_added", toolspec.Minor}}},
		{name: "adapter removed",
			pairs: []string{"  - adapter_id: meilisearch\n    version: 1.0.0\n    status: frozen\n    operations:\n      search: {description: full text search}\n", ""},
			want:  []kindBump{{"meilisearch", "", "adapter_removed", toolspec.Major}}},
		{name: "adapter added",
			pairs: []string{"adapters:\n", "adapters:\n  - {adapter_id: loki, version: 1.0.0, status: frozen, operations: {query_logs: {}}}\n"},
			want:  []kindBump{{"loki", "", "adapter_added", toolspec.Minor}}},
		{name: "description only",
			pairs: []string{"full text search", "full-text search"},
			want:  []kindBump{{"meilisearch", "search", "description_changed", toolspec.Patch}}},
		{name: "seed example 1: optional input added",
			pairs: []string{"            limit: {type: integer, default: 10}\n", "            limit: {type: integer, default: 10}\n            filter: {type: object}\n"},
			want:  []kindBump{{"qdrant-vector", "search", "input_property_added", toolspec.Minor}}},
		{name: "required input added",
			pairs: []string{"required: [vector]", "required: [vector, limit]"},
			want:  []kindBump{{"qdrant-vector", "search", "input_required_added", toolspec.Major}}},
		{name: "signature changed: input type",
			pairs: []string{"limit: {type: integer", "limit: {type: string"},
			want:  []kindBump{{"qdrant-vector", "search", "input_type_changed", toolspec.Major}}},
		{name: "output structure changed",
			pairs: []string{"                  score: {type: number}\n", ""},
			want:  []kindBump{{"qdrant-vector", "search", "output_property_removed", toolspec.Major}}},
		{name: "output property added",
			pairs: []string{"                  score: {type: number}\n", "                  score: {type: number}\n                  payload: {type: object}\n"},
			want:  []kindBump{{"qdrant-vector", "search", "output_property_added", toolspec.Minor}}},
		{name: "status changed",
			pairs: []string{"0.1.0\n    status: draft", "0.1.0\n    status: frozen"},
			want:  []kindBump{{"scratch", "", "status_changed", toolspec.None}}},
		{name: "version alone is not a change",
			pairs: []string{"adapter_id: meilisearch\n    version: 1.0.0", "adapter_id: meilisearch\n    version: 1.0.1"}},
	}
	old := parseCat(t, seedCatalogue)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []kindBump
			for _, c := range toolspec.Classify(old, edit(t, tc.pairs...)) {
				got = append(got, kindBump{c.AdapterID, c.Operation, c.Kind, c.Bump})
				if c.Detail == "" {
					t.Errorf("change %+v has no detail", c)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("changes\n%v\nwant\n%v", got, tc.want)
			}
		})
	}
}

// TestClassifyYAMLAndJSONAgree: the same catalogue decoded from YAML
// (ints) and JSON (float64s) has no changes.
func TestClassifyYAMLAndJSONAgree(t *testing.T) {
	t.Parallel()
	y := parseCat(t, seedCatalogue)
	b, err := json.Marshal(y)
	if err != nil {
		t.Fatal(err)
	}
	var j toolspec.Catalogue
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	if got := toolspec.Classify(y, &j); len(got) != 0 {
		t.Fatalf("changes %v, want none", got)
	}
	if got := toolspec.Classify(nil, y); len(got) != 3 || toolspec.Largest(got) != toolspec.Minor {
		t.Fatalf("from nothing: %v, want 3 adapters added", got)
	}
}

func TestAffectedToolSpecs(t *testing.T) {
	t.Parallel()
	specs := []toolspec.ToolSpec{
		{ToolID: "vector-search", ExecutionMode: toolspec.Remote, AdapterID: "qdrant-vector", AdapterOperation: "search"},
		{ToolID: "make-coll", ExecutionMode: toolspec.Remote, AdapterID: "qdrant-vector", AdapterOperation: "create_collection"},
		{ToolID: "local", ExecutionMode: toolspec.Local},
	}
	if got := toolspec.AffectedToolSpecs(toolspec.Change{AdapterID: "qdrant-vector", Operation: "create_collection"}, specs); !reflect.DeepEqual(got, []string{"make-coll"}) {
		t.Errorf("operation change affects %v", got)
	}
	if got := toolspec.AffectedToolSpecs(toolspec.Change{AdapterID: "qdrant-vector"}, specs); !reflect.DeepEqual(got, []string{"vector-search", "make-coll"}) {
		t.Errorf("adapter change affects %v", got)
	}
}
