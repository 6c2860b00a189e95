package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pactum/pactum/config"
)

// TestParseAgentVersion checks the `version` of an agent: taken as
// written, and refused, at its position and field path, when it is empty,
// too long, padded or holds a control character.
func TestParseAgentVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ value, want string }{
		{"1.2.3", "1.2.3"},
		{"1.10", "1.10"}, // a YAML float, kept as written
		{"2026-05-01", "2026-05-01"},
		{`"v2 beta"`, "v2 beta"},
	} {
		c, err := config.Parse([]byte("agents:\n  - name: a\n    type: echo\n    version: "+tc.value+"\n"), "a.yaml")
		if err != nil {
			t.Errorf("version: %s: %v", tc.value, err)
			continue
		}
		if c.Agents[0].Version != tc.want {
			t.Errorf("version: %s parsed as %q, want %q", tc.value, c.Agents[0].Version, tc.want)
		}
	}
	c, err := config.Parse([]byte(oneAgent), "a.yaml")
	if err != nil || c.Agents[0].Version != "" {
		t.Errorf("default version = %q, %v; want \"\" (the card says 0.0.0)", c.Agents[0].Version, err)
	}
	for _, tc := range []struct{ value, want string }{
		{`""`, `a.yaml:4:14: agents[0].version: must not be empty`},
		{strings.Repeat("9", 65), `a.yaml:4:14: agents[0].version: version "` + strings.Repeat("9", 65) + `" is longer than 64 characters`},
		{`" 1.0"`, `a.yaml:4:14: agents[0].version: version " 1.0" starts or ends with a space`},
		{`"1.0\u0007"`, `a.yaml:4:14: agents[0].version: version "1.0\a" contains a control character`},
		{`{major: 1}`, `a.yaml:4:14: agents[0].version: expected a string, got a mapping`},
		{`[1, 2]`, `a.yaml:4:14: agents[0].version: expected a string`},
	} {
		_, err := config.Parse([]byte("agents:\n  - name: a\n    type: echo\n    version: "+tc.value+"\n"), "a.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("version: %s: %v, want an error containing %q", tc.value, err, tc.want)
		}
	}
	_, err = config.Parse([]byte("definitions:\n  dirs: [a]\n  runtimes:\n    local: {type: echo, version: 1.0.0}\n"), "a.yaml")
	if want := `a.yaml:4:25: definitions.runtimes.local.version: not allowed on a definitions runtime`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("version on a definitions runtime: %v, want %q", err, want)
	}
}

// TestCheckCard checks the card fields of an agent built in code, as
// pactum.Func's options build it: every problem is reported, each under
// its field's path.
func TestCheckCard(t *testing.T) {
	t.Parallel()
	a := config.NewAgent("greeter")
	if err := a.CheckCard(); err != nil {
		t.Fatalf("NewAgent: %v", err)
	}
	a.Version = "1.0.0"
	a.Skills = []config.Skill{{ID: "greet"}, {ID: "wave"}}
	a.InputModes = []string{"text/plain", "application/json; charset=utf-8"}
	if err := a.CheckCard(); err != nil {
		t.Fatalf("a valid card: %v", err)
	}

	a.Version = " 1.0"
	a.Skills = []config.Skill{{ID: "greet"}, {ID: ""}, {ID: "greet"}}
	a.InputModes = []string{"text/plain", "plain"}
	a.OutputModes = nil
	err := a.CheckCard()
	var es config.Errors
	if !errors.As(err, &es) {
		t.Fatalf("CheckCard = %v (%T), want config.Errors", err, err)
	}
	want := []string{
		`version: version " 1.0" starts or ends with a space`,
		`skills[1].id: required`,
		`skills[2].id: duplicate skill id "greet"`,
		`input_modes[1]: invalid media type "plain"`,
		`output_modes: must list at least one media type`,
	}
	if got := strings.Split(err.Error(), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("CheckCard:\n%s\nwant:\n%s", err, strings.Join(want, "\n"))
	}
}
