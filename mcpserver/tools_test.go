package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/mcpserver"
	"github.com/pactum/pactum/task"
)

func TestListTools(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) { c.opts.PerAgentTools = true })
	cs := b.connect(t, nil)
	res, err := cs.ListTools(testCtx(t), nil)
	if err != nil {
		t.Fatalf("list tools: %v", err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		byName[tl.Name] = tl
	}
	want := []string{
		mcpserver.ToolSubmitTask, mcpserver.ToolGetTask, mcpserver.ToolListTasks,
		mcpserver.ToolCancelTask, mcpserver.ToolRetryTask, mcpserver.ToolContinueTask, mcpserver.ToolListAgents,
		"agent_echo", "agent_slow", "agent_flaky", "agent_deploy", "agent_ops_tool_name", "agent_ask",
	}
	for _, name := range want {
		tl, ok := byName[name]
		if !ok {
			t.Errorf("tools/list has no %s (got %v)", name, keys(byName))
			continue
		}
		if tl.Description == "" {
			t.Errorf("%s has no description", name)
		}
		in := schemaObject(t, name, "input", tl.InputSchema)
		out := schemaObject(t, name, "output", tl.OutputSchema)
		if name == mcpserver.ToolListAgents {
			continue
		}
		if _, ok := in["properties"].(map[string]any); !ok {
			t.Errorf("%s input schema has no properties: %v", name, in)
		}
		if name != mcpserver.ToolListTasks {
			props, _ := out["properties"].(map[string]any)
			for _, field := range []string{"task_id", "context_id", "state", "attempt", "max_attempts", "agent", "action", "created_at", "updated_at", "artifacts", "correlation_id", "audit"} {
				if _, ok := props[field]; !ok {
					t.Errorf("%s output schema lacks %q", name, field)
				}
			}
		}
	}
	if len(res.Tools) != len(want) {
		t.Errorf("tools/list has %d tools, want %d: %v", len(res.Tools), len(want), keys(byName))
	}
	// The submit schema names every envelope field, flattened.
	props := schemaObject(t, "submit_task", "input", byName[mcpserver.ToolSubmitTask].InputSchema)["properties"].(map[string]any)
	for _, f := range []string{"agent", "action", "text", "data", "idempotency_key", "actor", "matter", "resource", "policy_ref", "approval_ref", "correlation_id", "context_id", "message_id", "wait", "wait_timeout_seconds"} {
		if _, ok := props[f]; !ok {
			t.Errorf("submit_task input schema lacks %q", f)
		}
	}
	if _, ok := schemaObject(t, "agent_echo", "input", byName["agent_echo"].InputSchema)["properties"].(map[string]any)["agent"]; ok {
		t.Error("agent_echo takes an agent argument; its tool names the agent")
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func schemaObject(t *testing.T, tool, which string, s any) map[string]any {
	t.Helper()
	m, ok := s.(map[string]any)
	if !ok || m["type"] != "object" {
		t.Fatalf("%s %s schema = %#v, want an object schema", tool, which, s)
	}
	return m
}

func TestSubmitWaitEcho(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cs := b.connect(t, nil)
	out := call[mcpserver.SubmitTaskOutput](t, cs, mcpserver.ToolSubmitTask, map[string]any{
		"agent": "echo", "text": "hello over MCP", "wait": true, "correlation_id": "corr-1",
	})
	if out.State != "succeeded" || !out.Final || out.Duplicate || out.WaitTimedOut {
		t.Fatalf("submit answered %+v, want a succeeded, final, new task", out)
	}
	if out.Agent != "echo" || out.Action != "echo" || out.Actor != "anonymous" || out.CorrelationID != "corr-1" {
		t.Errorf("task identity = agent %q action %q actor %q correlation %q", out.Agent, out.Action, out.Actor, out.CorrelationID)
	}
	if out.Attempt != 1 || out.MaxAttempts != 3 {
		t.Errorf("attempt %d of %d, want 1 of 3", out.Attempt, out.MaxAttempts)
	}
	if len(out.Artifacts) != 1 || out.Artifacts[0].Text != "hello over MCP" || out.Artifacts[0].Name != "echo" {
		t.Fatalf("artifacts = %+v, want the echo", out.Artifacts)
	}
	if out.StatusMessage != "hello over MCP" {
		t.Errorf("status message = %q", out.StatusMessage)
	}
	if out.TaskID == "" || out.ContextID == "" || out.CreatedAt.IsZero() || out.UpdatedAt.Before(out.CreatedAt) {
		t.Errorf("ids and times = %q %q %v %v", out.TaskID, out.ContextID, out.CreatedAt, out.UpdatedAt)
	}
	// The audit references name what the store holds.
	recs, err := b.coord.Timeline(testCtx(t), out.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if out.Audit.RecordSeq != len(recs) || out.Audit.RecordSeq != recs[len(recs)-1].Seq {
		t.Errorf("audit.record_seq = %d, the task has %d records", out.Audit.RecordSeq, len(recs))
	}
	if out.Audit.Ref != "audit:task/"+out.TaskID {
		t.Errorf("audit.ref = %q", out.Audit.Ref)
	}
	entries, err := b.store.AuditEntries(testCtx(t), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if e.TaskID == out.TaskID {
			n++
		}
	}
	if n != 1+len(recs) {
		t.Errorf("the task has %d audit entries, want the submission and one per record (%d)", n, 1+len(recs))
	}
}

func TestSubmitDataAndGet(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cs := b.connect(t, nil)
	out := call[mcpserver.SubmitTaskOutput](t, cs, mcpserver.ToolSubmitTask, map[string]any{
		"action": "echo", "text": "with data", "data": map[string]any{"n": 12, "tag": "<b>"},
		"context_id": "ctx-data", "matter": "case-9", "resource": "doc-1",
	})
	if out.Final || out.WaitTimedOut {
		t.Fatalf("submit without wait answered %+v, want the task as queued", out)
	}
	if out.State != "queued" && out.State != "in_progress" {
		t.Errorf("state = %s, want queued or in_progress", out.State)
	}
	done := waitState(t, cs, out.TaskID, "succeeded")
	if done.ContextID != "ctx-data" || done.Matter != "case-9" || done.Resource != "doc-1" {
		t.Errorf("envelope fields not kept: %+v", done)
	}
	if len(done.History) != 2 || done.History[0].Role != "user" || done.History[1].Role != "agent" {
		t.Fatalf("history = %+v, want the user's message and the agent's", done.History)
	}
	parts := done.Artifacts[0].Parts
	if len(parts) != 2 || parts[0].Kind != "text" || parts[1].Kind != "data" {
		t.Fatalf("artifact parts = %+v", parts)
	}
	if d, ok := parts[1].Data.(map[string]any); !ok || d["n"] != 12.0 || d["tag"] != "<b>" {
		t.Errorf("data part = %#v", parts[1].Data)
	}
	// history_length keeps the newest messages.
	one := call[mcpserver.TaskInfo](t, cs, mcpserver.ToolGetTask, map[string]any{"task_id": out.TaskID, "history_length": 1})
	if len(one.History) != 1 || one.History[0].Role != "agent" {
		t.Errorf("history_length 1 gave %+v", one.History)
	}
	none := call[mcpserver.TaskInfo](t, cs, mcpserver.ToolGetTask, map[string]any{"task_id": out.TaskID, "history_length": 0})
	if len(none.History) != 0 {
		t.Errorf("history_length 0 gave %+v", none.History)
	}
}

func TestIdempotency(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cs := b.connect(t, nil)
	args := map[string]any{"agent": "echo", "text": "once", "idempotency_key": "key-1", "wait": true}
	first := call[mcpserver.SubmitTaskOutput](t, cs, mcpserver.ToolSubmitTask, args)
	second := call[mcpserver.SubmitTaskOutput](t, cs, mcpserver.ToolSubmitTask, args)
	if first.Duplicate || !second.Duplicate {
		t.Errorf("duplicate flags = %v, %v; want false, true", first.Duplicate, second.Duplicate)
	}
	if second.TaskID != first.TaskID || second.State != "succeeded" || len(second.Artifacts) != 1 {
		t.Errorf("resubmit answered %+v, want task %s, succeeded with its artifact", second, first.TaskID)
	}
	if n := b.echoRuns.Load(); n != 1 {
		t.Errorf("echo ran %d times, want once", n)
	}
	// The key belongs to the actor: another actor's same key is another task.
	other := call[mcpserver.SubmitTaskOutput](t, cs, mcpserver.ToolSubmitTask, map[string]any{"agent": "echo", "text": "once", "idempotency_key": "key-1", "actor": "alice"})
	if other.TaskID == first.TaskID || other.Duplicate {
		t.Errorf("alice's submit under anonymous's key answered task %s (duplicate %v)", other.TaskID, other.Duplicate)
	}

	e := callErr(t, cs, mcpserver.ToolSubmitTask, map[string]any{"agent": "echo", "text": "another payload", "idempotency_key": "key-1"})
	if e.Code != "conflict" || !strings.Contains(e.Message, first.TaskID) {
		t.Errorf("same key, other payload: %+v, want conflict naming task %s", e, first.TaskID)
	}
	// Without a key, the message id is the key.
	m1 := call[mcpserver.SubmitTaskOutput](t, cs, mcpserver.ToolSubmitTask, map[string]any{"agent": "echo", "text": "m", "message_id": "msg-1"})
	m2 := call[mcpserver.SubmitTaskOutput](t, cs, mcpserver.ToolSubmitTask, map[string]any{"agent": "echo", "text": "m", "message_id": "msg-1"})
	if m1.IdempotencyKey != "msg-1" || m2.TaskID != m1.TaskID || !m2.Duplicate {
		t.Errorf("resent message: key %q, tasks %s and %s (duplicate %v)", m1.IdempotencyKey, m1.TaskID, m2.TaskID, m2.Duplicate)
	}
}

func TestCancelTask(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cs := b.connect(t, nil)
	out := call[mcpserver.SubmitTaskOutput](t, cs, mcpserver.ToolSubmitTask, map[string]any{"agent": "slow", "text": "take your time"})
	select {
	case <-b.started:
	case <-testCtx(t).Done():
		t.Fatal("the slow agent never started")
	}
	got := call[mcpserver.TaskInfo](t, cs, mcpserver.ToolCancelTask, map[string]any{"task_id": out.TaskID, "reason": "changed my mind"})
	if got.State != "canceled" || got.Reason != "changed my mind" || !got.Final {
		t.Fatalf("cancel answered %+v", got)
	}
	e := callErr(t, cs, mcpserver.ToolCancelTask, map[string]any{"task_id": out.TaskID})
	if e.Code != "not_cancelable" {
		t.Errorf("cancel of a canceled task: %+v, want not_cancelable", e)
	}
	if e := callErr(t, cs, mcpserver.ToolCancelTask, map[string]any{"task_id": "no-such-task"}); e.Code != "not_found" {
		t.Errorf("cancel of an unknown task: %+v, want not_found", e)
	}
}

func TestRetryDeadLetter(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cs := b.connect(t, nil)
	out := call[mcpserver.SubmitTaskOutput](t, cs, mcpserver.ToolSubmitTask, map[string]any{"agent": "flaky", "text": "try", "wait": true})
	if out.State != "dead_letter" || out.Attempt != 2 || out.MaxAttempts != 2 || out.AttemptsTotal != 2 || out.ErrorCode != "agent_failed" || !strings.Contains(out.Reason, "attempt 2 failed") {
		t.Fatalf("flaky answered %+v, want dead_letter after 2 attempts", out)
	}
	retried := call[mcpserver.TaskInfo](t, cs, mcpserver.ToolRetryTask, map[string]any{"task_id": out.TaskID})
	// A manual retry starts a new turn: attempt counts from 1 again,
	// attempts_total keeps counting.
	if retried.State != "queued" || retried.TaskID != out.TaskID || retried.Attempt != 0 || retried.AttemptsTotal != 2 {
		t.Fatalf("retry answered %+v, want the task queued again for a new turn (attempt 0, attempts_total 2)", retried)
	}
	done := waitState(t, cs, out.TaskID, "succeeded")
	if done.Attempt != 1 || done.MaxAttempts != 2 || done.AttemptsTotal != 3 || done.Artifacts[0].Text != "recovered" {
		t.Errorf("after retry: %+v, want attempt 1 of 2, 3 in all", done)
	}
	if e := callErr(t, cs, mcpserver.ToolRetryTask, map[string]any{"task_id": out.TaskID}); e.Code != "not_retryable" {
		t.Errorf("retry of a succeeded task: %+v, want not_retryable", e)
	}
}

func TestListTasksAndAgents(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) {
		c.opts.PerAgentTools = true
		c.opts.AgentDescriptions = map[string]string{"echo": "Echoes its input."}
	})
	cs := b.connect(t, nil)
	var ids []string
	for i := range 3 {
		out := call[mcpserver.SubmitTaskOutput](t, cs, mcpserver.ToolSubmitTask, map[string]any{"agent": "echo", "text": "n" + string(rune('0'+i)), "context_id": "ctx-list", "wait": true})
		ids = append(ids, out.TaskID)
	}
	call[mcpserver.SubmitTaskOutput](t, cs, mcpserver.ToolSubmitTask, map[string]any{"agent": "echo", "text": "elsewhere", "wait": true})

	page1 := call[mcpserver.ListTasksOutput](t, cs, mcpserver.ToolListTasks, map[string]any{"context_id": "ctx-list", "page_size": 2, "include_artifacts": true})
	if page1.TotalSize != 3 || len(page1.Tasks) != 2 || page1.NextPageToken == "" {
		t.Fatalf("page 1 = %d of %d tasks, token %q", len(page1.Tasks), page1.TotalSize, page1.NextPageToken)
	}
	if len(page1.Tasks[0].Artifacts) != 1 || len(page1.Tasks[0].History) != 0 {
		t.Errorf("include_artifacts without history_length: artifacts %d, history %d", len(page1.Tasks[0].Artifacts), len(page1.Tasks[0].History))
	}
	page2 := call[mcpserver.ListTasksOutput](t, cs, mcpserver.ToolListTasks, map[string]any{"context_id": "ctx-list", "page_size": 2, "page_token": page1.NextPageToken, "history_length": 1})
	if len(page2.Tasks) != 1 || page2.NextPageToken != "" || len(page2.Tasks[0].History) != 1 || len(page2.Tasks[0].Artifacts) != 0 {
		t.Fatalf("page 2 = %+v", page2)
	}
	var listed []string
	for _, ti := range append(page1.Tasks, page2.Tasks...) {
		listed = append(listed, ti.TaskID)
	}
	slices.Reverse(listed) // newest first
	if !slices.Equal(listed, ids) {
		t.Errorf("listed %v, want %v newest first", listed, ids)
	}
	filtered := call[mcpserver.ListTasksOutput](t, cs, mcpserver.ToolListTasks, map[string]any{"agent": "echo", "states": []string{"succeeded"}, "updated_after": time.Now().Add(-time.Hour).Format(time.RFC3339)})
	if filtered.TotalSize != 4 {
		t.Errorf("echo tasks that succeeded: %d, want 4", filtered.TotalSize)
	}
	if none := call[mcpserver.ListTasksOutput](t, cs, mcpserver.ToolListTasks, map[string]any{"agent": "echo", "states": []string{"failed"}}); none.TotalSize != 0 || none.Tasks == nil {
		t.Errorf("failed echo tasks: %+v, want an empty list", none)
	}
	for _, bad := range []map[string]any{
		{"states": []string{"done"}},
		{"page_size": 101},
		{"page_token": "not-a-token"},
		{"updated_after": "yesterday"},
	} {
		if e := callErr(t, cs, mcpserver.ToolListTasks, bad); e.Code != "invalid_argument" {
			t.Errorf("list_tasks(%v): %+v, want invalid_argument", bad, e)
		}
	}

	agents := call[mcpserver.ListAgentsOutput](t, cs, mcpserver.ToolListAgents, nil)
	var names []string
	for _, a := range agents.Agents {
		names = append(names, a.Name)
		switch a.Name {
		case "echo":
			if a.Description != "Echoes its input." || a.Tool != "agent_echo" || a.MaxAttempts != 3 || a.TimeoutSeconds != 300 {
				t.Errorf("echo = %+v", a)
			}
		case "deploy":
			if !a.Sensitive || a.Action != "deploy.production" || a.Description == "" {
				t.Errorf("deploy = %+v", a)
			}
		case "ops/tool name":
			if a.Tool != "agent_ops_tool_name" {
				t.Errorf("ops/tool name has tool %q", a.Tool)
			}
		}
	}
	if want := []string{"echo", "slow", "flaky", "deploy", "ops/tool name", "ask"}; !slices.Equal(names, want) {
		t.Errorf("agents = %v, want %v", names, want)
	}
}

func TestPerAgentTool(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) { c.opts.PerAgentTools = true })
	cs := b.connect(t, nil)
	out := call[mcpserver.SubmitTaskOutput](t, cs, "agent_ops_tool_name", map[string]any{"text": "hi"})
	if out.State != "succeeded" || out.Agent != "ops/tool name" || out.Artifacts[0].Text != "hi" {
		t.Fatalf("agent tool answered %+v", out)
	}
	rej := call[mcpserver.SubmitTaskOutput](t, cs, "agent_deploy", map[string]any{"text": "ship", "actor": "alice"})
	if !rej.Rejected || rej.ErrorCode != "approval_required" {
		t.Errorf("agent_deploy without approval answered %+v, want rejected", rej)
	}
	if e := callErr(t, cs, "agent_echo", map[string]any{"text": "x", "agent": "slow"}); e.Code != "invalid_argument" {
		t.Errorf("agent_echo with an agent argument: %+v, want invalid_argument", e)
	}
}

