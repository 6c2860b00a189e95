package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/a2aserver"
	"github.com/pactum/pactum/mcpserver"
	"github.com/pactum/pactum/task"
)

// TestParityWithA2A submits the same requests through A2A (a2aserver's
// handler, called directly) and through MCP, on one Coordinator, and checks
// that the tasks, their execution records and their audit entries are the
// same once the ids and times each submit generates are set aside. It is a
// smoke check of the envelope rules; the parity suite on golden traces is
// the full proof.
func TestParityWithA2A(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cs := b.connect(t, nil)
	ctx := testCtx(t)
	cases := []struct {
		name  string
		agent string
		env   map[string]any // the envelope fields, as A2A metadata.pactum
		text  string
		data  map[string]any
	}{
		{name: "anonymous text", agent: "echo", text: "hello"},
		{name: "all fields and data", agent: "echo", text: "with data", data: map[string]any{"n": 1.5, "big": 12345678901, "html": "<b>&</b>", "list": []any{"a", 2.0, true, nil}},
			env: map[string]any{"actor": "alice", "matter": "case-1", "resource": "doc-2", "correlationId": "corr-3", "idempotencyKey": "idem-4"}},
		{name: "sensitive without approval", agent: "deploy", text: "ship", env: map[string]any{"actor": "alice"}},
		{name: "sensitive approved", agent: "deploy", text: "ship", env: map[string]any{"actor": "alice", "policyRef": "policy-v1", "approvalRef": "approval-7"}},
		{name: "forbidden", agent: "slow", text: "sneak", env: map[string]any{"actor": "mallory"}},
		{name: "dead letter", agent: "flaky", text: "fail", env: map[string]any{"actor": "alice"}},
	}
	mcpField := map[string]string{
		"actor": "actor", "matter": "matter", "resource": "resource", "correlationId": "correlation_id",
		"idempotencyKey": "idempotency_key", "policyRef": "policy_ref", "approvalRef": "approval_ref",
	}
	for _, c := range cases {
		// Through A2A.
		b.flakyRuns.Store(0) // flaky fails its first two attempts
		h, err := a2aserver.NewHandler(b.coord, c.agent, a2aserver.HandlerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		parts := a2a.ContentParts{a2a.NewTextPart(c.text)}
		if c.data != nil {
			parts = append(parts, a2a.NewDataPart(c.data))
		}
		req := &a2a.SendMessageRequest{Message: &a2a.Message{ID: "a2a-msg-" + c.name, Role: a2a.MessageRoleUser, ContextID: "a2a-ctx-" + c.name, Parts: parts}}
		if c.env != nil {
			req.Metadata = map[string]any{a2aserver.MetadataKey: c.env}
		}
		res, err := h.SendMessage(ctx, req)
		if err != nil {
			t.Fatalf("%s: A2A SendMessage: %v", c.name, err)
		}
		viaA2A, err := b.coord.Get(ctx, string(res.(*a2a.Task).ID), -1)
		if err != nil {
			t.Fatal(err)
		}

		// Through MCP.
		b.flakyRuns.Store(0)
		args := map[string]any{"agent": c.agent, "text": c.text, "message_id": "mcp-msg-" + c.name, "context_id": "mcp-ctx-" + c.name, "wait": true}
		if c.data != nil {
			args["data"] = c.data
		}
		for k, v := range c.env {
			args[mcpField[k]] = v
		}
		if c.env["idempotencyKey"] != nil {
			args["idempotency_key"] = "mcp-" + c.env["idempotencyKey"].(string)
		}
		out := call[mcpserver.SubmitTaskOutput](t, cs, mcpserver.ToolSubmitTask, args)
		viaMCP, err := b.coord.Get(ctx, out.TaskID, -1)
		if err != nil {
			t.Fatal(err)
		}

		if viaA2A.PayloadHash != viaMCP.PayloadHash {
			t.Errorf("%s: payload hash differs:\nA2A %s %s\nMCP %s %s", c.name, viaA2A.PayloadHash, mustJSON(viaA2A.Envelope.Input.Parts), viaMCP.PayloadHash, mustJSON(viaMCP.Envelope.Input.Parts))
		}
		a, m := trace(t, b, viaA2A), trace(t, b, viaMCP)
		if !reflect.DeepEqual(a, m) {
			t.Errorf("%s: the traces differ\nA2A: %s\nMCP: %s", c.name, mustJSON(a), mustJSON(m))
		}
	}
}

// trace returns what parity compares of a task: the task, its records and
// its audit entries, with generated ids and times replaced by placeholders.
func trace(t *testing.T, b *bundle, tk *task.Task) any {
	t.Helper()
	ctx := testCtx(t)
	recs, err := b.coord.Timeline(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	all, err := b.store.AuditEntries(ctx, 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	var audit []task.AuditEntry
	for _, e := range all {
		if e.TaskID == tk.ID {
			e.Seq, e.At, e.PrevHash, e.Hash = 0, e.At.AddDate(-100, 0, 0), "", ""
			audit = append(audit, e)
		}
	}
	ids := map[string]string{
		tk.ID:                       "<task>",
		tk.ContextID:                "<context>",
		tk.Envelope.Input.ID:        "<message>",
		tk.Envelope.IdempotencyKey:  "<idempotency-key>",
		tk.Envelope.CorrelationID:   "<correlation>",
		tk.Envelope.Input.ContextID: "<context>",
	}
	// Ids the agents generate for their messages and artifacts.
	for i, a := range tk.Artifacts {
		ids[a.ID] = fmt.Sprintf("<artifact-%d>", i)
	}
	for i, m := range tk.History[1:] {
		ids[m.ID] = fmt.Sprintf("<message-%d>", i+1)
	}
	var v any
	raw := mustJSON(map[string]any{"task": tk, "records": recs, "audit": audit})
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatal(err)
	}
	return normalize(v, ids)
}

// normalize replaces the strings in ids, every time (keys at, createdAt,
// updatedAt, leaseExpires, runAfter) and lease owners by placeholders.
func normalize(v any, ids map[string]string) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			switch k {
			case "at", "createdAt", "updatedAt", "leaseExpires", "runAfter":
				out[k] = "<time>"
			case "leaseOwner":
				out[k] = "<owner>"
			default:
				out[k] = normalize(e, ids)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = normalize(e, ids)
		}
		return out
	case string:
		if r, ok := ids[v]; ok {
			return r
		}
		return v
	}
	return v
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
