// Package pythontest holds what the tests of the python runtime share
// across packages.
package pythontest

import (
	"os"
	"os/exec"
	"testing"
)

// Need skips t when there is no python3 on PATH, and fails it instead
// when PACTUM_REQUIRE_PYTHON is set (CI sets it: the python runtime's
// tests must run there).
func Need(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("PACTUM_REQUIRE_PYTHON") != "" {
			t.Fatalf("python3: %v (PACTUM_REQUIRE_PYTHON is set)", err)
		}
		t.Skip("no python3 in PATH")
	}
}
