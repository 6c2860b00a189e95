package contract_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/pactum/pactum/contract"
)

// valid is a small contract every check accepts.
const valid = `version: "1.0"
id: summarize
description: Summarize a document, then review the summary.
strictness: strict
steps:
  - id: summarize
    agent: writer
    creates: [summary]
    assertions:
      - type: assert
        message: the answer mentions the document
        check: {type: contains, value: document}
  - id: review
    agent: reviewer
    consumes: [summary]
    dependsOn: [summarize]
    onViolation: retry
resources:
  - id: summary
    type: data
    schema: {type: object, required: [summary]}
`

func TestParse(t *testing.T) {
	t.Parallel()
	c, err := contract.Parse("c.yaml", []byte(valid))
	if err != nil {
		t.Fatal(err)
	}
	want := &contract.AgentContract{
		Version: "1.0", ID: "summarize", Description: "Summarize a document, then review the summary.",
		Strictness: contract.Strict,
		Steps: []contract.ContractStep{
			{ID: "summarize", Agent: "writer", Creates: []string{"summary"}, Assertions: []contract.ContractAssertion{
				{Type: contract.Assert, Message: "the answer mentions the document", Check: contract.Check{Type: "contains", Value: "document"}},
			}},
			{ID: "review", Agent: "reviewer", Consumes: []string{"summary"}, DependsOn: []string{"summarize"}, OnViolation: contract.ViolationRetry},
		},
		Resources: []contract.ContractResource{
			{ID: "summary", Type: contract.ResourceData, Schema: map[string]any{"type": "object", "required": []any{"summary"}}},
		},
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("Parse:\n got %#v\nwant %#v", c, want)
	}
}

// TestParseJSON: JSON is read as YAML, with lines, and gives the same
// contract as the YAML it spells.
func TestParseJSON(t *testing.T) {
	t.Parallel()
	const js = `{
  "version": "1.0",
  "id": "summarize",
  "description": "Summarize a document, then review the summary.",
  "strictness": "strict",
  "steps": [
    {"id": "summarize", "agent": "writer", "creates": ["summary"],
     "assertions": [{"type": "assert", "message": "the answer mentions the document",
                     "check": {"type": "contains", "value": "document"}}]},
    {"id": "review", "agent": "reviewer", "consumes": ["summary"], "dependsOn": ["summarize"], "onViolation": "retry"}
  ],
  "resources": [{"id": "summary", "type": "data", "schema": {"type": "object", "required": ["summary"]}}]
}`
	fromJSON, err := contract.Parse("c.json", []byte(js))
	if err != nil {
		t.Fatal(err)
	}
	fromYAML, err := contract.Parse("c.yaml", []byte(valid))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromJSON, fromYAML) {
		t.Fatalf("JSON and YAML differ:\nJSON %#v\nYAML %#v", fromJSON, fromYAML)
	}
	_, err = contract.Parse("c.json", []byte(strings.Replace(js, `"dependsOn"`, `"depends_on"`, 1)))
	assertErrors(t, err, `c.json:10: steps[1].depends_on: unknown field "depends_on" (did you mean "dependsOn"?)`)
}

