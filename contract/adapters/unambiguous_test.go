package adapters_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/adapters"
)

// samples is one or more real inputs of each adapter, by protocol: the
// shapes each adapter's tests convert (the CrewAI and AutoGen files in
// the shape their docs show; a graph the real LangGraph JS printed is in
// contract/langgraph's tests, this one has its shape).
func samples(t *testing.T) map[string][][]byte {
	t.Helper()
	file := func(p ...string) []byte {
		b, err := os.ReadFile(filepath.Join(append([]string{".."}, p...)...))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return map[string][][]byte{
		"a2a":        {[]byte(a2aJSON), []byte(bareTask), []byte(seedTask), []byte(seedMessageOnly)},
		"mcp":        {[]byte(mcpJSON)},
		"specwright": {[]byte(specJSON)},
		"langgraph":  {[]byte(graphJSON)},
		"crewai": {file("crewai", "testdata", "agents.yaml"), file("crewai", "testdata", "tasks.yaml"),
			file("crewai", "testdata", "crew.yaml")},
		"autogen": {file("autogen", "testdata", "round_robin.json"), file("autogen", "testdata", "selector.json"),
			file("autogen", "testdata", "swarm.json")},
	}
}

const graphJSON = `{"nodes": [{"id": "__start__", "type": "schema", "data": {}}, {"id": "agent", "type": "runnable", "data": {"id": ["langgraph", "RunnableCallable"], "name": "agent"}, "metadata": {}},
  {"id": "tools", "type": "runnable", "data": {"id": ["langgraph", "RunnableCallable"], "name": "tools"}, "metadata": {}}, {"id": "__end__", "type": "schema", "data": {}}],
  "edges": [{"source": "__start__", "target": "agent", "conditional": false}, {"source": "tools", "target": "agent", "conditional": false},
  {"source": "agent", "target": "tools", "conditional": true}, {"source": "agent", "target": "__end__", "conditional": true}]}`

// decodeAny reads a sample as YAML (JSON is YAML) into JSON-shaped values.
func decodeAny(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	_ = json.Unmarshal(j, &out)
	return out
}

// claims returns the protocols whose Detects claims in.
func claims(in any) []string {
	var out []string
	for _, a := range adapters.Builtin() {
		if a.(contract.Detector).Detects(in) {
			out = append(out, a.Protocol())
		}
	}
	return out
}

// TestDetectUnambiguous is the property that makes Detect's answer
// trustworthy: every adapter's inputs are claimed by that adapter alone,
// and so is each of thousands of random mutations of them (keys deleted,
// renamed, values replaced by other kinds or by other parts of the
// document, list items dropped or repeated) that any adapter claims at
// all; none is claimed by two.
func TestDetectUnambiguous(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(29))
	n := 0
	claimed := map[string]int{} // mutations claimed by exactly one adapter
	for protocol, ins := range samples(t) {
		for _, in := range ins {
			if got := claims(in); len(got) != 1 || got[0] != protocol {
				t.Fatalf("%s sample claimed by %v:\n%s", protocol, got, in)
			}
			doc := decodeAny(t, in)
			for range 500 {
				m := mutate(rng, deepCopy(doc), doc, 1+rng.Intn(3))
				b, err := json.Marshal(m)
				if err != nil {
					t.Fatal(err)
				}
				if got := claims(b); len(got) > 1 {
					t.Fatalf("a mutation of a %s sample is claimed by %v:\n%s", protocol, got, b)
				}
				got := claims(m)
				if len(got) > 1 {
					t.Fatalf("a decoded mutation of a %s sample is claimed by %v:\n%s", protocol, got, b)
				}
				if len(got) == 1 {
					claimed[got[0]]++
				}
				n++
			}
		}
	}
	t.Logf("%d mutations, none claimed by two adapters; claimed by one: %v", n, claimed)
}

