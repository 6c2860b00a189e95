package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// contractsSection stands for a section a later issue adds (such as
// `contracts:`): a struct with `yaml` and `check` tags is all it needs.
type contractsSection struct {
	Mode     string        `yaml:"mode" check:"oneof=enforce|observe"`
	Name     string        `yaml:"name" check:"nonempty"`
	Attempts int           `yaml:"attempts" check:"min=1,max=5"`
	Every    Duration      `yaml:"every" check:"min=1ns"`
	Grace    time.Duration `yaml:"grace" check:"min=0s"`
	Strict   bool          `yaml:"strict"`
	Steps    []struct {
		Agent string   `yaml:"agent" check:"nonempty"`
		After Duration `yaml:"after"`
	} `yaml:"steps"`
}

// parseSection decodes the document's `contracts` key with section.
func parseSection(t testing.TB, doc string, into *contractsSection) error {
	t.Helper()
	root, err := parseDocument([]byte(doc), "s.yaml")
	if err != nil || root == nil {
		return err
	}
	w := newWalker("s.yaml")
	w.run(func() {
		w.fields(root, "", map[string]handler{
			"contracts": func(n *yaml.Node, path string) { w.section(n, path, into) },
		}, func(p pair) bool { return strings.HasPrefix(p.key, "x-") })
	})
	return w.errs.err()
}

func TestSection(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"good", "contracts: {mode: observe, name: a, attempts: 5, every: 1s, grace: 0s, strict: true, steps: [{agent: x, after: 2s}]}\n", nil},
		{"null keeps the default", "contracts: {attempts: ~, every: null}\n", nil},
		{"unknown key with a suggestion", "contracts:\n  atempts: 2\n",
			[]string{`s.yaml:2:3: contracts.atempts: unknown field "atempts" (did you mean "attempts"?)`}},
		{"range", "contracts:\n  attempts: 6\n", []string{`s.yaml:2:13: contracts.attempts: 6 out of range [1, 5]`}},
		{"not an integer", "contracts: {attempts: 1.5}\n", []string{`s.yaml:1:23: contracts.attempts: expected an integer, got "1.5"`}},
		{"one of", "contracts: {mode: strict}\n", []string{`s.yaml:1:19: contracts.mode: must be one of enforce, observe, got "strict"`}},
		{"non-empty", "contracts: {name: \"\"}\n", []string{`s.yaml:1:19: contracts.name: must not be empty`}},
		{"positive duration", "contracts: {every: 0s}\n", []string{`s.yaml:1:20: contracts.every: must be positive, got 0s`}},
		{"negative duration", "contracts: {grace: -1s}\n", []string{`s.yaml:1:20: contracts.grace: must not be negative, got -1s`}},
		{"bad duration", "contracts: {every: soon}\n", []string{`s.yaml:1:20: contracts.every: invalid duration "soon"`}},
		{"nested list", "contracts:\n  steps:\n    - agent: \"\"\n    - agnt: x\n",
			[]string{`s.yaml:3:14: contracts.steps[0].agent: must not be empty`, `s.yaml:4:7: contracts.steps[1].agnt: unknown field "agnt" (did you mean "agent"?)`}},
		{"not a mapping", "contracts: [1]\n", []string{`s.yaml:1:12: contracts: expected a mapping, got a list`}},
		{"aliases and merges", "x-base: &b {attempts: 9}\ncontracts:\n  <<: *b\n  mode: observe\n", []string{`s.yaml:1:23: contracts.attempts: 9 out of range [1, 5]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := contractsSection{Attempts: 3, Every: Duration{time.Minute}}
			err := parseSection(t, tc.doc, &s)
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var es Errors
			if !errors.As(err, &es) || len(es) != len(tc.want) {
				t.Fatalf("errors = %v, want %d", err, len(tc.want))
			}
			for i, e := range es {
				if !strings.HasPrefix(e.Error(), tc.want[i]) {
					t.Errorf("error %d:\n got %s\nwant %s…", i, e, tc.want[i])
				}
			}
		})
	}
	var s contractsSection
	s.Attempts, s.Every = 3, Duration{time.Minute}
	if err := parseSection(t, "contracts: {attempts: ~, every: null, mode: enforce}\n", &s); err != nil || s.Attempts != 3 || s.Every.Duration != time.Minute || s.Mode != "enforce" {
		t.Errorf("null values: %+v, %v; want the defaults kept", s, err)
	}
}

// FuzzSection: any input decodes into a section without panicking, and
// every error has a position.
func FuzzSection(f *testing.F) {
	for _, seed := range []string{
		"contracts: {mode: observe, attempts: 2, every: 1s, steps: [{agent: a}]}\n",
		"x: &a {attempts: 99}\ncontracts: {<<: *a, grace: -1s}\n",
		"contracts: [1, 2]\n",
		"contracts:\n  steps: {agent: x}\n",
		"contracts: {attempts: 99999999999999999999}\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var s contractsSection
		err := parseSection(t, doc, &s)
		var es Errors
		if err != nil && errors.As(err, &es) {
			for _, e := range es {
				if e.File != "s.yaml" {
					t.Fatalf("error without the file: %v", e)
				}
			}
		}
	})
}
