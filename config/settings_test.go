package config_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/pactum/pactum/config"
)

// level implements encoding.TextUnmarshaler.
type level int

func (l *level) UnmarshalText(b []byte) error {
	switch string(b) {
	case "low":
		*l = 1
	case "high":
		*l = 2
	default:
		return fmt.Errorf("level %q is neither low nor high", b)
	}
	return nil
}

// command implements yaml.Unmarshaler: a string or a list of strings.
type command []string

func (c *command) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*c = strings.Fields(n.Value)
		return nil
	}
	var list []string
	if err := n.Decode(&list); err != nil {
		return err
	}
	*c = list
	return nil
}

// Common is inlined into testSettings.
type Common struct {
	Dir string `yaml:"dir"`
}

// testSettings exercises every kind the settings decoder supports.
type testSettings struct {
	Command command           `yaml:"command"`
	Input   string            `yaml:"input"`
	Stream  bool              `yaml:"stream"`
	Timeout time.Duration     `yaml:"timeout"`
	Env     map[string]string `yaml:"env"`
	Retry   *struct {
		Max     int             `yaml:"max"`
		Backoff config.Duration `yaml:"backoff"`
	} `yaml:"retry"`
	Level  level     `yaml:"level"`
	Extra  any       `yaml:"extra"`
	Port   uint16    // no tag: the key is "port"
	Ratio  float64   `yaml:"ratio"`
	When   time.Time `yaml:"when"`
	Pair   [2]int    `yaml:"pair"`
	Hidden string    `yaml:"-"`
	Common `yaml:",inline"`
}

// settingsDoc wraps exec settings so that they start on line 5, column 7.
func settingsDoc(settings string) string {
	return "agents:\n  - name: a\n    type: exec\n    exec:\n" + indent(settings, "      ")
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n") + "\n"
}

func decodeSettings(t *testing.T, doc string) (testSettings, error) {
	t.Helper()
	c, err := config.Parse([]byte(doc), "pactum.yaml")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	var s testSettings
	spec := c.AgentSpec(c.Agents[len(c.Agents)-1], "")
	if spec.Decode == nil {
		t.Fatal("Decode is nil for an agent with settings")
	}
	return s, spec.Decode(&s)
}

// TestAgentSpecUnknownField is the example from the package documentation.
func TestAgentSpecUnknownField(t *testing.T) {
	t.Parallel()
	const doc = `# pactum.yaml
listen: 127.0.0.1:9000

agents:
  - name: hello
    type: echo

  - name: summarize
    type: exec
    description: Summarizes.
    timeout: 1m
    exec:
      input: stdin
      comand: [sh, summarize.sh]
`
	_, err := decodeSettings(t, doc)
	const want = `pactum.yaml:14:7: agents[1].exec.comand: unknown field "comand" (did you mean "command"?)`
	if err == nil || err.Error() != want {
		t.Fatalf("Decode error:\n got %v\nwant %s", err, want)
	}
	var es config.Errors
	if !errors.As(err, &es) || len(es) != 1 || es[0].Line != 14 || es[0].Column != 7 || es[0].Path != "agents[1].exec.comand" {
		t.Errorf("Errors = %#v", es)
	}
}

func TestAgentSpecDecode(t *testing.T) {
	t.Parallel()
	s, err := decodeSettings(t, settingsDoc(`command: sh run.sh
input: stdin
stream: true
timeout: 90s
env: {A: "1", B: two}
retry: {max: 3, backoff: 2s}
level: high
extra: {any: [thing, 1]}
port: 8080
ratio: 0.5
when: 2026-01-02T03:04:05Z
pair: [1, 2]
dir: work
`))
	if err != nil {
		t.Fatal(err)
	}
	want := testSettings{
		Command: command{"sh", "run.sh"}, Input: "stdin", Stream: true, Timeout: 90 * time.Second,
		Env: map[string]string{"A": "1", "B": "two"}, Level: 2,
		Extra: map[string]any{"any": []any{"thing", 1}},
		Port:  8080, Ratio: 0.5, When: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Pair: [2]int{1, 2},
		Common: Common{Dir: "work"},
	}
	want.Retry = &struct {
		Max     int             `yaml:"max"`
		Backoff config.Duration `yaml:"backoff"`
	}{3, config.D(2 * time.Second)}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("decoded\n %+v\nwant\n %+v", s, want)
	}
}

func TestAgentSpecDecodeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		settings string
		want     []string
	}{
		{"unknown nested field", "retry:\n  max: 1\n  maxx: 2\n",
			[]string{`pactum.yaml:7:9: agents[0].exec.retry.maxx: unknown field "maxx" (did you mean "max"?)`}},
		{"hidden field is unknown", "hidden: x\n",
			[]string{`pactum.yaml:5:7: agents[0].exec.hidden: unknown field "hidden"`}},
		{"wrong type", "input: [a]\n",
			[]string{`pactum.yaml:5:14: agents[0].exec.input: expected a string, got a list`}},
		{"bad duration", "timeout: 5 minutes\n",
			[]string{`pactum.yaml:5:16: agents[0].exec.timeout: invalid duration "5 minutes"`}},
		{"bad Duration", "retry: {backoff: 3}\n",
			[]string{`pactum.yaml:5:24: agents[0].exec.retry.backoff: invalid duration "3"`}},
		{"uint overflow", "port: 70000\n",
			[]string{`pactum.yaml:5:13: agents[0].exec.port: integer 70000 out of range for uint16`}},
		{"negative uint", "port: -1\n",
			[]string{`pactum.yaml:5:13: agents[0].exec.port: integer -1 out of range for uint16`}},
		{"float for int", "retry: {max: 1.5}\n",
			[]string{`pactum.yaml:5:20: agents[0].exec.retry.max: expected an integer, got "1.5"`}},
		{"string for float", "ratio: half\n",
			[]string{`pactum.yaml:5:14: agents[0].exec.ratio: expected a number, got "half"`}},
		{"yes for bool", "stream: yes\n",
			[]string{`pactum.yaml:5:15: agents[0].exec.stream: expected true or false, got "yes"`}},
		{"map value type", "env:\n  A: [1]\n",
			[]string{`pactum.yaml:6:12: agents[0].exec.env.A: expected a string, got a list`}},
		{"text unmarshaler", "level: loud\n",
			[]string{`pactum.yaml:5:14: agents[0].exec.level: level "loud" is neither low nor high`}},
		{"text unmarshaler given a list", "level: [low]\n",
			[]string{`pactum.yaml:5:14: agents[0].exec.level: expected a string, got a list`}},
		{"yaml unmarshaler", "command: {sh: x}\n",
			[]string{`pactum.yaml:5:16: agents[0].exec.command: cannot unmarshal !!map into []string`}},
		{"array length", "pair: [1]\n",
			[]string{`pactum.yaml:5:13: agents[0].exec.pair: expected a list of 2 items, got a list`}},
		{"struct given a scalar", "retry: 3\n",
			[]string{`pactum.yaml:5:14: agents[0].exec.retry: expected a mapping, got "3"`}},
		{"duplicate key", "input: a\ninput: b\n",
			[]string{`pactum.yaml:6:7: agents[0].exec.input: duplicate key (first defined at line 5)`}},
		{"every error", "comand: x\nport: x\nretry: {max: x, min: 1}\ndirr: y\n",
			[]string{
				`pactum.yaml:5:7: agents[0].exec.comand: unknown field "comand"`,
				`pactum.yaml:6:13: agents[0].exec.port: expected an integer, got "x"`,
				`pactum.yaml:7:20: agents[0].exec.retry.max: expected an integer, got "x"`,
				`pactum.yaml:7:23: agents[0].exec.retry.min: unknown field "min"`,
				`pactum.yaml:8:7: agents[0].exec.dirr: unknown field "dirr" (did you mean "dir"?)`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := decodeSettings(t, settingsDoc(tt.settings))
			var es config.Errors
			if !errors.As(err, &es) {
				t.Fatalf("error %v is not config.Errors", err)
			}
			if len(es) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(es), len(tt.want), err)
			}
			for i, e := range es {
				if !strings.HasPrefix(e.Error(), tt.want[i]) {
					t.Errorf("error %d:\n got %s\nwant %s…", i, e, tt.want[i])
				}
			}
		})
	}
}