// TestDetectAcrossExports: a sample of each protocol, converted to a
// contract and exported to every protocol that can export, is detected
// as that protocol and no other.
func TestDetectAcrossExports(t *testing.T) {
	t.Parallel()
	r := adapters.Default()
	for from, ins := range samples(t) {
		src, _ := r.Get(from)
		for _, in := range ins {
			c, err := src.ToContract(in, contract.AdapterOptions{})
			if err != nil {
				// An agents.yaml alone has no tasks to convert.
				continue
			}
			for _, to := range adapters.Builtin() {
				w, err := to.FromContract(c)
				if err != nil {
					t.Fatalf("%s → %s: %v", from, to.Protocol(), err)
				}
				b, err := json.Marshal(w)
				if err != nil {
					t.Fatal(err)
				}
				if to.Protocol() == "crewai" {
					if b, err = yaml.Marshal(w); err != nil {
						t.Fatal(err)
					}
				}
				a, err := r.Detect(b)
				if err != nil || a.Protocol() != to.Protocol() {
					t.Fatalf("%s exported to %s is detected as %v (%v):\n%s", from, to.Protocol(), a, err, b)
				}
			}
		}
	}
}

// TestDetectNewProtocols: Detect picks the new adapters for their inputs
// and says what each looked for when nothing fits.
func TestDetectNewProtocols(t *testing.T) {
	t.Parallel()
	r := adapters.Default()
	for protocol, ins := range samples(t) {
		for _, in := range ins {
			a, err := r.Detect(in)
			if err != nil || a.Protocol() != protocol {
				t.Fatalf("%s: %v %v", protocol, a, err)
			}
		}
	}
	docs := contract.Documents{{Name: "agents.yaml", Data: samples(t)["crewai"][0]}, {Name: "tasks.yaml", Data: samples(t)["crewai"][1]}}
	if a, err := r.Detect(docs); err != nil || a.Protocol() != "crewai" {
		t.Fatalf("agents.yaml and tasks.yaml: %v %v", a, err)
	}
	_, err := r.Detect([]byte("just: text\n"))
	if !errors.Is(err, contract.ErrUnknownWorkflow) {
		t.Fatal(err)
	}
}

func deepCopy(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// mutate applies k random changes to doc; orig gives values to move
// around.
func mutate(rng *rand.Rand, doc, orig any, k int) any {
	for range k {
		doc = mutateOnce(rng, doc, orig)
	}
	return doc
}

func mutateOnce(rng *rand.Rand, doc, orig any) any {
	// Pick a container on a random path from the root.
	var parents []any
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			parents = append(parents, x)
			for _, e := range x {
				walk(e)
			}
		case []any:
			parents = append(parents, x)
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(doc)
	if len(parents) == 0 {
		return randomValue(rng, orig)
	}
	switch p := parents[rng.Intn(len(parents))].(type) {
	case map[string]any:
		keys := make([]string, 0, len(p))
		for k := range p {
			keys = append(keys, k)
		}
		if len(keys) == 0 {
			p[fmt.Sprint("k", rng.Intn(3))] = randomValue(rng, orig)
			return doc
		}
		k := keys[rng.Intn(len(keys))]
		switch rng.Intn(4) {
		case 0:
			delete(p, k)
		case 1:
			p[k] = randomValue(rng, orig)
		case 2:
			p[k+"_"] = p[k]
			delete(p, k)
		case 3:
			p[keys[rng.Intn(len(keys))]] = p[k]
		}
	case []any:
		if len(p) == 0 {
			return doc
		}
		i := rng.Intn(len(p))
		switch rng.Intn(3) {
		case 0:
			p[i] = randomValue(rng, orig)
		case 1:
			p[i] = nil
		case 2:
			p[i] = p[rng.Intn(len(p))]
		}
	}
	return doc
}

// randomValue is a value of a random kind, or a random part of orig.
func randomValue(rng *rand.Rand, orig any) any {
	switch rng.Intn(8) {
	case 0:
		return nil
	case 1:
		return ""
	case 2:
		return 7.0
	case 3:
		return true
	case 4:
		return map[string]any{}
	case 5:
		return []any{}
	}
	var all []any
	var walk func(v any)
	walk = func(v any) {
		all = append(all, v)
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(orig)
	return deepCopy(all[rng.Intn(len(all))])
}
