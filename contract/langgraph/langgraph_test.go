package langgraph_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/langgraph"
)

// jsDir holds the pinned @langchain/langgraph (installed by .ci/run).
var jsDir = filepath.Join("..", "..", "agent", "langgraph", "testdata", "js")

// missing skips a test that needs Node and the pinned packages, and fails
// it instead when PACTUM_REQUIRE_INTEROP=1 (CI sets it).
func missing(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("PACTUM_REQUIRE_INTEROP") == "1" {
		t.Fatalf("%s, and PACTUM_REQUIRE_INTEROP=1", why)
	}
	t.Skipf("%s; set PACTUM_REQUIRE_INTEROP=1 to make this a failure", why)
}

var (
	graphsOnce sync.Once
	graphsOut  map[string]json.RawMessage
	graphsErr  string
)

// realGraphs runs testdata/graphs.mjs with node from the directory where
// the real @langchain/langgraph is installed and returns the JSON each
// graph's getGraph().toJSON() printed, by graph name.
func realGraphs(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	graphsOnce.Do(func() {
		node, err := exec.LookPath("node")
		if err != nil {
			graphsErr = "node is not installed"
			return
		}
		if _, err := os.Stat(filepath.Join(jsDir, "node_modules", "@langchain", "langgraph")); err != nil {
			graphsErr = "@langchain/langgraph is not installed (cd agent/langgraph/testdata/js && npm ci --legacy-peer-deps)"
			return
		}
		script, err := os.ReadFile(filepath.Join("testdata", "graphs.mjs"))
		if err != nil {
			graphsErr = err.Error()
			return
		}
		// From stdin, an ES module resolves its imports from the working
		// directory: the pinned packages.
		cmd := exec.Command(node, "--input-type=module")
		cmd.Dir = jsDir
		cmd.Stdin = bytes.NewReader(script)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			graphsErr = "graphs.mjs: " + err.Error() + ": " + stderr.String()
			return
		}
		if err := json.Unmarshal(out, &graphsOut); err != nil {
			graphsErr = "graphs.mjs printed no JSON: " + err.Error()
		}
	})
	if graphsErr != "" {
		missing(t, graphsErr)
	}
	return graphsOut
}

func steps(c *contract.AgentContract) map[string][]string {
	out := map[string][]string{}
	for _, st := range c.Steps {
		out[st.ID] = st.DependsOn
	}
	return out
}