// TestParseValues: numbers, booleans and nulls in free-form fields
// (schemas, values, metadata) decode as encoding/json would give them to
// the checks, except that integers stay ints.
func TestParseValues(t *testing.T) {
	t.Parallel()
	c, err := contract.Parse("c.yaml", []byte(`version: 1.0
id: x
metadata: {n: 3, f: 2.5, b: true, z: null, day: 2026-11-23, list: [1, "two"], big: 123456789012345678901234567890}
steps:
  - id: a
    assertions:
      - {type: assert, message: m, check: {type: jsonpath, path: $.items, count: 2, value: 0}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Version != "1.0" {
		t.Errorf("version: got %q, want the text as written, 1.0", c.Version)
	}
	wantMeta := map[string]any{"n": 3, "f": 2.5, "b": true, "z": nil, "day": "2026-11-23", "list": []any{1, "two"}, "big": 1.2345678901234568e+29}
	if !reflect.DeepEqual(c.Metadata, wantMeta) {
		t.Errorf("metadata:\n got %#v\nwant %#v", c.Metadata, wantMeta)
	}
	ch := c.Steps[0].Assertions[0].Check
	if ch.Count == nil || *ch.Count != 2 || ch.Value != 0 || ch.Path != "$.items" {
		t.Errorf("check: got %#v (count %v)", ch, ch.Count)
	}
}

// TestParseAnchors: anchors, aliases and merge keys share assertions.
func TestParseAnchors(t *testing.T) {
	t.Parallel()
	c, err := contract.Parse("c.yaml", []byte(`version: "1.0"
id: x
steps:
  - id: a
    agent: w
    assertions:
      - &json {type: assert, message: JSON, check: {type: schema_match, schema: {type: object}}}
  - id: b
    agent: w
    assertions:
      - *json
      - {<<: *json, type: suggest}
`))
	if err != nil {
		t.Fatal(err)
	}
	a := c.Steps[0].Assertions[0]
	b := c.Steps[1].Assertions
	if !reflect.DeepEqual(b[0], a) || b[1].Type != contract.Suggest || b[1].Message != "JSON" || !reflect.DeepEqual(b[1].Check, a.Check) {
		t.Fatalf("aliases: got %#v, want copies of %#v (the second a suggest)", b, a)
	}
}

// TestParseErrors: every decoding error names the file, the line and the
// field path; every error of a file is reported, in line order.
func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"empty", "", []string{`c.yaml:1: empty document: a contract needs at least version, id and steps`}},
		{"comment only", "# nothing\n", []string{`c.yaml:1: empty document: a contract needs at least version, id and steps`}},
		{"not a mapping", "- a\n- b\n", []string{`c.yaml:1: a contract is a mapping (version, id, steps, …), got a list`}},
		{"syntax", "version: \"1.0\nid: x\n", []string{`c.yaml:3: invalid YAML: found unexpected end of stream`}},
		{"two documents", "version: \"1.0\"\n---\nid: x\n", []string{`c.yaml:2: a contract file holds one YAML document; found a second one`}},
		{"unknown top-level field", "version: \"1.0\"\nids: x\n", []string{`c.yaml:2: ids: unknown field "ids" (did you mean "id"?)`}},
		{"unknown field, no near miss", "version: \"1.0\"\nflavour: x\n", []string{`c.yaml:2: flavour: unknown field "flavour"`}},
		{"snake case", "steps:\n  - id: a\n    depends_on: [b]\n    on_violation: retry\n", []string{
			`c.yaml:3: steps[0].depends_on: unknown field "depends_on" (did you mean "dependsOn"?)`,
			`c.yaml:4: steps[0].on_violation: unknown field "on_violation" (did you mean "onViolation"?)`,
		}},
		{"misspelt check field", "steps:\n  - id: a\n    assertions:\n      - type: assert\n        message: m\n        check: {type: regex, patern: x}\n",
			[]string{`c.yaml:6: steps[0].assertions[0].check.patern: unknown field "patern" (did you mean "pattern"?)`}},
		{"resource field", "resources:\n  - id: r\n    type: file\n    resourceType: x\n",
			[]string{`c.yaml:4: resources[0].resourceType: unknown field "resourceType"`}},
		{"validator field", "validators:\n  - type: exists\n    resource_types: [file]\n",
			[]string{`c.yaml:3: validators[0].resource_types: unknown field "resource_types" (did you mean "resourceTypes"?)`}},
		{"string for a list", "steps:\n  - id: a\n    dependsOn: b\n", []string{`c.yaml:3: steps[0].dependsOn: expected a list, got "b"`}},
		{"mapping for a string", "id: {a: b}\n", []string{`c.yaml:1: id: expected a string, got a mapping`}},
		{"list for a mapping", "steps:\n  - id: a\n    assertions:\n      - check: [regex]\n", []string{`c.yaml:4: steps[0].assertions[0].check: expected a mapping, got a list`}},
		{"steps not a list", "steps: {id: a}\n", []string{`c.yaml:1: steps: expected a list, got a mapping`}},
		{"a step not a mapping", "steps:\n  - build\n", []string{`c.yaml:2: steps[0]: expected a mapping, got "build"`}},
		{"count not an integer", "steps:\n  - id: a\n    assertions:\n      - check: {type: jsonpath, count: two}\n", []string{`c.yaml:4: steps[0].assertions[0].check.count: expected an integer, got "two"`}},
		{"schema not a mapping", "resources:\n  - id: r\n    schema: [a]\n", []string{`c.yaml:3: resources[0].schema: expected a mapping, got a list`}},
		{"duplicate key", "id: a\nversion: \"1.0\"\nid: b\n", []string{`c.yaml:3: id: duplicate key (first at line 1)`}},
		{"duplicate key in a schema", "resources:\n  - id: r\n    schema:\n      type: object\n      type: array\n", []string{`c.yaml:5: resources[0].schema.type: duplicate key (first at line 4)`}},
		{"infinity", "metadata: {x: .inf}\n", []string{`c.yaml:1: metadata.x: .inf is not a JSON number`}},
		{"binary", "id: !!binary aGVsbG8=\n", []string{`c.yaml:1: id: unsupported YAML tag !!binary`}},
		{"unknown anchor", "id: *nope\n", []string{`c.yaml: invalid YAML: unknown anchor 'nope' referenced`}},
		{"alias cycle", "metadata: &m {self: *m}\n", []string{`c.yaml:1: metadata.self: alias *m refers to a node that contains it`}},
		{"non-string key", "metadata: {[a]: b}\n", []string{`c.yaml:1: metadata: mapping keys must be strings, got a list`}},
		{"several, in line order", "version: \"1.0\"\nid: x\nsteps:\n  - id: a\n    agnt: w\n  - id: b\n    creates: c\ndescripton: d\n", []string{
			`c.yaml:5: steps[0].agnt: unknown field "agnt" (did you mean "agent"?)`,
			`c.yaml:7: steps[1].creates: expected a list, got "c"`,
			`c.yaml:8: descripton: unknown field "descripton" (did you mean "description"?)`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := contract.Parse("c.yaml", []byte(tc.yaml))
			if c != nil {
				t.Errorf("Parse returned a contract with an error: %#v", c)
			}
			assertErrors(t, err, tc.want...)
		})
	}
}

// TestParseAliasBomb: a billion-laughs document is refused quickly
// instead of being expanded.
func TestParseAliasBomb(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	_, err := contract.Parse("c.yaml", []byte("metadata:\n  "+strings.ReplaceAll(b.String(), "\n", "\n  ")))
	if err == nil || !strings.Contains(err.Error(), "document too complex") {
		t.Fatalf("alias bomb: got %v, want document too complex", err)
	}
}

// assertErrors checks that err is an Errors whose messages are want, in
// order, each a FieldError with file and line.
func assertErrors(t *testing.T, err error, want ...string) {
	t.Helper()
	var es contract.Errors
	if !errors.As(err, &es) {
		t.Fatalf("error %v (%T) is not a contract.Errors", err, err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Error())
		if e.File == "" {
			t.Errorf("error %q has no file", e.Error())
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n got %q\nwant %q", got, want)
	}
}

// TestSyntaxErrorLine: a parser error is placed on the line that holds
// the mistake (go-yaml reports the line before it for parser errors), as
// the configuration's errors are.
func TestSyntaxErrorLine(t *testing.T) {
	t.Parallel()
	_, err := contract.Parse("c.yaml", []byte("version: \"1.0\"\nid: x\nsteps:\n  - id: a\n    agent: [unclosed\n"))
	var es contract.Errors
	if !errors.As(err, &es) || len(es) != 1 || es[0].Line != 5 || !strings.Contains(es[0].Msg, "did not find expected ',' or ']'") {
		t.Fatalf("got %v", err)
	}
}
