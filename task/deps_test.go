package task_test

import (
	"testing"

	"github.com/pactum/pactum/internal/importcheck"
)

// TestCoreImports: the domain core imports the standard library, the
// OpenTelemetry API and, of pactum, only internal/backoff, a leaf that
// imports only the standard library (its own test checks that). Transports,
// stores and runtimes speak to the core, never the other way round.
func TestCoreImports(t *testing.T) {
	t.Parallel()
	importcheck.Only(t, ".", "task", func(path string) bool {
		return path == "github.com/pactum/pactum/internal/backoff" || importcheck.OTelAPI(path)
	})
}
