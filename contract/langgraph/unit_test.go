package langgraph_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/langgraph"
)

// pythonGraph is the shape Python's get_graph().to_json() prints: an edge
// is conditional only when it says so, with its path-map label as data.
const pythonGraph = `{
  "nodes": [
    {"id": "__start__", "type": "schema", "data": "AgentStateInput"},
    {"id": "router", "type": "runnable", "data": {"id": ["langgraph", "utils", "RunnableCallable"], "name": "router"}},
    {"id": "sql", "type": "runnable", "data": {"id": ["langgraph", "utils", "RunnableCallable"], "name": "sql_agent"}},
    {"id": "web", "type": "runnable", "data": {"id": ["langgraph", "utils", "RunnableCallable"], "name": "web"}},
    {"id": "__end__", "type": "schema", "data": "AgentStateOutput"}
  ],
  "edges": [
    {"source": "__start__", "target": "router"},
    {"source": "router", "target": "sql", "data": "database", "conditional": true},
    {"source": "router", "target": "web", "data": "internet", "conditional": true},
    {"source": "sql", "target": "__end__"},
    {"source": "web", "target": "__end__"}
  ]
}`

func TestPythonShape(t *testing.T) {
	t.Parallel()
	c, err := langgraph.New().ToContract([]byte(pythonGraph), contract.AdapterOptions{PreserveMetadata: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Steps) != 3 || c.Steps[1].Description != "sql_agent" || c.Steps[0].Description != "" {
		t.Fatalf("steps %+v", c.Steps)
	}
	if got := stringsOf(c.Steps[2].Metadata[langgraph.MetaConditionalFrom]); len(got) != 1 || got[0] != "router" {
		t.Fatalf("web: conditionalFrom %v", got)
	}
	if md := c.Metadata[langgraph.MetaStartNode].(map[string]any); md["data"] != "AgentStateInput" {
		t.Fatalf("start node %v", md)
	}
	g, err := langgraph.FromContract(fromJSON(t, c))
	if err != nil {
		t.Fatal(err)
	}
	var in langgraph.Graph
	_ = json.Unmarshal([]byte(pythonGraph), &in)
	if a, b := canonical(t, in), canonical(t, g); a != b {
		t.Fatalf("round trip:\n in:   %s\n back: %s", a, b)
	}
	roundTrip(t, c, contract.AdapterOptions{PreserveMetadata: true})
}

func TestErrors(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"nodes": [{"id": "__start__"}, {"id": "__end__"}], "edges": []}`:                         "no node but __start__",
		`{"nodes": [{"id": "__start__"}, {"id": ""}], "edges": []}`:                                "nodes[1] has no id",
		`{"nodes": [{"id": "__start__"}, {"id": "a"}, {"id": "a"}], "edges": []}`:                  `nodes[2]: node "a" is also nodes[1]`,
		`{"nodes": [{"id": "__start__"}, {"id": "a"}], "edges": [{"source": "a", "target": "b"}]}`: `edges[0]: no node "b"`,
		`{"nodes": 3}`: "decode",
	} {
		if _, err := langgraph.New().ToContract([]byte(in), contract.AdapterOptions{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
	if _, err := langgraph.New().ToContract(42, contract.AdapterOptions{}); err == nil {
		t.Error("42 converted")
	}
}

func TestDetects(t *testing.T) {
	t.Parallel()
	a := langgraph.New()
	for _, in := range []any{[]byte(pythonGraph), langgraph.Graph{}, &langgraph.Graph{}} {
		if !a.Detects(in) {
			t.Errorf("%v not detected", in)
		}
	}
	for _, in := range []any{nil, (*langgraph.Graph)(nil), 7, []byte(`{"nodes": [], "edges": []}`),
		[]byte(`{"nodes": [{"id": "a"}], "edges": []}`), []byte(`{"nodes": [{"id": "__start__"}]}`),
		[]byte(`{"nodes": {"__start__": {}}, "edges": []}`), []byte(`[{"id": "__start__"}]`)} {
		if a.Detects(in) {
			t.Errorf("%s detected", in)
		}
	}
}

// TestMaxSteps keeps the first nodes and drops edges from the others.
func TestMaxSteps(t *testing.T) {
	t.Parallel()
	g := `{"nodes": [{"id": "__start__"}, {"id": "a"}, {"id": "b"}, {"id": "c"}], "edges": [
	  {"source": "__start__", "target": "a"}, {"source": "c", "target": "a"}, {"source": "a", "target": "b"}, {"source": "b", "target": "c"}]}`
	c, err := langgraph.New().ToContract([]byte(g), contract.AdapterOptions{MaxSteps: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Steps) != 2 || c.Metadata["truncatedFrom"] != 3 || len(c.Steps[0].DependsOn) != 0 || c.Steps[0].Metadata[langgraph.MetaLoopsFrom] != nil {
		t.Fatalf("%+v", c)
	}
	if _, err := contract.Compile(c); err != nil {
		t.Fatal(err)
	}
}

// TestFromOtherContract: a contract not made from a graph becomes a graph
// whose edges follow dependsOn.
func TestFromOtherContract(t *testing.T) {
	t.Parallel()
	c := &contract.AgentContract{Version: "1.0", ID: "x", Steps: []contract.ContractStep{
		{ID: "fetch", Agent: "web"}, {ID: "sum", Agent: "llm", DependsOn: []string{"fetch"}},
	}}
	g, err := langgraph.FromContract(c)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"nodes":[{"id":"__start__","type":"schema"},{"id":"fetch","type":"runnable","data":{"id":["langgraph","RunnableCallable"],"name":"web"}},{"id":"sum","type":"runnable","data":{"id":["langgraph","RunnableCallable"],"name":"llm"}},{"id":"__end__","type":"schema"}],"edges":[{"source":"__start__","target":"fetch","conditional":false},{"source":"fetch","target":"sum","conditional":false},{"source":"sum","target":"__end__","conditional":false}]}`
	if got := jsonOf(t, g); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if _, err := langgraph.FromContract(nil); err == nil {
		t.Fatal("nil contract")
	}
}

