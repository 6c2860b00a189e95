package push_test

import (
	"testing"

	"github.com/pactum/pactum/internal/importcheck"
)

// TestImports: package push speaks to the core (package task) and sends A2A
// JSON, so of pactum it imports task and the internal leaves it is built on
// (the A2A mapping, backoff, the HTTP status policy, the address guard), and
// outside pactum only the A2A types and the OpenTelemetry API. Never a
// transport: a2aserver imports push, not the other way round.
func TestImports(t *testing.T) {
	t.Parallel()
	importcheck.Only(t, ".", "push", func(path string) bool {
		switch path {
		case "github.com/pactum/pactum/task",
			"github.com/pactum/pactum/internal/a2amap",
			"github.com/pactum/pactum/internal/backoff",
			"github.com/pactum/pactum/internal/httpstatus",
			"github.com/pactum/pactum/internal/netguard",
			"github.com/a2aproject/a2a-go/v2/a2a":
			return true
		}
		return importcheck.OTelAPI(path)
	})
}
