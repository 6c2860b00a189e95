// Package builtin registers every runtime type that ships with pactum and
// that configuration can select (a2a, crewai, echo, exec, langgraph, mcp,
// openai, python, webhook). Import it for its side effect:
//
//	import _ "github.com/pactum/pactum/agent/builtin"
//
// The function runtime is not among them: it serves Go functions and is
// built in code with package function.
package builtin

import (
	_ "github.com/pactum/pactum/agent/a2a"
	_ "github.com/pactum/pactum/agent/crewai"
	_ "github.com/pactum/pactum/agent/echo"
	_ "github.com/pactum/pactum/agent/exec"
	_ "github.com/pactum/pactum/agent/langgraph"
	_ "github.com/pactum/pactum/agent/mcp"
	_ "github.com/pactum/pactum/agent/openai"
	_ "github.com/pactum/pactum/agent/python"
	_ "github.com/pactum/pactum/agent/webhook"
)
