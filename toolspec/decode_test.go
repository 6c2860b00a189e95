package toolspec

import (
	"errors"
	"strings"
	"testing"
)

func TestParseToolSpecs(t *testing.T) {
	t.Parallel()
	yamlDoc := `toolspecs:
  - tool_id: vector-search
    execution_mode: remote
    adapter_id: qdrant-vector
    adapter_operation: search
    adapter_contract_version: 1.0.0
    input_schema:
      type: object
      properties:
        vector: {type: array, items: {type: number}}
        limit: {type: integer, default: 10}
      required: [vector]
  - tool_id: format-date
    execution_mode: local
`
	tss, err := ParseToolSpecs("tools.yaml", []byte(yamlDoc))
	if err != nil {
		t.Fatal(err)
	}
	if len(tss) != 2 || tss[0].ToolID != "vector-search" || tss[0].ExecutionMode != Remote || tss[0].AdapterContractVersion != "1.0.0" ||
		tss[1].ExecutionMode != Local || tss[1].AdapterID != "" {
		t.Fatalf("ToolSpecs = %+v", tss)
	}
	props := tss[0].InputSchema["properties"].(map[string]any)
	if props["limit"].(map[string]any)["default"] != 10 {
		t.Errorf("limit default = %#v, want int 10", props["limit"])
	}
	// JSON reads as YAML.
	tss, err = ParseToolSpecs("tools.json", []byte(`{"toolspecs": [{"tool_id": "a", "execution_mode": "local"}]}`))
	if err != nil || len(tss) != 1 || tss[0].ToolID != "a" {
		t.Fatalf("JSON: %+v, %v", tss, err)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		parse func(string, []byte) error
		doc   string
		want  []string // each error, as File:Line: Path: Msg
	}{
		{"unknown field with did-you-mean", toolSpecs, "toolspecs:\n  - tool_id: a\n    execution_mode: local\n    adapterId: x\n",
			[]string{`t.yaml:4: toolspecs[0].adapterId: unknown field "adapterId" (did you mean "adapter_id"?)`}},
		{"typo two edits away", toolSpecs, "toolspecs:\n  - tool_id: a\n    execution_mod: local\n",
			[]string{`t.yaml:3: toolspecs[0].execution_mod: unknown field "execution_mod" (did you mean "execution_mode"?)`}},
		{"missing tool_id and bad mode", toolSpecs, "toolspecs:\n  - execution_mode: hybrid\n",
			[]string{`t.yaml:2: toolspecs[0].tool_id: required: the tool's id`, `t.yaml:2: toolspecs[0].execution_mode: "hybrid" is not an execution mode: local or remote`}},
		{"duplicate tool_id", toolSpecs, "toolspecs:\n  - {tool_id: a, execution_mode: local}\n  - {tool_id: a, execution_mode: local}\n",
			[]string{`t.yaml:3: toolspecs[1].tool_id: tool_id "a" is given twice (first at toolspecs[0], line 2)`}},
		{"bad version", toolSpecs, "toolspecs:\n  - tool_id: a\n    execution_mode: remote\n    adapter_contract_version: \"1.0\"\n",
			[]string{`t.yaml:4: toolspecs[0].adapter_contract_version: "1.0" is not a semantic version MAJOR.MINOR.PATCH`}},
		{"schema that does not compile", toolSpecs, "toolspecs:\n  - tool_id: a\n    execution_mode: local\n    input_schema: {type: 5}\n",
			[]string{`t.yaml:4: toolspecs[0].input_schema: not a valid JSON Schema`}},
		{"wrong type", toolSpecs, "toolspecs:\n  - tool_id: [a]\n    execution_mode: local\n",
			[]string{`t.yaml:2: toolspecs[0].tool_id: expected a string, got a list`}},
		{"not a mapping", toolSpecs, "- a\n", []string{`t.yaml:1: a ToolSpecs file is a mapping {toolspecs: [...]}, got a list`}},
		{"empty", toolSpecs, "", []string{`t.yaml:1: empty document`}},
		{"syntax error", toolSpecs, "toolspecs:\n  - tool_id: a\n    x: @b\n", []string{`t.yaml:3: invalid YAML: found character that cannot start any token`}},
		{"duplicate key", toolSpecs, "toolspecs:\n  - tool_id: a\n    tool_id: b\n    execution_mode: local\n",
			[]string{`t.yaml:3: toolspecs[0].tool_id: duplicate key (first defined at line 2)`}},

		{"catalogue: unknown field", catalogue, "adapters:\n  - adapter_id: x\n    version: 1.0.0\n    status: frozen\n    operations:\n      op:\n        descripton: d\n",
			[]string{`t.yaml:7: adapters[0].operations.op.descripton: unknown field "descripton" (did you mean "description"?)`}},
		{"catalogue: invalid contract", catalogue, "adapters:\n  - adapter_id: X_Y\n    version: v1\n    status: hot\n",
			[]string{`t.yaml:2: adapters[0].adapter_id: "X_Y" does not match ^[a-z0-9-]+$`, `t.yaml:2: adapters[0].operations: required: at least one operation`,
				`t.yaml:3: adapters[0].version: "v1" is not a semantic version`, `t.yaml:4: adapters[0].status: "hot" is not a status: frozen or draft`}},
		{"catalogue: adapter twice", catalogue, "adapters:\n  - {adapter_id: x, version: 1.0.0, status: draft, operations: {a: {}}}\n  - {adapter_id: x, version: 1.0.0, status: draft, operations: {a: {}}}\n",
			[]string{`t.yaml:3: adapters[1].adapter_id: adapter "x" is defined twice (first at adapters[0])`}},
		{"catalogue: bad operation schema", catalogue, "adapters:\n  - adapter_id: x\n    version: 1.0.0\n    status: draft\n    operations:\n      a:\n        output_schema: {minimum: high}\n",
			[]string{`t.yaml:7: adapters[0].operations.a.output_schema: not a valid JSON Schema`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.parse("t.yaml", []byte(tc.doc))
			var pe ParseErrors
			if !errors.As(err, &pe) {
				t.Fatalf("error = %v (%T), want ParseErrors", err, err)
			}
			if len(pe) != len(tc.want) {
				t.Fatalf("errors:\n%v\nwant %d", err, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(pe[i].Error(), w) {
					t.Errorf("error %d = %q, want prefix %q", i, pe[i].Error(), w)
				}
			}
		})
	}
}

func toolSpecs(name string, b []byte) error { _, err := ParseToolSpecs(name, b); return err }
func catalogue(name string, b []byte) error { _, err := ParseCatalogue(name, b); return err }

func TestParseVersion(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"1.0.0", "2.10.3", "1.0.0-rc.1", "1.0.0+build.5"} {
		if _, err := ParseVersion(s); err != nil {
			t.Errorf("ParseVersion(%q): %v", s, err)
		}
	}
	for _, s := range []string{"", "1", "1.0", "v1.0.0", "01.0.0", "1.0.0.0", "latest"} {
		if _, err := ParseVersion(s); err == nil {
			t.Errorf("ParseVersion(%q) = nil error", s)
		}
	}
	v, _ := ParseVersion("2.3.4")
	if v.Major() != 2 || v.Minor() != 3 || v.Patch() != 4 {
		t.Errorf("ParseVersion(2.3.4) = %v", v)
	}
}
