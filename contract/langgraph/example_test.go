package langgraph_test

import (
	"fmt"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/langgraph"
)

// A ReAct graph, as getGraph().toJSON() prints it: the loop back from the
// tools is kept in metadata, the conditional edge is an optional
// dependency.
func ExampleToContract() {
	c, err := langgraph.New().ToContract([]byte(`{
	  "nodes": [{"id": "__start__"}, {"id": "agent"}, {"id": "tools"}, {"id": "__end__"}],
	  "edges": [{"source": "__start__", "target": "agent"}, {"source": "tools", "target": "agent"},
	            {"source": "agent", "target": "tools", "conditional": true}, {"source": "agent", "target": "__end__", "conditional": true}]}`),
		contract.AdapterOptions{})
	if err != nil {
		panic(err)
	}
	for _, st := range c.Steps {
		fmt.Println(st.ID, st.DependsOn, st.Metadata[langgraph.MetaConditionalFrom], st.Metadata[langgraph.MetaLoopsFrom])
	}
	// Output:
	// agent [] <nil> [tools]
	// tools [agent] [agent] <nil>
}
