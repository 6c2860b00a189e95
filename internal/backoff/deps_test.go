package backoff_test

import (
	"go/build"
	"strings"
	"testing"
)

// TestLeaf: package backoff imports only the standard library, so that
// the domain core (package task) may import it without depending on any
// other pactum package.
func TestLeaf(t *testing.T) {
	t.Parallel()
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range pkg.Imports {
		if first, _, _ := strings.Cut(path, "/"); strings.Contains(first, ".") {
			t.Errorf("backoff imports %s", path)
		}
	}
}
