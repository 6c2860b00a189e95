package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pactum/pactum/config"
)

// FuzzParse feeds arbitrary bytes to Parse: it must never panic, must return
// either a config or positioned errors, and a config it returns must hold
// its invariants. Decoding the settings of a parsed config must not panic
// either.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "examples", "*.yaml"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, seed := range []string{
		"",
		oneAgent,
		"agents:\n  - &a {name: a, type: echo, retry: {<<: *a}}\n",
		"x-d: &d {max_attempts: 2}\nagents:\n  - {name: a, type: exec, retry: *d, exec: {<<: [*d, *d]}}\n",
		"agents: [{name: a, type: echo, sensitive: true}]\nactors: [{name: b, actions: [a]}]\npolicy: {approvals: [{id: p, actions: [a], actors: [b], expires: 2027-01-01}]}\n",
		"a: &a [*a, *a]\n",
		oneAgent + "definitions: {dirs: [d], runtimes: {l: &l {type: echo, retry: {max_attempts: 2}}, m: *l}}\nworkflows:\n  - {name: w, steps: [a, {parallel: [b, a]}, {parallel: []}, {}, [x]]}\n",
		"%YAML 1.1\n---\nagents: []\n...\n---\n",
		"auth: {mode: oidc, issuer: \"https://id.example\", audience: [a, b], algorithms: [ES256], leeway: 1s, actor_claim: client_id, actions_claim: scope}\n" + oneAgent + "actors: [{name: b, actions: [a], subject: s}]\n",
		"auth: &m {mode: oidc, <<: *m}\n" + oneAgent,
		"workers: {processes: 2, others: 1024}\n" + oneAgent,
		"x: &w {others: 3}\nworkers: {<<: *w, processes: 0}\n" + oneAgent,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := config.Parse(data, "fuzz.yaml")
		if err != nil {
			if c != nil {
				t.Fatal("config returned with an error")
			}
			var es config.Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error %T is not a non-empty config.Errors: %v", err, err)
			}
			for _, e := range es {
				if e.File != "fuzz.yaml" || e.Line < 0 || e.Column < 0 || e.Msg == "" {
					t.Fatalf("malformed error %#v", e)
				}
			}
			return
		}
		checkInvariants(t, c)
		for _, a := range c.Agents {
			var generic map[string]any
			_ = c.AgentSpec(a, "").DecodeInto(&generic)
			var typed testSettings
			_ = c.AgentSpec(a, "").DecodeInto(&typed)
		}
	})
}

// checkInvariants asserts what every successfully parsed config holds.
func checkInvariants(t *testing.T, c *config.Config) {
	t.Helper()
	if len(c.Agents) == 0 {
		t.Fatal("no agents")
	}
	if !workersInRange(c.Workers) || c.Lease.Duration < time.Second || c.IdempotencyTTL.Duration < 0 ||
		c.MaxBodyBytes < 1024 || c.Push.MaxAttempts < 1 || c.Push.Timeout.Duration <= 0 {
		t.Fatalf("out-of-range server settings: %+v", c)
	}
	names, actions := map[string]bool{}, map[string]bool{}
	for _, a := range c.Agents {
		if a.Name == "" || a.Type == "" || a.Action == "" || names[a.Name] || actions[a.Action] {
			t.Fatalf("bad or duplicate agent %+v", a)
		}
		names[a.Name], actions[a.Action] = true, true
		r := a.Retry
		if r.MaxAttempts < 1 || r.InitialBackoff.Duration <= 0 || r.MaxBackoff.Duration < r.InitialBackoff.Duration || !(r.Jitter >= 0 && r.Jitter <= 1) || a.Timeout.Duration <= 0 {
			t.Fatalf("bad agent settings %+v", a)
		}
		if len(a.InputModes) == 0 || len(a.OutputModes) == 0 {
			t.Fatalf("agent %q without media types", a.Name)
		}
	}
	if !names[c.DefaultAgent] {
		t.Fatalf("default agent %q unknown", c.DefaultAgent)
	}
	for _, ac := range c.Actors {
		for _, act := range ac.Actions {
			if act != "*" && !actions[act] {
				t.Fatalf("actor %q names unknown action %q", ac.Name, act)
			}
		}
	}
}

// workersInRange: `workers: N` leaves only All set, a mapping or nothing
// only the two pools, each within 1..1024.
func workersInRange(w config.Workers) bool {
	in := func(n int) bool { return n >= 1 && n <= 1024 }
	if w.All != 0 {
		return in(w.All) && w.Processes == 0 && w.Others == 0
	}
	return in(w.Processes) && in(w.Others)
}
