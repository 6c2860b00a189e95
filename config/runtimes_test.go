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
	ag, err := agent.New(t.Context(), agent.Spec(c.AgentSpec(a, "")))
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
