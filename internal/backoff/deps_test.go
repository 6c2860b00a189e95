package backoff_test

import (
	"testing"

	"github.com/pactum/pactum/internal/importcheck"
)

// TestLeaf: package backoff imports only the standard library, so that
// the domain core (package task) may import it without depending on any
// other pactum package.
func TestLeaf(t *testing.T) {
	t.Parallel()
	importcheck.Only(t, ".", "backoff", nil)
}
