// Command pactum serves any agent as a durable A2A server. See
// internal/cli for the commands.
package main

import (
	"os"

	"github.com/pactum/pactum/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) }
