package langgraph_test

import (
	"fmt"

	"github.com/pactum/pactum/agent/langgraph"
)

// The thread of a conversation is derived from the agent's name and the
// context id, so every node and every restart finds the same one.
func ExampleThreadID() {
	fmt.Println(langgraph.ThreadID("researcher", "ctx-1"))
	fmt.Println(langgraph.ThreadID("researcher", "ctx-1") == langgraph.ThreadID("researcher", "ctx-1"))
	// Output:
	// 26d10de7-6859-5274-bfb2-21839898c356
	// true
}
