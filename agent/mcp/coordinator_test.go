package mcpagent

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/agenttest"
	_ "github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
)

// TestCoordinatorEndToEnd runs server-everything's tools as agents of a real
// Coordinator on a SQLite store: a call that succeeds is stored with its
// artifact and message; a tool error fails the task on its first attempt,
// without retries.
func TestCoordinatorEndToEnd(t *testing.T) {
	t.Parallel()
	node, script := nodeServer(t, serverEverything)
	settings := func(tool string) string {
		return fmt.Sprintf("command: %q\nargs: [%q]\ntool: %q", node, script, tool)
	}
	echo := newAgent(t, settings("echo"))
	sum := newAgent(t, settings("get-sum"))

	retry := task.RetryPolicy{MaxAttempts: 3, InitialBackoff: 10 * time.Millisecond}
	coord := agenttest.Coordinator(t, "mcp-test",
		task.AgentSpec{Name: "echo", Runner: agent.Runner(echo), Timeout: callTimeout, Retry: retry},
		task.AgentSpec{Name: "sum", Runner: agent.Runner(sum), Timeout: callTimeout, Retry: retry},
	)

	run := func(name string, parts ...task.Part) *task.Task {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
		defer cancel()
		return agenttest.Run(t, ctx, coord, name, parts...)
	}

	tk := run("echo", task.TextPart("through the coordinator"))
	if tk.State != task.StateSucceeded {
		t.Fatalf("echo task = %s (%s: %s), want succeeded", tk.State, tk.ErrorCode, tk.Reason)
	}
	if len(tk.Artifacts) != 1 || agenttest.PartsText(tk.Artifacts[0].Parts) != "Echo: through the coordinator" {
		t.Errorf("artifacts = %+v", tk.Artifacts)
	}
	if tk.StatusMessage == nil || tk.StatusMessage.Text() != "Echo: through the coordinator" {
		t.Errorf("status message = %+v", tk.StatusMessage)
	}

	tk = run("sum", task.DataPart([]byte(`{"a": "one", "b": 2}`)))
	if tk.State != task.StateFailed || tk.Attempt != 1 || tk.ErrorCode != task.CodeAgentFailed {
		t.Errorf("failing task = %s after %d attempts (%s), want failed after 1 with agent_failed", tk.State, tk.Attempt, tk.ErrorCode)
	}
	if !strings.Contains(tk.Reason, `tool "get-sum" reported an error`) {
		t.Errorf("reason = %q", tk.Reason)
	}
}
