package exec_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/agenttest"
	pexec "github.com/pactum/pactum/agent/exec"
)

// TestRoleTemplates: an exec runtime built for an agent definition (Role)
// hands its command the role body as {{.System}}, the tools
// comma-separated as {{.Tools}} (and as a list to range over), and the
// model through models as {{.Model}}; {{.Arguments}} is the arguments
// the task's input carries (metadata.pactum.arguments).
func TestRoleTemplates(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		role   *agent.Role
		models map[string]string
		want   []string // system, tools, each tool, model
	}{
		{"mapped alias", &agent.Role{System: "You review.\nBe brief.", Tools: []string{"Read", "Bash(git diff:*)"}, Model: "sonnet"},
			map[string]string{"sonnet": "claude-sonnet-4-5"}, []string{"You review.\nBe brief.", "Read,Bash(git diff:*)", "[Read][Bash(git diff:*)]", "claude-sonnet-4-5"}},
		{"alias without an entry", &agent.Role{System: "s", Model: "opus"}, nil, []string{"s", "", "", "opus"}},
		{"inherit", &agent.Role{System: "s", Model: "inherit"}, nil, []string{"s", "", "", ""}},
		{"no model, inherit mapped", &agent.Role{System: "s"}, map[string]string{"inherit": "gpt-5"}, []string{"s", "", "", "gpt-5"}},
		{"no role", nil, map[string]string{"inherit": "gpt-5"}, []string{"", "", "", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := pexec.New(pexec.Settings{
				Command: []string{"testdata/args.sh", "{{.System}}", "{{.Tools}}", "{{range .Tools}}[{{.}}]{{end}}", "{{.Model}}", "{{.Arguments}}"},
				Input:   pexec.InputNone, Models: tc.models, Role: tc.role,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			req := agenttest.Request("x")
			req.Envelope.Input.Metadata = map[string]any{"pactum": map[string]any{"arguments": "--fast now"}}
			res, err := r.Invoke(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Join(append(tc.want, "--fast now"), "\n")
			if got := agenttest.ResultText(t, res); got != want {
				t.Errorf("arguments =\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestModelsSetting: models is configuration; an empty alias is refused.
func TestModelsSetting(t *testing.T) {
	t.Parallel()
	b := setup(t, "command: [./args.sh, '{{.Model}}']\ninput: none\nmodels: {inherit: m1}\n")
	if got := agenttest.ResultText(t, b.invoke(t, "x")); got != "" {
		t.Errorf("an agent that is not a definition: {{.Model}} = %q, want empty", got)
	}
	spec := agenttest.Spec(t, "exec", "command: [a]\nmodels: {'': m}\n")
	if _, err := agent.New(context.Background(), spec); err == nil || !strings.Contains(err.Error(), "models:") {
		t.Errorf("empty alias: %v", err)
	}
	spec = agenttest.Spec(t, "exec", "command: [a]\nrole: {system: x}\n")
	if _, err := agent.New(context.Background(), spec); err == nil || !strings.Contains(err.Error(), "role") {
		t.Errorf("role in configuration: %v, want an unknown field", err)
	}
}