func TestPolicyAndPermissions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cs := b.connect(t, nil)

	// A sensitive action without references is refused, and the refusal
	// is a recorded task, as on A2A (TASK_STATE_REJECTED).
	out := call[mcpserver.SubmitTaskOutput](t, cs, mcpserver.ToolSubmitTask, map[string]any{"action": "deploy.production", "text": "ship it", "actor": "alice", "wait": true})
	if out.State != "failed" || !out.Rejected || out.ErrorCode != "approval_required" || !out.Final || out.Attempt != 0 {
		t.Fatalf("sensitive without approval answered %+v, want rejected with approval_required", out)
	}
	if !strings.Contains(out.Reason, "policyRef") || !strings.Contains(out.Reason, "approvalRef") {
		t.Errorf("reason %q does not say what is missing", out.Reason)
	}
	// A wrong approval is a policy refusal.
	out = call[mcpserver.SubmitTaskOutput](t, cs, mcpserver.ToolSubmitTask, map[string]any{"agent": "deploy", "text": "ship it", "actor": "alice", "policy_ref": "policy-v1", "approval_ref": "approval-0"})
	if !out.Rejected || out.ErrorCode != "policy_denied" {
		t.Errorf("unknown approval answered %+v, want policy_denied", out)
	}
	// With both references it runs.
	out = call[mcpserver.SubmitTaskOutput](t, cs, mcpserver.ToolSubmitTask, map[string]any{"agent": "deploy", "text": "ship it", "actor": "alice", "policy_ref": "policy-v1", "approval_ref": "approval-7", "wait": true})
	if out.State != "succeeded" || out.Rejected {
		t.Fatalf("approved deploy answered %+v", out)
	}
	if got, _ := json.Marshal(out.Artifacts[0].Parts[0].Data); string(got) != `{"replicas":3,"version":"1.2.3"}` && string(got) != `{"version":"1.2.3","replicas":3}` {
		t.Errorf("deploy artifact data = %s", got)
	}

	// An actor may only call what it is permitted.
	out = call[mcpserver.SubmitTaskOutput](t, cs, mcpserver.ToolSubmitTask, map[string]any{"agent": "slow", "text": "sneak", "actor": "mallory", "wait": true})
	if out.State != "failed" || !out.Rejected || out.ErrorCode != "forbidden" || out.Actor != "mallory" {
		t.Fatalf("mallory → slow answered %+v, want rejected with forbidden", out)
	}
	if e := callErr(t, cs, mcpserver.ToolRetryTask, map[string]any{"task_id": out.TaskID}); e.Code != "not_retryable" {
		t.Errorf("retry of a rejected task: %+v, want not_retryable", e)
	}
}

func TestToolErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cs := b.connect(t, nil)
	cases := []struct {
		name string
		tool string
		args any
		code string
		in   string // part of the message
	}{
		{"unknown task", mcpserver.ToolGetTask, map[string]any{"task_id": "nope"}, "not_found", "task nope not found"},
		{"unknown agent", mcpserver.ToolSubmitTask, map[string]any{"agent": "ghost", "text": "boo"}, "not_found", `no agent named "ghost"`},
		{"unknown action", mcpserver.ToolSubmitTask, map[string]any{"action": "haunt", "text": "boo"}, "not_found", `no agent serves action "haunt"`},
		{"agent and action disagree", mcpserver.ToolSubmitTask, map[string]any{"agent": "echo", "action": "deploy.production", "text": "x"}, "invalid_argument", "serves action"},
		{"neither agent nor action", mcpserver.ToolSubmitTask, map[string]any{"text": "x"}, "invalid_argument", "neither an agent nor an action"},
		{"no input", mcpserver.ToolSubmitTask, map[string]any{"agent": "echo"}, "invalid_argument", "give text, data or both"},
		{"field too long", mcpserver.ToolSubmitTask, map[string]any{"agent": "echo", "text": "x", "matter": strings.Repeat("m", 600)}, "invalid_argument", "envelope.matter is longer"},
		{"negative wait", mcpserver.ToolSubmitTask, map[string]any{"agent": "echo", "text": "x", "wait": true, "wait_timeout_seconds": -1}, "invalid_argument", "wait_timeout_seconds"},
		// Rejected by the SDK's schema validation before the handler.
		{"wrong type", mcpserver.ToolSubmitTask, map[string]any{"agent": "echo", "text": "x", "wait": "yes"}, "invalid_argument", "wait"},
		{"data not an object", mcpserver.ToolSubmitTask, map[string]any{"agent": "echo", "data": []int{1, 2}}, "invalid_argument", "data"},
		{"unknown argument", mcpserver.ToolSubmitTask, map[string]any{"agent": "echo", "text": "x", "approvalRef": "a-1"}, "invalid_argument", "approvalRef"},
		{"missing task_id", mcpserver.ToolGetTask, map[string]any{}, "invalid_argument", "task_id"},
		{"empty task_id", mcpserver.ToolCancelTask, map[string]any{"task_id": ""}, "invalid_argument", "task_id is required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := callErr(t, cs, c.tool, c.args)
			if e.Code != c.code || !strings.Contains(e.Message, c.in) {
				t.Errorf("%s(%v) = %+v, want code %s and a message with %q", c.tool, c.args, e, c.code, c.in)
			}
		})
	}
	// An unknown tool is a protocol error (the SDK's), not a tool error.
	if _, err := cs.CallTool(testCtx(t), &mcp.CallToolParams{Name: "no_such_tool"}); err == nil {
		t.Error("calling an unknown tool succeeded")
	}
}

