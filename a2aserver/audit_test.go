package a2aserver_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/task"
)

// checkAudit asserts that metadata carries metadata.pactum.audit naming
// task id's audit entries (ref) and a record sequence; it returns the
// sequence.
func checkAudit(t *testing.T, where string, id string, metadata map[string]any) int {
	t.Helper()
	p, _ := metadata["pactum"].(map[string]any)
	audit, ok := p["audit"].(map[string]any)
	if !ok {
		t.Fatalf("%s: no metadata.pactum.audit in %v", where, metadata)
	}
	if audit["ref"] != task.AuditRef(id) || audit["ref"] != "audit:task/"+id {
		t.Errorf("%s: audit.ref = %v, want audit:task/%s", where, audit["ref"], id)
	}
	seq, ok := audit["recordSeq"].(float64)
	if !ok {
		if n, isInt := audit["recordSeq"].(int); isInt {
			seq, ok = float64(n), true
		}
	}
	if !ok || seq < 1 {
		t.Errorf("%s: audit.recordSeq = %v, want the sequence of the newest record", where, audit["recordSeq"])
	}
	return int(seq)
}

// TestAnswersCarryTheAuditReference: every answer that carries a task —
// SendMessage, GetTask, the snapshot and the status events of a stream —
// names the task's audit entries in metadata.pactum.audit.ref, on every
// binding, with the sequence of the newest execution record; the audit log
// holds entries of that task.
func TestAnswersCarryTheAuditReference(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := testCtx(t)
	storedSeq := func(id string) int {
		t.Helper()
		tk, err := b.coord.Get(ctx, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		return tk.Seq
	}

	for _, proto := range transports {
		c := b.client("echo", proto)
		sent := send(ctx, t, c, sendReq(userMessage("audit me")))
		id := string(sent.ID)
		if got := checkAudit(t, fmt.Sprintf("%s SendMessage", proto), id, sent.Metadata); got != storedSeq(id) {
			t.Errorf("%s SendMessage: recordSeq %d, want the stored %d", proto, got, storedSeq(id))
		}
		got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: sent.ID})
		if err != nil {
			t.Fatal(err)
		}
		if seq := checkAudit(t, fmt.Sprintf("%s GetTask", proto), id, got.Metadata); seq != storedSeq(id) {
			t.Errorf("%s GetTask: recordSeq %d, want the stored %d", proto, seq, storedSeq(id))
		}

		// The slow agent waits for the gate, opened once the snapshot is
		// here: the stream then carries status events after it.
		stream := b.client("slow", proto)
		var streamID string
		last, statuses := 0, 0
		for ev, err := range stream.SendStreamingMessage(ctx, sendReq(userMessage("stream me"))) {
			if err != nil {
				t.Fatalf("%s stream: %v", proto, err)
			}
			switch e := ev.(type) {
			case *a2a.Task:
				streamID = string(e.ID)
				last = checkAudit(t, fmt.Sprintf("%s stream snapshot", proto), streamID, e.Metadata)
				go func() { b.gate <- struct{}{} }()
			case *a2a.TaskStatusUpdateEvent:
				seq := checkAudit(t, fmt.Sprintf("%s status event", proto), string(e.TaskID), e.Metadata)
				if seq < last {
					t.Errorf("%s status event: recordSeq %d after %d", proto, seq, last)
				}
				last = seq
				statuses++
			}
		}
		if statuses == 0 || last != storedSeq(streamID) {
			t.Errorf("%s stream: %d status events, final recordSeq %d, want the stored %d", proto, statuses, last, storedSeq(streamID))
		}
	}

	// A2A 0.3: JSON-RPC and HTTP+JSON (/v1).
	r := b.post("/", "", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"audit-03","role":"user","parts":[{"kind":"text","text":"old client"}]}}}`)
	res := rpcResult(t, r)
	id, _ := res["id"].(string)
	md, _ := res["metadata"].(map[string]any)
	checkAudit(t, "0.3 message/send", id, md)
	r = b.post("/", "", `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"`+id+`"}}`)
	md, _ = rpcResult(t, r)["metadata"].(map[string]any)
	checkAudit(t, "0.3 tasks/get", id, md)
	r = b.do(http.MethodGet, "/v1/tasks/"+id, "", nil)
	md, _ = r.json["metadata"].(map[string]any)
	checkAudit(t, "0.3 HTTP+JSON GetTask", id, md)

	// 0.3 message/stream: the task and every status update.
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, b.url+"/agents/slow", strings.NewReader(
		`{"jsonrpc":"2.0","id":3,"method":"message/stream","params":{"message":{"kind":"message","messageId":"audit-03s","role":"user","parts":[{"kind":"text","text":"stream"}]}}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	tasks, statuses := 0, 0
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Result map[string]any `json:"result"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("0.3 stream event %s: %v", data, err)
		}
		md, _ := ev.Result["metadata"].(map[string]any)
		switch ev.Result["kind"] {
		case "task":
			checkAudit(t, "0.3 stream task", ev.Result["id"].(string), md)
			tasks++
			go func() { b.gate <- struct{}{} }()
		case "status-update":
			checkAudit(t, "0.3 stream status", ev.Result["taskId"].(string), md)
			statuses++
		}
	}
	if tasks != 1 || statuses == 0 {
		t.Errorf("0.3 stream: %d tasks and %d status events, want the snapshot and status updates", tasks, statuses)
	}

	// The reference names real entries: the audit log holds the task's.
	entries, err := b.store.AuditEntries(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if task.AuditRef(e.TaskID) == task.AuditRef(id) {
			n++
		}
	}
	if n == 0 {
		t.Errorf("the audit log holds no entry of task %s", id)
	}
}