func TestAgentSpecAliasesAndMerges(t *testing.T) {
	t.Parallel()
	const doc = `agents:
  - name: a
    type: exec
    exec: &base
      input: stdin
      env: {A: "1"}
  - name: b
    type: exec
    exec:
      <<: *base
      env: {B: "2"}
`
	c, err := config.Parse([]byte(doc), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var a, b testSettings
	if err := c.AgentSpec(c.Agents[0], "").Decode(&a); err != nil {
		t.Fatal(err)
	}
	if err := c.AgentSpec(c.Agents[1], "").Decode(&b); err != nil {
		t.Fatal(err)
	}
	if a.Input != "stdin" || a.Env["A"] != "1" || b.Input != "stdin" || len(b.Env) != 1 || b.Env["B"] != "2" {
		t.Errorf("a = %+v, b = %+v", a, b)
	}

	// An alias cycle through a recursive type is refused, not followed.
	type node struct {
		Next *node `yaml:"next"`
	}
	c, err = config.Parse([]byte("agents:\n  - name: a\n    type: exec\n    exec: &n\n      next: *n\n"), "cycle.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var n node
	err = c.AgentSpec(c.Agents[0], "").Decode(&n)
	if want := `cycle.yaml:5:13: agents[0].exec.next: alias *n refers to a node that contains it`; err == nil || err.Error() != want {
		t.Errorf("cycle: got %v, want %s", err, want)
	}
}

// TestAgentSpecAliasBomb checks that nested aliases (a billion laughs)
// stop with an error instead of being expanded.
func TestAgentSpecAliasBomb(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("x-0: &a0 [lol]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "x-%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", "))
	}
	b.WriteString("agents:\n  - name: a\n    type: echo\n    echo: {x: *a9}\n")
	c, err := config.Parse([]byte(b.String()), "bomb.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var s struct{ X [][][][][][][][][][]string }
	err = c.AgentSpec(c.Agents[0], "").Decode(&s)
	if err == nil || !strings.Contains(err.Error(), "excessive aliasing") {
		t.Errorf("Decode = %v, want excessive aliasing", err)
	}
	var v map[string]any
	err = c.AgentSpec(c.Agents[0], "").Decode(&v)
	if err == nil || !strings.Contains(err.Error(), "excessive aliasing") {
		t.Errorf("Decode(any) = %v, want excessive aliasing", err)
	}
}

func TestAgentSpecFields(t *testing.T) {
	t.Parallel()
	c, err := config.Parse([]byte("agents:\n  - {name: a, type: echo}\n  - {name: b, type: exec, exec: {input: x}}\n"), filepath.Join("conf", "pactum.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	spec := c.AgentSpec(c.Agents[0], "/srv")
	if spec.Name != "a" || spec.Type != "echo" || spec.BaseDir != "/srv" || spec.Decode != nil {
		t.Errorf("spec a = %+v", spec)
	}
	// Without settings DecodeInto leaves the value alone.
	s := testSettings{Input: "kept"}
	if err := spec.DecodeInto(&s); err != nil || s.Input != "kept" {
		t.Errorf("DecodeInto without settings: %v, %+v", err, s)
	}
	// An empty baseDir is the config file's directory.
	if got := c.AgentSpec(c.Agents[1], "").BaseDir; got != "conf" {
		t.Errorf("BaseDir = %q, want conf", got)
	}
	if err := c.AgentSpec(c.Agents[1], "").Decode(s); err == nil || !strings.Contains(err.Error(), "non-nil pointer") {
		t.Errorf("Decode(non-pointer) = %v", err)
	}
	if err := c.AgentSpec(c.Agents[1], "").Decode((*testSettings)(nil)); err == nil {
		t.Error("Decode(nil pointer) succeeded")
	}
	// Decoding twice gives the same result (the spec holds no state).
	for range 2 {
		var s testSettings
		if err := c.AgentSpec(c.Agents[1], "").Decode(&s); err != nil || s.Input != "x" {
			t.Errorf("Decode = %v, %+v", err, s)
		}
	}
}
