package task_test

import (
	"go/build"
	"strings"
	"testing"
)

// TestCoreImports: the domain core imports the standard library, the
// OpenTelemetry API and, of pactum, only internal/backoff, a leaf that
// imports only the standard library (its own test checks that). Transports,
// stores and runtimes speak to the core, never the other way round.
func TestCoreImports(t *testing.T) {
	t.Parallel()
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range pkg.Imports {
		first, _, _ := strings.Cut(path, "/")
		switch {
		case !strings.Contains(first, "."): // the standard library
		case path == "github.com/pactum/pactum/internal/backoff":
		case path == "go.opentelemetry.io/otel" || strings.HasPrefix(path, "go.opentelemetry.io/otel/") && !strings.HasPrefix(path, "go.opentelemetry.io/otel/sdk"):
		default:
			t.Errorf("task imports %s", path)
		}
	}
}
