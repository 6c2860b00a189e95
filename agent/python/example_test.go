package python_test

import (
	"fmt"

	"github.com/pactum/pactum/agent/python"
)

// A LangGraph graph as an agent. Nothing starts until the first attempt:
// then the worker imports myagents.graph and finds app's shape.
func ExampleNew() {
	r, err := python.New(python.Settings{Object: "myagents.graph:app", Python: ".venv/bin/python"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	md := r.Metadata()
	fmt.Println(md.Type, md.Streaming)
	fmt.Println(md.Description)

	_, err = python.New(python.Settings{Object: "myagents.graph"})
	fmt.Println(err)
	_, err = python.New(python.Settings{Object: "myagents.graph:app", Framework: "autogen"})
	fmt.Println(err)
	// Output:
	// python true
	// Runs the Python object myagents.graph:app
	// object: "myagents.graph" is not package.module:attr (e.g. myagents.graph:app)
	// framework: "autogen" is not one of auto, langgraph, langchain, crewai, callable
}