func TestResources(t *testing.T) {
	t.Parallel()
	a := langgraph.New()
	st := &contract.ContractStep{ID: "write", Description: "Write the report"}
	rs, err := a.ExtractResources([]byte(`{"messages": [{"role": "user", "content": "q"}, {"type": "ai", "content": "the report"}], "draft": 1}`), st)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].ID != "state_write" || rs[0].Type != contract.ResourceData || rs[1].ID != "message_write" || rs[1].Metadata["role"] != "ai" {
		t.Fatalf("%+v", rs)
	}
	if d, _ := rs[0].Data.(map[string]any); d["draft"] != float64(1) || rs[1].Text != "the report" {
		t.Fatalf("content: %+v", rs)
	}
	if rs, err := a.ExtractResources(map[string]any{}, st); err != nil || rs != nil {
		t.Fatalf("empty update: %v %v", rs, err)
	}
	in, err := a.InjectContext(st, []contract.Resource{{ContractResource: contract.ContractResource{ID: "facts", Type: contract.ResourceData, Format: "json"}, Data: map[string]any{"n": 1}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"messages":[{"content":"Write the report\n\nContext from previous steps:\n- facts: data (json)\n  {\"n\":1}","role":"user"}]}`
	if got := jsonOf(t, in); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// FuzzToContract: any input converts or is refused without a panic; a
// contract made compiles, and converts back and again to itself.
func FuzzToContract(f *testing.F) {
	for _, s := range []string{pythonGraph, `{"nodes": [{"id": "__start__"}, {"id": "a"}], "edges": [{"source": "a", "target": "a", "conditional": true}]}`,
		`{"nodes": [{"id": "__start__"}, {"id": "a", "data": [1]}, {"id": "b"}], "edges": [{"source": "b", "target": "a"}, {"source": "a", "target": "b"}, {"source": "__end__", "target": "__start__"}]}`,
		`{}`, `[]`, `{"nodes": null, "edges": null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a := langgraph.New()
		_ = a.Detects(data)
		c, err := a.ToContract(data, contract.AdapterOptions{PreserveMetadata: true})
		if err != nil {
			return
		}
		if errs := contract.Validate(c, contract.ValidateOptions{}); len(errs) > 0 {
			t.Fatalf("invalid contract from %s: %v", data, errs)
		}
		// A graph from a file may lack __end__ or have edges out of it;
		// the graph FromContract makes is a fixed point.
		opts := contract.AdapterOptions{PreserveMetadata: true}
		var prev string
		for i := range 2 {
			g, err := langgraph.FromContract(c)
			if err != nil {
				t.Fatal(err)
			}
			if c, err = langgraph.ToContract(g, opts); err != nil {
				t.Fatalf("its own graph: %v", err)
			}
			cur := jsonOf(t, fromJSON(t, c))
			if i == 1 && cur != prev {
				t.Fatalf("round trip of %s:\n %s\n %s", data, prev, cur)
			}
			prev = cur
		}
	})
}
