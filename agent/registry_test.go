package agent_test

import (
	"testing"

	"github.com/pactum/pactum/agent"
)

// A runtime's working-directory setting is resolved against the
// configuration's directory one way for every runtime (exec, mcp, python).
func TestSpecWorkDir(t *testing.T) {
	for _, tc := range []struct{ base, dir, want string }{
		{"/etc/pactum", "", "/etc/pactum"},
		{"/etc/pactum", "agents/x", "/etc/pactum/agents/x"},
		{"/etc/pactum", "../x", "/etc/x"},
		{"/etc/pactum", "/srv/x", "/srv/x"},
		{"", "rel", "rel"},
		{"", "", ""},
	} {
		if got := (agent.Spec{BaseDir: tc.base}).WorkDir(tc.dir); got != tc.want {
			t.Errorf("WorkDir(%q) under %q = %q, want %q", tc.dir, tc.base, got, tc.want)
		}
	}
}