// TestRealGraphs converts graphs the real LangGraph JS printed: the
// mapping table on each, detection, a contract that compiles, and the
// round trip.
func TestRealGraphs(t *testing.T) {
	t.Parallel()
	graphs := realGraphs(t)
	cases := []struct {
		name  string
		order []string
		deps  map[string][]string
		cond  map[string][]string // conditionalFrom
		loops map[string][]string // loopsFrom
	}{
		{
			name:  "linear",
			order: []string{"research", "write", "review"},
			deps:  map[string][]string{"research": nil, "write": {"research"}, "review": {"write"}},
		},
		{
			name:  "react",
			order: []string{"agent", "tools"},
			deps:  map[string][]string{"agent": nil, "tools": {"agent"}},
			cond:  map[string][]string{"tools": {"agent"}},
			loops: map[string][]string{"agent": {"tools"}},
		},
		{
			name:  "branching",
			order: []string{"plan", "search", "calc", "merge", "publish", "redo"},
			deps: map[string][]string{"plan": nil, "search": {"plan"}, "calc": {"plan"}, "merge": {"calc", "search"},
				"publish": {"merge"}, "redo": {"merge"}},
			cond:  map[string][]string{"publish": {"merge"}, "redo": {"merge"}},
			loops: map[string][]string{"plan": {"redo"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw := graphs[tc.name]
			if !langgraph.New().Detects([]byte(raw)) {
				t.Fatalf("Detects refuses the real graph: %s", raw)
			}
			c, err := langgraph.New().ToContract([]byte(raw), contract.AdapterOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := contract.Compile(c); err != nil {
				t.Fatalf("the contract does not compile: %v", err)
			}
			if errs := contract.Validate(c, contract.ValidateOptions{}); len(errs) > 0 {
				t.Fatalf("the contract is not valid: %v", errs)
			}
			var order []string
			for _, st := range c.Steps {
				order = append(order, st.ID)
				if st.Agent != st.ID {
					t.Errorf("step %s: agent %q", st.ID, st.Agent)
				}
			}
			if !reflect.DeepEqual(order, tc.order) {
				t.Fatalf("steps %v, want %v (__start__ and __end__ dropped)", order, tc.order)
			}
			if got := steps(c); !reflect.DeepEqual(got, tc.deps) {
				t.Errorf("dependsOn %v, want %v", got, tc.deps)
			}
			for _, st := range c.Steps {
				got := stringsOf(st.Metadata[langgraph.MetaConditionalFrom])
				if !reflect.DeepEqual(got, tc.cond[st.ID]) {
					t.Errorf("%s: conditionalFrom %v, want %v", st.ID, got, tc.cond[st.ID])
				}
				got = stringsOf(st.Metadata[langgraph.MetaLoopsFrom])
				if !reflect.DeepEqual(got, tc.loops[st.ID]) {
					t.Errorf("%s: loopsFrom %v, want %v", st.ID, got, tc.loops[st.ID])
				}
			}

			// The graph comes back with the same nodes and edges (edges
			// grouped by target).
			var in langgraph.Graph
			if err := json.Unmarshal(raw, &in); err != nil {
				t.Fatal(err)
			}
			c2, err := langgraph.ToContract(in, contract.AdapterOptions{PreserveMetadata: true})
			if err != nil {
				t.Fatal(err)
			}
			back, err := langgraph.FromContract(fromJSON(t, c2))
			if err != nil {
				t.Fatal(err)
			}
			if a, b := canonical(t, in), canonical(t, back); a != b {
				t.Fatalf("round trip:\n in:   %s\n back: %s", a, b)
			}
			roundTrip(t, c, contract.AdapterOptions{})
			roundTrip(t, c2, contract.AdapterOptions{PreserveMetadata: true})
		})
	}
}

func stringsOf(v any) []string {
	var out []string
	switch x := v.(type) {
	case []string:
		return x
	case []any:
		for _, e := range x {
			s, _ := e.(string)
			out = append(out, s)
		}
	}
	return out
}

// fromJSON is c written to JSON and read back, as from a file.
func fromJSON(t *testing.T, c *contract.AgentContract) *contract.AgentContract {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var out contract.AgentContract
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// canonical is a graph's JSON with edges sorted.
func canonical(t *testing.T, g langgraph.Graph) string {
	t.Helper()
	edges := append([]langgraph.Edge(nil), g.Edges...)
	key := func(e langgraph.Edge) string { b, _ := json.Marshal(e); return string(b) }
	for i := 1; i < len(edges); i++ {
		for j := i; j > 0 && key(edges[j]) < key(edges[j-1]); j-- {
			edges[j], edges[j-1] = edges[j-1], edges[j]
		}
	}
	g.Edges = edges
	b, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	_ = json.Unmarshal(b, &v)
	b, _ = json.Marshal(v)
	return string(b)
}

// roundTrip: ToContract(FromContract(c)) is c, in memory and after a
// trip through JSON.
func roundTrip(t *testing.T, c *contract.AgentContract, opts contract.AdapterOptions) {
	t.Helper()
	for _, from := range []*contract.AgentContract{c, fromJSON(t, c)} {
		g, err := langgraph.FromContract(from)
		if err != nil {
			t.Fatal(err)
		}
		again, err := langgraph.ToContract(g, opts)
		if err != nil {
			t.Fatal(err)
		}
		a, b := fromJSON(t, c), fromJSON(t, again)
		if ja, jb := jsonOf(t, a), jsonOf(t, b); ja != jb {
			t.Fatalf("ToContract(FromContract(c)) differs:\n c:     %s\n again: %s", ja, jb)
		}
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
