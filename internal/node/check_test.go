package node_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/node"
	"github.com/pactum/pactum/task"
)

// These tests moved here from package config with Check (issue 9): config
// parses without building runtimes; the server builds and checks them.

// TestCheckExamples builds every agent of the examples and of Default with
// the real runtimes, so the examples stay in step with the runtimes'
// settings.
func TestCheckExamples(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		if b := filepath.Base(file); strings.HasPrefix(b, "contract") || b == "toolspecs.yaml" {
			continue // examples/contract*.yaml are contracts, toolspecs.yaml a ToolSpecs file: not configurations
		}
		c, err := config.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := node.Check(t.Context(), c, ""); err != nil {
			t.Errorf("Check(%s): %v", file, err)
		}
	}
	if err := node.Check(t.Context(), config.Default(), ""); err != nil {
		t.Errorf("Check(Default()): %v", err)
	}
}

// TestCheckRealRuntime shows a runtime's own validation error, placed at
// its settings.
func TestCheckRealRuntime(t *testing.T) {
	t.Parallel()
	c, err := config.Parse([]byte("agents:\n  - name: a\n    type: exec\n    exec:\n      input: stdin\n      comand: [sh]\n"), "pactum.yaml")
	if err != nil {
		t.Fatal(err)
	}
	err = node.Check(t.Context(), c, "")
	if want := `pactum.yaml:6:7: agents[0].exec.comand: unknown field "comand" (did you mean "command"?)`; err == nil || err.Error() != want {
		t.Errorf("Check = %v\nwant %s", err, want)
	}
}

// TestCheckOpenAI: an openai agent without a model fails the check at its
// settings, with the file and line.
func TestCheckOpenAI(t *testing.T) {
	t.Parallel()
	c, err := config.Parse([]byte("agents:\n  - name: llm\n    type: openai\n    openai:\n      base_url: http://127.0.0.1:11434/v1\n"), "pactum.yaml")
	if err != nil {
		t.Fatal(err)
	}
	err = node.Check(t.Context(), c, "")
	if want := `pactum.yaml:4:5: agents[0].openai: agent "llm" (openai): model: required, e.g. llama3.2`; err == nil || err.Error() != want {
		t.Errorf("Check = %v\nwant %s", err, want)
	}
}

// Runtimes registered for TestCheck. Their type names are unique to this
// test, so the global registry is not disturbed for others. Closes are
// counted per `need` value, so that tests running in parallel, each with
// its own value, count only their own agents.
var closes sync.Map // need value → *atomic.Int32

func closed(need string) *atomic.Int32 {
	n, _ := closes.LoadOrStore(need, new(atomic.Int32))
	return n.(*atomic.Int32)
}

type fakeAgent struct{ need string }

func (fakeAgent) Invoke(context.Context, *task.Request) (*task.Result, error) { return nil, nil }
func (a fakeAgent) Close() error                                              { closed(a.need).Add(1); return nil }

func init() {
	agent.Register("cfgtest", func(_ context.Context, spec agent.Spec) (agent.Agent, error) {
		var s struct {
			Need string `yaml:"need"`
		}
		if err := spec.DecodeInto(&s); err != nil {
			return nil, fmt.Errorf("cfgtest settings: %w", err)
		}
		if s.Need == "" {
			return nil, errors.New("need: required")
		}
		return fakeAgent{need: s.Need}, nil
	})
}

func TestCheck(t *testing.T) {
	t.Parallel()
	const doc = `agents:
  - name: good
    type: cfgtest
    cfgtest: {need: x}
  - name: typo
    type: cfgtest
    cfgtest:
      nede: x
  - name: invalid
    type: cfgtest
    cfgtest: {}
  - name: bare
    type: cfgtest
  - name: nosuch
    type: nosuch
`
	c, err := config.Parse([]byte(doc), "check.yaml")
	if err != nil {
		t.Fatal(err)
	}
	before := closed("x").Load()
	err = node.Check(t.Context(), c, "")
	want := []string{
		`check.yaml:8:7: agents[1].cfgtest.nede: unknown field "nede" (did you mean "need"?)`,
		`check.yaml:11:5: agents[2].cfgtest: agent "invalid" (cfgtest): need: required`,
		`check.yaml:12:5: agents[3]: agent "bare" (cfgtest): need: required`,
		`check.yaml:15:11: agents[4].type: unknown runtime type "nosuch" (known: `,
	}
	var es config.Errors
	if !errors.As(err, &es) || len(es) != len(want) {
		t.Fatalf("Check = %v, want %d errors", err, len(want))
	}
	for i, e := range es {
		if !strings.HasPrefix(e.Error(), want[i]) {
			t.Errorf("error %d:\n got %s\nwant %s…", i, e, want[i])
		}
	}
	if got := closed("x").Load() - before; got != 1 {
		t.Errorf("closed %d agents, want 1 (the one that was built)", got)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := node.Check(ctx, c, ""); !errors.Is(err, context.Canceled) {
		t.Errorf("Check(canceled) = %v", err)
	}
}

// TestNewReportsAgentErrors: the node refuses to start on the same agent
// errors as Check, every one of them, placed in the file, and opens no
// runtime it does not close.
func TestNewReportsAgentErrors(t *testing.T) {
	t.Parallel()
	doc := fmt.Sprintf(`store: sqlite://%s
agents:
  - name: good
    type: cfgtest
    cfgtest: {need: new}
  - name: invalid
    type: cfgtest
    cfgtest: {}
  - name: nosuch
    type: nosuch
`, filepath.Join(t.TempDir(), "p.db"))
	c, err := config.Parse([]byte(doc), "new.yaml")
	if err != nil {
		t.Fatal(err)
	}
	before := closed("new").Load()
	srv, err := node.New(t.Context(), c, "", nil, nil)
	if err == nil {
		_ = srv.Stop(t.Context())
		t.Fatal("New accepted agents that do not build")
	}
	want := []string{
		`new.yaml:8:5: agents[1].cfgtest: agent "invalid" (cfgtest): need: required`,
		`new.yaml:10:11: agents[2].type: unknown runtime type "nosuch" (known: `,
	}
	var es config.Errors
	if !errors.As(err, &es) || len(es) != len(want) {
		t.Fatalf("New = %v, want %d errors", err, len(want))
	}
	for i, e := range es {
		if !strings.HasPrefix(e.Error(), want[i]) {
			t.Errorf("error %d:\n got %s\nwant %s…", i, e, want[i])
		}
	}
	if got := closed("new").Load() - before; got != 1 {
		t.Errorf("closed %d agents, want 1 (the one that was built)", got)
	}
}
