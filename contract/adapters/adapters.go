// Package adapters gathers pactum's built-in protocol adapters (a2a,
// autogen, crewai, langgraph, mcp, specwright) in a registry. It exists because contract cannot import its
// own subpackages.
package adapters

import (
	"fmt"
	"sync"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/a2a"
	"github.com/pactum/pactum/contract/autogen"
	"github.com/pactum/pactum/contract/crewai"
	"github.com/pactum/pactum/contract/langgraph"
	"github.com/pactum/pactum/contract/mcp"
	"github.com/pactum/pactum/contract/specwright"
)

// Builtin returns the built-in adapters, in protocol order.
func Builtin() []contract.ProtocolAdapter {
	return []contract.ProtocolAdapter{a2a.New(), autogen.New(), crewai.New(), langgraph.New(), mcp.New(), specwright.New()}
}

// New returns a new registry holding the built-in adapters. Registering
// them also registers specwright's file-export validator (once per
// process).
func New() (*contract.Registry, error) {
	r := contract.NewRegistry()
	for _, a := range Builtin() {
		if err := r.Register(a); err != nil {
			return nil, fmt.Errorf("adapters: %w", err)
		}
	}
	return r, nil
}

var defaultRegistry = sync.OnceValues(New)

// Default returns the process's shared registry of the built-in adapters
// (made on first use). Adapters registered on it are seen by every user
// of Default; make your own with New or contract.NewRegistry to keep them
// apart. It panics if the built-in adapters cannot be registered (a name
// clash with a validator registered before: a programming error).
func Default() *contract.Registry {
	r, err := defaultRegistry()
	if err != nil {
		panic(err)
	}
	return r
}
