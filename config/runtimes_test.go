package config_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pactum/pactum/agent"
	_ "github.com/pactum/pactum/agent/echo"
	_ "github.com/pactum/pactum/agent/exec"
	_ "github.com/pactum/pactum/agent/webhook"
	"github.com/pactum/pactum/config"
	_ "github.com/pactum/pactum/store/postgres" // Check validates the store DSN with the linked drivers
	_ "github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
)

// TestCheckExamples builds every agent of the examples and of Default with
// the real runtimes, so the examples stay in step with the runtimes'
// settings.
func TestCheckExamples(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		c, err := config.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := config.Check(t.Context(), c, ""); err != nil {
			t.Errorf("Check(%s): %v", file, err)
		}
	}
	if err := config.Check(t.Context(), config.Default(), ""); err != nil {
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
	err = config.Check(t.Context(), c, "")
	if want := `pactum.yaml:6:7: agents[0].exec.comand: unknown field "comand" (did you mean "command"?)`; err == nil || err.Error() != want {
		t.Errorf("Check = %v\nwant %s", err, want)
	}
}

// TestExecExample runs the exec example's script through the exec runtime.
func TestExecExample(t *testing.T) {
	t.Parallel()
	c, err := config.Load(filepath.Join("..", "examples", "exec.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	a, ok := c.Agent("summarize")
	if !ok {
		t.Fatal("no summarize agent")
	}
	ag, err := agent.New(t.Context(), c.AgentSpec(a, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close(ag)
	msg := task.Message{ID: "m1", Role: task.RoleUser, Parts: []task.Part{task.TextPart("hello big world\nsecond line")}}
	res, err := ag.Invoke(t.Context(), &task.Request{TaskID: "t1", ContextID: "c1", Attempt: 1, Message: msg, History: []task.Message{msg}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Message == nil {
		t.Fatalf("result without message: %+v", res)
	}
	if got, want := res.Message.Text(), "words: 5\nfirst line: hello big world"; strings.TrimSpace(got) != want {
		t.Errorf("answer = %q, want %q", got, want)
	}
}
