package toolspec_test

import (
	"fmt"

	"github.com/pactum/pactum/toolspec"
)

// A ToolSpec naming an operation its adapter does not have fails
// assertion 3, with what would fix it.
func ExampleRegistry_Check() {
	reg, err := toolspec.NewRegistry(toolspec.Default())
	if err != nil {
		panic(err)
	}
	tss, err := toolspec.ParseToolSpecs("tools.yaml", []byte(`toolspecs:
  - tool_id: vector-search
    execution_mode: remote
    adapter_id: qdrant-vector
    adapter_operation: serch
`))
	if err != nil {
		panic(err)
	}
	for _, v := range reg.Check(tss[0]) {
		fmt.Println(v)
	}
	// Output:
	// assertion 3 (adapter operation) failed for ToolSpec "vector-search": adapter_operation: invalid operation "serch" for adapter "qdrant-vector" (v1.0.0); fix: use one of: create_collection, health_check, search, upsert (did you mean "search"?)
}

// Replacing the registry re-checks the ToolSpecs of every adapter whose
// contract changed (assertion 6).
func ExampleSet_Replace() {
	reg, _ := toolspec.NewRegistry(toolspec.Default())
	set := toolspec.NewSet(reg)
	set.Put(toolspec.ToolSpec{ToolID: "logs", ExecutionMode: toolspec.Remote, AdapterID: "loki", AdapterOperation: "query_logs"})
	set.Put(toolspec.ToolSpec{ToolID: "metrics", ExecutionMode: toolspec.Remote, AdapterID: "prometheus", AdapterOperation: "query_metrics"})

	// loki 2.0.0 renames query_logs.
	cat := toolspec.Default()
	for i, a := range cat.Adapters {
		if a.AdapterID == "loki" {
			cat.Adapters[i].Version = "2.0.0"
			cat.Adapters[i].Operations = map[string]toolspec.Operation{"query": a.Operations["query_logs"]}
		}
	}
	next, _ := toolspec.NewRegistry(cat)
	for tool, vs := range set.Replace(next) {
		for _, v := range vs {
			fmt.Println(tool+":", v.Assertion, v.Field)
		}
	}
	// Output:
	// logs: contract version adapter_contract_version
	// logs: contract version adapter_operation
}

// CheckFiles checks catalogue and ToolSpecs files together, with no
// configuration: the catalogues join the default one, and each ToolSpec's
// violations are placed at its field's line.
func ExampleCheckFiles() {
	reports := toolspec.CheckFiles(
		toolspec.FileInput{Name: "mail.yaml", Data: []byte(`adapters:
  - adapter_id: acme-mail
    version: 2.0.0
    status: frozen
    operations:
      send: {description: Send a mail.}
`)},
		toolspec.FileInput{Name: "tools.yaml", Data: []byte(`toolspecs:
  - tool_id: notify
    execution_mode: remote
    adapter_id: acme-mail
    adapter_operation: send
`)},
	)
	for _, r := range reports {
		fmt.Println(r.Name, r.Kind, r.OK())
		for _, p := range r.Problems {
			fmt.Println(p)
		}
	}
	// Output:
	// mail.yaml catalogue true
	// tools.yaml ToolSpecs file false
	// tools.yaml:2: toolspecs[0].adapter_contract_version: assertion 4 (contract version) failed for ToolSpec "notify": adapter_contract_version: contract version mismatch: adapter v2.0.0 != ToolSpec v1.0.0; fix: review the mapping against adapter acme-mail v2.0.0 and set adapter_contract_version: 2.0.0
}
