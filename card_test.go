package pactum_test

import (
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/pactum/pactum"
	"github.com/pactum/pactum/a2aserver"
	"github.com/pactum/pactum/config"
)

// TestFuncCard serves a function whose card is set from Go — version,
// skills, media types — and reads the card with the official resolver
// over HTTP: it says what the options said, the trust model of a server
// without auth included, and the agent still answers.
func TestFuncCard(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	s := serve(t, greeter().
		Describe("Greets whoever it is given.").
		Version("1.4.0").
		Skills(
			pactum.Skill{ID: "greet", Examples: []string{"world"}},
			pactum.Skill{ID: "wave", Name: "Wave", Description: "Waves back.", Tags: []string{"social"}},
		).
		InputModes("text/plain", "application/json").
		OutputModes("text/markdown"))

	card, err := agentcard.DefaultResolver.Resolve(ctx, s.url+"/agents/greeter")
	if err != nil {
		t.Fatal(err)
	}
	if card.Version != "1.4.0" || card.Description != "Greets whoever it is given." {
		t.Fatalf("card version %q, description %q", card.Version, card.Description)
	}
	if strings.Join(card.DefaultInputModes, ",") != "text/plain,application/json" || strings.Join(card.DefaultOutputModes, ",") != "text/markdown" {
		t.Fatalf("card modes %v → %v", card.DefaultInputModes, card.DefaultOutputModes)
	}
	if len(card.Skills) != 2 {
		t.Fatalf("card skills = %+v, want greet and wave", card.Skills)
	}
	greet, wave := card.Skills[0], card.Skills[1]
	if greet.ID != "greet" || greet.Name != "greet" || greet.Description != "Greets whoever it is given." ||
		strings.Join(greet.Tags, ",") != "greeter" || strings.Join(greet.Examples, ",") != "world" {
		t.Fatalf("skill greet (defaults filled in) = %+v", greet)
	}
	if wave.ID != "wave" || wave.Name != "Wave" || wave.Description != "Waves back." || strings.Join(wave.Tags, ",") != "social" {
		t.Fatalf("skill wave = %+v", wave)
	}
	var trust map[string]any
	for _, e := range card.Capabilities.Extensions {
		if e.URI == a2aserver.TrustModelURI {
			trust = e.Params
		}
	}
	if trust["authentication"] != "none" || trust["actor"] != "self-asserted" {
		t.Fatalf("trust model of a server without auth = %v", trust)
	}
	if tk := send(ctx, t, s.url+"/agents/greeter", "world", nil); artifactText(tk) != "hello, world" {
		t.Fatalf("answer %q", artifactText(tk))
	}

	// Without the options the card has the defaults.
	d := serve(t, greeter())
	card, err = agentcard.DefaultResolver.Resolve(ctx, d.url+"/agents/greeter")
	if err != nil {
		t.Fatal(err)
	}
	if card.Version != "0.0.0" || len(card.Skills) != 1 || card.Skills[0].ID != "greeter" || card.DefaultInputModes[0] != "text/plain" {
		t.Fatalf("default card: version %q, skills %+v, modes %v", card.Version, card.Skills, card.DefaultInputModes)
	}
}

// TestFuncCardErrors checks that Serve and Handler refuse invalid card
// options before starting anything, naming the agent and each field.
func TestFuncCardErrors(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	bad := func() pactum.Option {
		return greeter().
			Version(" 1.0").
			Skills(pactum.Skill{ID: "greet"}, pactum.Skill{Name: "no id"}, pactum.Skill{ID: "greet"}).
			InputModes().
			OutputModes("markdown")
	}
	want := []string{
		`pactum: agent "greeter": version: version " 1.0" starts or ends with a space`,
		`pactum: agent "greeter": skills[1].id: required`,
		`pactum: agent "greeter": skills[2].id: duplicate skill id "greet"`,
		`pactum: agent "greeter": input_modes: must list at least one media type`,
		`pactum: agent "greeter": output_modes[0]: invalid media type "markdown"`,
	}
	ln := listen(t)
	err := pactum.Serve(ctx, bad(), pactum.Store(sqliteDSN(t)), pactum.Listener(ln))
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Fatalf("Serve = %v\nwant:\n%s", err, strings.Join(want, "\n"))
	}
	if _, err := ln.Accept(); err == nil {
		t.Fatal("Serve left the listener open after refusing its options")
	}
	h, err := pactum.Handler(ctx, bad(), pactum.Store(sqliteDSN(t)))
	if h != nil || err == nil || err.Error() != strings.Join(want, "\n") {
		t.Fatalf("Handler = %v, %v\nwant:\n%s", h, err, strings.Join(want, "\n"))
	}
	// An empty version is the default, not an error.
	if h, err := pactum.Handler(ctx, greeter().Version(""), pactum.Store(sqliteDSN(t))); err != nil || h == nil {
		t.Fatalf("Handler with Version(\"\") = %v", err)
	}
}

