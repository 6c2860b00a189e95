package toolspec_test

import (
	"fmt"

	"github.com/pactum/pactum/toolspec"
)

// ExampleClassify classifies a change to a frozen contract and checks its
// version bump.
func ExampleClassify() {
	old, _ := toolspec.ParseCatalogue("v1.yaml", []byte(`adapters:
  - adapter_id: qdrant-vector
    version: 1.0.0
    status: frozen
    operations:
      search:
        input_schema: {type: object, properties: {vector: {type: array}}, required: [vector]}
      create_collection: {}
`))
	cur, _ := toolspec.ParseCatalogue("v2.yaml", []byte(`adapters:
  - adapter_id: qdrant-vector
    version: 1.1.0
    status: frozen
    operations:
      search:
        input_schema: {type: object, properties: {vector: {type: array}, filter: {type: object}}, required: [vector]}
`))
	for _, c := range toolspec.Classify(old, cur) {
		fmt.Println(c)
	}
	for _, v := range toolspec.CheckBumps(old, cur) {
		fmt.Println(v.Fix)
	}
	// Output:
	// MAJOR qdrant-vector.create_collection operation_removed: operation "create_collection" removed
	// MINOR qdrant-vector.search input_property_added: input.filter: optional property "filter" added
	// set version: 2.0.0, or undo the change
}

// ExampleNewLock locks a contract: its hash does not depend on how the
// catalogue was written.
func ExampleNewLock() {
	a, _ := toolspec.ParseCatalogue("a.yaml", []byte("adapters: [{adapter_id: x, version: 1.0.0, status: draft, operations: {op: {input_schema: {type: integer, maximum: 10}}}}]"))
	b, _ := toolspec.ParseCatalogue("b.json", []byte(`{"adapters": [{"status": "draft", "operations": {"op": {"input_schema": {"maximum": 10.0, "type": "integer"}}}, "version": "1.0.0", "adapter_id": "x"}]}`))
	la, _ := toolspec.NewLock(a)
	lb, _ := toolspec.NewLock(b)
	fmt.Println(la.Adapters["x"].SHA256 == lb.Adapters["x"].SHA256)
	fmt.Println(string(la.Adapters["x"].Contract))
	// Output:
	// true
	// {"adapter_id":"x","operations":{"op":{"input_schema":{"maximum":10,"type":"integer"}}},"status":"draft","version":"1.0.0"}
}