func TestInternalErrorsAreReferenced(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cs := b.connect(t, nil)
	out := call[mcpserver.SubmitTaskOutput](t, cs, mcpserver.ToolSubmitTask, map[string]any{"agent": "echo", "text": "x"})
	// Closing the store makes every read fail with a driver error.
	_ = b.store.Close()
	e := callErr(t, cs, mcpserver.ToolGetTask, map[string]any{"task_id": out.TaskID})
	if e.Code != "internal" || e.Ref == "" || e.Message != "internal error (ref "+e.Ref+")" {
		t.Errorf("store failure answered %+v, want an internal error with a reference", e)
	}
}

func TestProgressNotifications(t *testing.T) {
	t.Parallel()
	for _, stateful := range []bool{false, true} {
		t.Run(map[bool]string{false: "stateless", true: "stateful"}[stateful], func(t *testing.T) {
			t.Parallel()
			testProgress(t, stateful)
		})
	}
}

func testProgress(t *testing.T, stateful bool) {
	b := setup(t, func(c *setupConfig) { c.httpOpts.Stateful = stateful })
	var mu sync.Mutex
	var got []*mcp.ProgressNotificationParams
	seen := make(chan string, 16)
	cs := b.connect(t, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		got = append(got, req.Params)
		mu.Unlock()
		seen <- req.Params.Message
	}})
	go func() {
		// Let the attempt finish once its start was reported.
		for msg := range seen {
			if strings.Contains(msg, "in_progress") {
				b.release()
			}
			if strings.Contains(msg, "succeeded") {
				return
			}
		}
	}()
	res := callRaw(t, cs, mcpserver.ToolSubmitTask, map[string]any{"agent": "slow", "text": "report back", "wait": true}, "tok-1")
	if res.IsError {
		t.Fatalf("submit: %s", contentText(res))
	}
	out := decode[mcpserver.SubmitTaskOutput](t, res)
	if out.State != "succeeded" {
		t.Fatalf("state = %s", out.State)
	}
	deadline := time.After(10 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		last := ""
		if n > 0 {
			last = got[n-1].Message
		}
		mu.Unlock()
		if strings.Contains(last, "succeeded") {
			break
		}
		select {
		case <-deadline:
			t.Fatalf("no progress notification for the final state; got %d", n)
		case <-time.After(5 * time.Millisecond):
		}
	}
	mu.Lock()
	defer mu.Unlock()
	var states []string
	prev := -1.0
	for _, p := range got {
		if p.ProgressToken != "tok-1" {
			t.Errorf("progress token = %v", p.ProgressToken)
		}
		if p.Progress <= prev {
			t.Errorf("progress went from %v to %v", prev, p.Progress)
		}
		prev = p.Progress
		if !strings.HasPrefix(p.Message, "task "+out.TaskID+" is ") {
			t.Errorf("progress message %q does not name the task and its state", p.Message)
		}
		state, _, _ := strings.Cut(strings.TrimPrefix(p.Message, "task "+out.TaskID+" is "), " ")
		states = append(states, state)
	}
	if !slices.Contains(states, "in_progress") || states[len(states)-1] != "succeeded" || prev != float64(out.Audit.RecordSeq) {
		t.Errorf("progress states %v (last progress %v), want in_progress … succeeded at record %d", states, prev, out.Audit.RecordSeq)
	}
}

func TestWaitTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cs := b.connect(t, nil)
	out := call[mcpserver.SubmitTaskOutput](t, cs, mcpserver.ToolSubmitTask, map[string]any{"agent": "slow", "text": "never mind", "wait": true, "wait_timeout_seconds": 0.2})
	if !out.WaitTimedOut || out.Final || (out.State != "in_progress" && out.State != "queued") {
		t.Fatalf("timed-out wait answered %+v", out)
	}
	b.release()
	waitState(t, cs, out.TaskID, "succeeded")
}

// TestCallCanceledTaskRunsOn cancels a waiting call: the wait ends, the
// task does not.
func TestCallCanceledTaskRunsOn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cs := b.connect(t, nil)
	ctx, cancel := context.WithCancel(testCtx(t))
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.ToolSubmitTask, Arguments: map[string]any{"agent": "slow", "text": "x", "wait": true, "message_id": "m-cancel"}})
		errc <- err
	}()
	var id string
	select {
	case id = <-b.started:
	case <-testCtx(t).Done():
		t.Fatal("the slow agent never started")
	}
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("a canceled call succeeded")
	}
	if got := call[mcpserver.TaskInfo](t, cs, mcpserver.ToolGetTask, map[string]any{"task_id": id}); got.State != "in_progress" {
		t.Errorf("after the call was canceled the task is %s, want in_progress", got.State)
	}
	b.release()
	waitState(t, cs, id, "succeeded")
}