// TestConfigCards serves a configuration and reads its cards over HTTP: an
// agent's `version` is its card's; a sensitive agent that simulates says
// so and requires no approval references (and a call without them
// succeeds), one whose dry run an approval covers still requires them, as
// does one that does not simulate; with auth: bearer the trust model says
// so.
func TestConfigCards(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	cfg, err := config.Parse([]byte(`
agents:
  - {name: echo, type: echo, version: 2.0.1}
  - {name: deploy, type: echo, sensitive: true}
  - {name: rollback, type: echo, sensitive: true, dry_run: true}
  - {name: release, type: echo, sensitive: true, dry_run: false}
policy:
  approvals:
    - {id: ok-rollback, actions: [rollback]}
`), "pactum.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := serve(t, pactum.Config(cfg))
	card := func(agent string) *a2a.AgentCard {
		c, err := agentcard.DefaultResolver.Resolve(ctx, s.url+"/agents/"+agent)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	action := func(c *a2a.AgentCard) map[string]any {
		for _, e := range c.Capabilities.Extensions {
			if e.URI == a2aserver.CapabilityProfileURI {
				return e.Params["actions"].([]any)[0].(map[string]any)
			}
		}
		t.Fatalf("card %s has no capability profile", c.Name)
		return nil
	}
	requires := func(a map[string]any) string {
		var out []string
		for _, r := range a["requires"].([]any) {
			out = append(out, r.(string))
		}
		return strings.Join(out, ",")
	}

	if c := card("echo"); c.Version != "2.0.1" {
		t.Errorf("echo's card version = %q, want 2.0.1 from the configuration", c.Version)
	}
	for _, tc := range []struct {
		agent     string
		simulates bool
		requires  string
	}{
		{"deploy", true, "actor"},
		{"rollback", true, "actor,policyRef,approvalRef"},
		{"release", false, "actor,policyRef,approvalRef"},
	} {
		c := card(tc.agent)
		a := action(c)
		if a["dryRun"] != tc.simulates || requires(a) != tc.requires {
			t.Errorf("%s's profile: dryRun %v, requires %s; want %v, %s", tc.agent, a["dryRun"], requires(a), tc.simulates, tc.requires)
		}
		if says := strings.Contains(c.Description, "Simulation (dry run)"); says != tc.simulates {
			t.Errorf("%s's description %q: says it simulates %v, want %v", tc.agent, c.Description, says, tc.simulates)
		}
	}
	// The card tells the truth: deploy runs, as a simulation, without
	// references; release is refused without them.
	if tk := send(ctx, t, s.url+"/agents/deploy", "go", nil); tk.Status.State != a2a.TaskStateCompleted || len(tk.Artifacts) == 0 || tk.Artifacts[0].ID != "dry-run" {
		t.Errorf("deploy without references: %s %+v, want completed as a dry run", tk.Status.State, tk.Artifacts)
	}
	if tk := send(ctx, t, s.url+"/agents/release", "go", nil); tk.Status.State != a2a.TaskStateRejected {
		t.Errorf("release without references: %s, want rejected", tk.Status.State)
	}

	// With auth: bearer the card's trust model says callers present a token.
	authCfg, err := config.Parse([]byte(`
auth: bearer
agents: [{name: echo, type: echo}]
actors: [{name: ops, actions: ["*"], token_sha256: 1ec1c26b50d5d3c58d9583181af8076655fe00756bf7285940ba3670f99fcba0}]
`), "auth.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a := serve(t, pactum.Config(authCfg))
	c, err := agentcard.DefaultResolver.Resolve(ctx, a.url+"/agents/echo")
	if err != nil {
		t.Fatal(err)
	}
	var trust map[string]any
	for _, e := range c.Capabilities.Extensions {
		if e.URI == a2aserver.TrustModelURI {
			trust = e.Params
		}
	}
	if trust["authentication"] != "bearer" || trust["actor"] != "token" || len(c.SecurityRequirements) != 1 {
		t.Errorf("trust model with auth: bearer = %v, security %+v", trust, c.SecurityRequirements)
	}
}
