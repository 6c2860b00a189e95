package toolspec

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

const mailCatalogue = `adapters:
  - adapter_id: acme-mail
    version: 1.0.0
    status: frozen
    operations:
      send:
        input_schema:
          type: object
          properties: {to: {type: string}}
          required: [to]
`

// TestCheckFiles: what CheckFiles reports for each file, by kind, with
// every problem placed at its file, line and field path.
func TestCheckFiles(t *testing.T) {
	t.Parallel()
	type want struct {
		kind      FileKind
		unknown   bool
		problems  []string // each ParseError's Error()
		adapters  int
		toolspecs int
		live      int
		unchecked []string
	}
	for _, tc := range []struct {
		name  string
		files []FileInput
		want  []want
	}{{
		name: "a catalogue and the ToolSpecs that need it",
		files: []FileInput{
			{"tools.yaml", []byte("toolspecs:\n  - {tool_id: n, execution_mode: remote, adapter_id: acme-mail, adapter_operation: send}\n  - {tool_id: m, execution_mode: remote, adapter_id: mcp, adapter_operation: echo}\n")},
			{"mail.yaml", []byte(mailCatalogue)},
		},
		want: []want{{kind: ToolSpecsFile, toolspecs: 2, live: 1}, {kind: CatalogueFile, adapters: 1}},
	}, {
		name:  "JSON, read as YAML, with lines",
		files: []FileInput{{"t.json", []byte("{\"toolspecs\": [\n  {\"tool_id\": \"t\",\n   \"execution_mode\": \"remote\",\n   \"adapter_id\": \"loki\",\n   \"adapter_operation\": \"query\"}]}")}},
		want: []want{{kind: ToolSpecsFile, toolspecs: 1, problems: []string{
			`t.json:5: toolspecs[0].adapter_operation: assertion 3 (adapter operation) failed for ToolSpec "t": adapter_operation: invalid operation "query" for adapter "loki" (v1.0.0); fix: use one of: query_logs`,
		}}},
	}, {
		name:  "a ToolSpecs file's own problems come before the assertions",
		files: []FileInput{{"t.yaml", []byte("toolspecs:\n  - tool_id: t\n    execution_mode: remote\n    adapterId: loki\n")}},
		want: []want{{kind: ToolSpecsFile, problems: []string{
			`t.yaml:4: toolspecs[0].adapterId: unknown field "adapterId" (did you mean "adapter_id"?)`,
		}}},
	}, {
		name: "a broken catalogue leaves the ToolSpecs unchecked, not failing assertion 2",
		files: []FileInput{
			{"bad.yaml", []byte(strings.Replace(mailCatalogue, "status: frozen", "status: cold", 1))},
			{"tools.yaml", []byte("toolspecs:\n  - {tool_id: n, execution_mode: remote, adapter_id: acme-mail, adapter_operation: send}\n")},
			{"live.yaml", []byte("toolspecs:\n  - {tool_id: m, execution_mode: remote, adapter_id: mcp, adapter_operation: echo}\n")},
		},
		want: []want{
			{kind: CatalogueFile, problems: []string{`bad.yaml:4: adapters[0].status: "cold" is not a status: frozen or draft`}},
			{kind: ToolSpecsFile, toolspecs: 1, unchecked: []string{"bad.yaml"}},
			{kind: ToolSpecsFile, toolspecs: 1, live: 1},
		},
	}, {
		name: "an adapter defined twice: the second file has the problem",
		files: []FileInput{
			{"a.yaml", []byte(mailCatalogue)},
			{"b.yaml", []byte("\n" + mailCatalogue)},
		},
		want: []want{
			{kind: CatalogueFile, adapters: 1},
			{kind: CatalogueFile, problems: []string{`b.yaml:3: adapters[0].adapter_id: adapter "acme-mail" is defined both in a.yaml and in b.yaml; keep one`}},
		},
	}, {
		name: "neither kind",
		files: []FileInput{
			{"x.yaml", []byte("- toolspecs\n")},
			{"y.yaml", []byte("a: [\n")},
			{"z.yaml", []byte("# nothing\n")},
			{"c.yaml", []byte("agents: []\ntoolspecs: []\n")},
			{"d.yaml", []byte("adapters: []\ntoolspecs: []\n")},
		},
		want: []want{{unknown: true}, {unknown: true}, {unknown: true}, {unknown: true}, {unknown: true}},
	}, {
		name:  "merge keys at the top level are read",
		files: []FileInput{{"m.yaml", []byte("base: &b {toolspecs: []}\n<<: *b\n")}},
		want:  []want{{kind: ToolSpecsFile, problems: []string{`m.yaml:1: base: unknown field "base"`}}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := CheckFiles(tc.files...)
			if len(got) != len(tc.want) {
				t.Fatalf("%d reports for %d files", len(got), len(tc.want))
			}
			for i, w := range tc.want {
				r := got[i]
				if r.Name != tc.files[i].Name {
					t.Errorf("report %d names %q", i, r.Name)
				}
				if w.unknown {
					if !errors.Is(r.Err, ErrUnknownFile) || r.Kind != "" || r.OK() || !strings.HasPrefix(r.Err.Error(), r.Name+":") {
						t.Errorf("%s: want an ErrUnknownFile naming the file, got %+v", r.Name, r)
					}
					continue
				}
				var problems []string
				for _, p := range r.Problems {
					problems = append(problems, p.Error())
				}
				if r.Err != nil || r.Kind != w.kind || !slices.Equal(problems, w.problems) || r.Adapters != w.adapters ||
					r.ToolSpecs != w.toolspecs || r.Live != w.live || !slices.Equal(r.Unchecked, w.unchecked) {
					t.Errorf("%s: got %+v\nproblems %q\nwant %+v", r.Name, r, problems, w)
				}
				if ok := len(w.problems) == 0 && len(w.unchecked) == 0; r.OK() != ok {
					t.Errorf("%s: OK() = %v", r.Name, r.OK())
				}
			}
		})
	}
}

// TestCheckFilesAgreesWithParse: a file CheckFiles takes for a catalogue
// or a ToolSpecs file is reported as ParseCatalogue or ParseToolSpecs
// reports it.
func TestCheckFilesAgreesWithParse(t *testing.T) {
	t.Parallel()
	for _, data := range []string{
		mailCatalogue,
		"adapters:\n  - adapter_id: X\n    version: v1\n",
		"toolspecs:\n  - {tool_id: a, execution_mode: sideways}\n  - {tool_id: a, execution_mode: local}\n",
		"toolspecs:\n  - {tool_id: a, execution_mode: local, input_schema: {type: 5}}\n",
	} {
		r := CheckFiles(FileInput{"f.yaml", []byte(data)})[0]
		var err error
		switch r.Kind {
		case CatalogueFile:
			_, err = ParseCatalogue("f.yaml", []byte(data))
		case ToolSpecsFile:
			_, err = ParseToolSpecs("f.yaml", []byte(data))
		default:
			t.Fatalf("%q: kind %q, err %v", data, r.Kind, r.Err)
		}
		var want ParseErrors
		errors.As(err, &want)
		if !slices.Equal(r.Problems, want) {
			t.Errorf("%q:\nCheckFiles %v\nparse      %v", data, r.Problems, want)
		}
	}
}