// TestContinueTask: a task that asks for input waits in input_required with
// the question as its status message; continue_task answers it, the task
// runs a new turn with the answer, and the conversation holds every turn.
func TestContinueTask(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cs := b.connect(t, nil)
	asked := call[mcpserver.SubmitTaskOutput](t, cs, mcpserver.ToolSubmitTask, map[string]any{"agent": "ask", "text": "greet me", "wait": true})
	if asked.State != "input_required" || !asked.Final || asked.StatusMessage != "what is your name?" {
		t.Fatalf("first turn: state %s, final %v, status message %q; want input_required, final, the question", asked.State, asked.Final, asked.StatusMessage)
	}

	// Asked again: the task comes back to input_required.
	again := call[mcpserver.ContinueTaskOutput](t, cs, mcpserver.ToolContinueTask, map[string]any{"task_id": asked.TaskID, "text": "again", "wait": true})
	if again.State != "input_required" || again.Audit.RecordSeq <= asked.Audit.RecordSeq {
		t.Fatalf("second turn: state %s, record seq %d (was %d); want input_required and new records", again.State, again.Audit.RecordSeq, asked.Audit.RecordSeq)
	}

	done := call[mcpserver.ContinueTaskOutput](t, cs, mcpserver.ToolContinueTask, map[string]any{
		"task_id": asked.TaskID, "text": "Ada", "data": map[string]any{"lang": "en"}, "message_id": "answer-1", "wait": true})
	if done.State != "succeeded" || done.WaitTimedOut || done.TaskID != asked.TaskID || done.ContextID != asked.ContextID {
		t.Fatalf("third turn: %+v; want the same task succeeded", done)
	}
	if len(done.Artifacts) != 1 || done.Artifacts[0].Text != "hello Ada" {
		t.Fatalf("artifacts = %+v, want the greeting for the answer", done.Artifacts)
	}
	got := call[mcpserver.TaskInfo](t, cs, mcpserver.ToolGetTask, map[string]any{"task_id": asked.TaskID})
	var turns []string
	for _, m := range got.History {
		turns = append(turns, m.Role+":"+m.Text)
	}
	want := []string{"user:greet me", "agent:what is your name?", "user:again", "agent:what is your name?", "user:Ada"}
	if strings.Join(turns, "|") != strings.Join(want, "|") {
		t.Errorf("history = %q, want %q", turns, want)
	}
	last := got.History[len(got.History)-1]
	if last.MessageID != "answer-1" || len(last.Parts) != 2 || last.Parts[1].Kind != "data" {
		t.Errorf("the answer is stored as %+v; want id answer-1 with a text and a data part", last)
	}

	// A finished task takes no more answers; a running one is not asking.
	if e := callErr(t, cs, mcpserver.ToolContinueTask, map[string]any{"task_id": asked.TaskID, "text": "late"}); e.Code != "unsupported" {
		t.Errorf("continue a succeeded task: code %s (%s), want unsupported", e.Code, e.Message)
	}
	slow := call[mcpserver.SubmitTaskOutput](t, cs, mcpserver.ToolSubmitTask, map[string]any{"agent": "slow", "text": "x"})
	<-b.started
	if e := callErr(t, cs, mcpserver.ToolContinueTask, map[string]any{"task_id": slow.TaskID, "text": "hi"}); e.Code != "conflict" {
		t.Errorf("continue a running task: code %s (%s), want conflict", e.Code, e.Message)
	}
	b.release()
	for _, tc := range []struct {
		args map[string]any
		code string
	}{
		{map[string]any{"task_id": "no-such-task", "text": "hi"}, "not_found"},
		{map[string]any{"task_id": asked.TaskID}, "invalid_argument"},
		{map[string]any{"text": "hi"}, "invalid_argument"},
		{map[string]any{"task_id": asked.TaskID, "text": "hi", "wait_timeout_seconds": -1}, "invalid_argument"},
	} {
		if e := callErr(t, cs, mcpserver.ToolContinueTask, tc.args); e.Code != tc.code {
			t.Errorf("continue_task(%v): code %s (%s), want %s", tc.args, e.Code, e.Message, tc.code)
		}
	}

	// Without wait the answer is queued and the task runs on.
	second := call[mcpserver.SubmitTaskOutput](t, cs, mcpserver.ToolSubmitTask, map[string]any{"agent": "ask", "text": "greet me", "wait": true})
	queued := call[mcpserver.ContinueTaskOutput](t, cs, mcpserver.ToolContinueTask, map[string]any{"task_id": second.TaskID, "text": "Grace"})
	if queued.State == "input_required" || queued.Final && queued.State != "succeeded" {
		t.Errorf("continue without wait answered state %s", queued.State)
	}
	if fin := waitState(t, cs, second.TaskID, "succeeded"); fin.Artifacts[0].Text != "hello Grace" {
		t.Errorf("second task's greeting = %q", fin.Artifacts[0].Text)
	}
}

// TestCallerFromContext: an HTTP middleware in front of the handler that
// puts the authenticated actor in the request context (task.WithCaller),
// as a library user's own authentication would, makes the tools act as
// that actor.
func TestCallerFromContext(t *testing.T) {
	t.Parallel()
	b := setup(t)
	h := b.srv.Handler(mcpserver.HTTPOptions{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(task.WithCaller(r.Context(), "alice")))
	}))
	t.Cleanup(srv.Close)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(testCtx(t), &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	got := call[mcpserver.SubmitTaskOutput](t, cs, mcpserver.ToolSubmitTask, map[string]any{"agent": "echo", "text": "hi", "wait": true})
	if got.Actor != "alice" {
		t.Errorf("submit through the middleware recorded actor %q, want alice", got.Actor)
	}
	if e := callErr(t, cs, mcpserver.ToolSubmitTask, map[string]any{"agent": "echo", "text": "hi", "actor": "mallory"}); e.Code != "forbidden" {
		t.Errorf("alice acting as mallory: %s (%s), want forbidden", e.Code, e.Message)
	}
}
