package langgraph_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/langgraph"
	"github.com/pactum/pactum/contract/trace"
)

// reportGraph is the graph testdata/history.json ran: research → write.
var reportGraph = langgraph.Graph{
	Nodes: []langgraph.Node{{ID: "__start__", Type: "schema"}, {ID: "research", Type: "runnable"}, {ID: "write", Type: "runnable"}, {ID: "__end__", Type: "schema"}},
	Edges: []langgraph.Edge{{Source: "__start__", Target: "research"}, {Source: "research", Target: "write"}, {Source: "write", Target: "__end__"}},
}

// historyContract is the graph's contract with an assertion on each step.
func historyContract(t *testing.T, writeCheck contract.Check) *contract.Compiled {
	t.Helper()
	c, err := langgraph.ToContract(reportGraph, contract.AdapterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.Steps[0].Assertions = []contract.ContractAssertion{{Type: contract.Assert, Message: "research states facts",
		Check: contract.Check{Type: "contains", Value: "facts:"}}}
	c.Steps[1].Assertions = []contract.ContractAssertion{{Type: contract.Assert, Message: "write returns a report",
		Check: writeCheck}}
	comp, err := contract.Compile(c)
	if err != nil {
		t.Fatal(err)
	}
	return comp
}

// TestHistoryTrace: a thread's history, as the real LangGraph JS Agent
// Server returned it (testdata/history.json: POST /threads/ID/history
// after a run of research → write), becomes a trace that trace.Decode
// reads and trace.Verify (pactum verify) judges step by step.
func TestHistoryTrace(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("testdata", "history.json"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := langgraph.DecodeHistory(data)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := langgraph.HistoryTrace(h, time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tr.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	tr, err = trace.Decode(buf.Bytes())
	if err != nil {
		t.Fatalf("the trace does not read back: %v\n%s", err, buf.Bytes())
	}
	if tr.Task.Agent != "report" || tr.Task.State != "succeeded" || len(tr.Children) != 2 ||
		tr.Children[0].Task.Envelope.Step != "research" || tr.Children[1].Task.StatusMessage.Text() != "# Report\nThe facts, written up." ||
		tr.Task.Envelope.Input.Text() != "LangGraph" {
		t.Fatalf("%s", buf.Bytes())
	}

	rep, err := trace.Verify(context.Background(), historyContract(t, contract.Check{Type: "regex", Pattern: `^# Report`}), tr, trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Passed || len(rep.Steps) != 2 || rep.Steps[0].Status != trace.StatusPassed || rep.Steps[1].Status != trace.StatusPassed {
		t.Fatalf("%+v", rep)
	}
	rep, err = trace.Verify(context.Background(), historyContract(t, contract.Check{Type: "contains", Value: "Summary"}), tr, trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed || rep.Steps[0].Status != trace.StatusPassed || rep.Steps[1].Status != trace.StatusFailed {
		t.Fatalf("%+v", rep)
	}
}

// TestHistoryErrors: a node's error fails its step; an empty history is
// an error.
func TestHistoryErrors(t *testing.T) {
	t.Parallel()
	if _, err := langgraph.HistoryTrace(nil, time.Now()); err == nil {
		t.Fatal("empty history")
	}
	h, err := langgraph.DecodeHistory([]byte(`[
	  {"values": {"messages": []}, "next": ["write"], "tasks": [{"id": "t2", "name": "write", "error": {"name": "Error", "message": "model down"}}],
	   "metadata": {"run_id": "r1", "graph_id": "report", "step": 1}, "created_at": "2026-11-27T10:00:02Z", "checkpoint": {"thread_id": "th"}},
	  {"values": {"messages": []}, "next": ["research"], "tasks": [{"id": "t1", "name": "research", "result": {"messages": [{"role": "assistant", "content": "facts: x"}]}}],
	   "metadata": {"run_id": "r1", "graph_id": "report", "step": 0}, "created_at": "2026-11-27T10:00:01Z", "checkpoint": {"thread_id": "th"}}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := langgraph.HistoryTrace(h, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if tr.Task.State != "failed" || tr.Children[1].Task.State != "failed" || !strings.Contains(tr.Task.Reason, "node write: Error: model down") {
		t.Fatalf("%+v", tr.Task)
	}
	rep, err := trace.Verify(context.Background(), historyContract(t, contract.Check{Type: "regex", Pattern: `.`}), tr, trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed || rep.Steps[0].Status != trace.StatusPassed || rep.Steps[1].Status == trace.StatusPassed {
		t.Fatalf("%+v", rep.Steps)
	}
	if _, err := langgraph.DecodeHistory([]byte(`{}`)); err == nil {
		t.Fatal("an object is not a history")
	}
}

// FuzzHistory: any history converts or is refused without a panic, and
// a trace made reads back.
func FuzzHistory(f *testing.F) {
	b, _ := os.ReadFile(filepath.Join("testdata", "history.json"))
	f.Add(b)
	f.Add([]byte(`[{"created_at": "x"}]`))
	f.Add([]byte(`[{"created_at": "2026-11-27T10:00:01Z", "tasks": [{"name": "a", "interrupts": [1]}, {"name": "a", "error": 3}], "values": {"messages": {"content": [{"text": "t"}]}}}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := langgraph.DecodeHistory(data)
		if err != nil {
			return
		}
		tr, err := langgraph.HistoryTrace(h, time.Unix(0, 0))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := tr.Encode(&buf); err != nil {
			t.Fatal(err)
		}
		if _, err := trace.Decode(buf.Bytes()); err != nil {
			t.Fatalf("the trace does not read back: %v\n%s", err, buf.Bytes())
		}
	})
}
