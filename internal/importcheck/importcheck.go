// Package importcheck is for the tests that keep a package's imports in
// bounds (a leaf that imports only the standard library, the domain core
// that imports no transport): it lists what the package's own files
// import, test files left out.
package importcheck

import (
	"go/build"
	"strings"
	"testing"
)

// Std reports whether path is a standard-library import (its first
// element has no dot).
func Std(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// Only fails t for each import of the package in dir (its non-test
// files) that is neither of the standard library nor allowed; name names
// the package in the failures.
func Only(t testing.TB, dir, name string, allowed func(path string) bool) {
	t.Helper()
	pkg, err := build.ImportDir(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range pkg.Imports {
		if !Std(path) && (allowed == nil || !allowed(path)) {
			t.Errorf("%s imports %s", name, path)
		}
	}
}

// OTelAPI reports whether path is the OpenTelemetry API (go.opentelemetry.io/otel
// and its packages), which the core and push may import, and not its SDK,
// which only the binary's assembly sets up.
func OTelAPI(path string) bool {
	return path == "go.opentelemetry.io/otel" ||
		strings.HasPrefix(path, "go.opentelemetry.io/otel/") && !strings.HasPrefix(path, "go.opentelemetry.io/otel/sdk")
}
