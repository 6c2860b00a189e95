// Package langgraph is the protocol adapter between a LangGraph graph, as
// its JSON (Python's graph.get_graph().to_json(), JavaScript's
// graph.getGraph().toJSON()), and a contract.
//
// The mapping (docs/contracts.md, "LangGraph", has it as a table):
//
//   - the graph is the contract: id "contract_langgraph_" + a hash of the
//     graph (the same graph always gives the same id);
//   - each node but __start__ and __end__ is a step, in the nodes' order:
//     id and agent the node's id, description the node's name (data.name)
//     when it differs from its id; step metadata langgraphNode keeps the
//     node's type, data and metadata;
//   - an edge between two nodes is a dependency of its target on its
//     source, unless it closes a loop (a back edge of a depth-first walk
//     from __start__ following the edges in the file's order): a loop's
//     edge stays in metadata only (loopsFrom), so the dependencies form
//     no cycle;
//   - a conditional edge (the graph may or may not take it) is a
//     dependency as well, and its source is listed in the step's
//     conditionalFrom: an optional dependency, the step may not run;
//   - every edge into a step, with its condition label (data) and whether
//     it is conditional, is kept in step metadata edgesIn, and every edge
//     to __end__ in edgesToEnd, so FromContract gives the graph back.
package langgraph

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/internal/convert"
	"github.com/pactum/pactum/internal/lgstate"
)

// Names of the adapter.
const (
	Protocol = "langgraph"
	// Version is the graph JSON's shape: LangGraph 1.x (Python and JS
	// print the same).
	Version = "1"
	// ContractIDPrefix is put before the graph's hash to make the
	// contract id.
	ContractIDPrefix = "contract_langgraph_"
	// Start and End are LangGraph's virtual nodes.
	Start = lgstate.Start
	End   = lgstate.End
)

// Metadata keys.
const (
	MetaNode            = "langgraphNode"   // step: {type, data, metadata} of the node
	MetaEdgesIn         = "edgesIn"         // step: [{source, conditional, data}]
	MetaEdgesToEnd      = "edgesToEnd"      // step: [{conditional, data}]
	MetaConditionalFrom = "conditionalFrom" // step: sources of conditional edges (optional dependencies)
	MetaLoopsFrom       = "loopsFrom"       // step: sources of edges that close a loop
	MetaStartNode       = "langgraphStart"  // contract: the __start__ node's type and data (input schema)
	MetaEndNode         = "langgraphEnd"    // contract: the __end__ node's type and data (output schema)
)

// Graph is a graph's JSON.
type Graph struct {
	Nodes []Node `json:"nodes"`
	Edges []Edge `json:"edges"`
}

// Node is a node of the graph: its id, its type ("runnable", "schema",
// "unknown") and data (a runnable's {id, name}, a schema's JSON Schema).
type Node struct {
	ID       string         `json:"id"`
	Type     string         `json:"type,omitempty"`
	Data     any            `json:"data,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Edge is an edge: Conditional when a router decides whether the graph
// takes it; Data is the router's label for it, when the graph has one.
type Edge struct {
	Source      string `json:"source"`
	Target      string `json:"target"`
	Data        any    `json:"data,omitempty"`
	Conditional bool   `json:"conditional"`
}

// Adapter is the LangGraph protocol adapter.
type Adapter struct{}

var (
	_ contract.ProtocolAdapter = Adapter{}
	_ contract.Detector        = Adapter{}
)

// New returns the adapter.
func New() Adapter { return Adapter{} }

func (Adapter) Protocol() string { return Protocol }
func (Adapter) Version() string  { return Version }
func (Adapter) Description() string {
	return "LangGraph: a graph's JSON (get_graph().to_json()) as contract steps, its edges as dependencies"
}

// LooksFor implements contract.Detector.
func (Adapter) LooksFor() string {
	return `an object with "nodes" (a list holding a node "__start__") and "edges" (a list)`
}

// Detects implements contract.Detector: a Graph, or an object whose nodes
// is a list holding an object with id "__start__" and whose edges is a
// list. Every compiled LangGraph graph has __start__; an empty node list
// is nobody's.
func (Adapter) Detects(v any) bool {
	switch x := v.(type) {
	case Graph:
		return true
	case *Graph:
		return x != nil
	}
	m, ok := contract.JSONObject(v)
	if !ok || contract.JSONKind(m["edges"]) != "array" || contract.JSONKind(m["nodes"]) != "array" {
		return false
	}
	var nodes []json.RawMessage
	if json.Unmarshal(m["nodes"], &nodes) != nil {
		return false
	}
	for _, n := range nodes {
		var node struct {
			ID any `json:"id"`
		}
		if json.Unmarshal(n, &node) == nil && node.ID == Start {
			return true
		}
	}
	return false
}

// ToContract implements contract.ProtocolAdapter: workflow is a Graph or
// its JSON.
func (Adapter) ToContract(v any, opts contract.AdapterOptions) (*contract.AgentContract, error) {
	g, err := contract.Decode[Graph](v)
	if err != nil {
		return nil, fmt.Errorf("langgraph: %w", err)
	}
	return ToContract(g, opts)
}

// FromContract implements contract.ProtocolAdapter; it returns a Graph.
func (Adapter) FromContract(c *contract.AgentContract) (any, error) { return FromContract(c) }

// ToContract converts a graph to a contract as the package documentation
// says. A node without an id, two nodes of one id, or an edge naming a
// node the graph does not have is an error; so is a graph with no node
// but __start__ and __end__. AutoAssertions adds nothing (a graph says
// nothing about its nodes' output); ResourceMappings is not used.
func ToContract(g Graph, opts contract.AdapterOptions) (*contract.AgentContract, error) {
	index := map[string]int{}
	for i, n := range g.Nodes {
		if n.ID == "" {
			return nil, fmt.Errorf("langgraph: nodes[%d] has no id", i)
		}
		if j, dup := index[n.ID]; dup {
			return nil, fmt.Errorf("langgraph: nodes[%d]: node %q is also nodes[%d]", i, n.ID, j)
		}
		index[n.ID] = i
	}
	for i, e := range g.Edges {
		for _, end := range []string{e.Source, e.Target} {
			if _, ok := index[end]; !ok && end != Start && end != End {
				return nil, fmt.Errorf("langgraph: edges[%d]: no node %q", i, end)
			}
		}
	}
	back := backEdges(g)

	c := &contract.AgentContract{
		Version:    "1.0",
		ID:         ContractIDPrefix + graphHash(g),
		Protocol:   Protocol,
		Strictness: opts.Strictness,
		Metadata:   map[string]any{},
	}
	var steps []Node
	for _, n := range g.Nodes {
		switch n.ID {
		case Start, End:
			if opts.PreserveMetadata {
				key := MetaStartNode
				if n.ID == End {
					key = MetaEndNode
				}
				c.Metadata[key] = convert.JSON(nodeMeta(n))
			}
			continue
		}
		steps = append(steps, n)
	}
	if len(steps) == 0 {
		return nil, errors.New("langgraph: the graph has no node but __start__ and __end__")
	}
	all := len(steps)
	if opts.MaxSteps > 0 && len(steps) > opts.MaxSteps {
		steps = steps[:opts.MaxSteps]
		c.Metadata["truncatedFrom"] = all
	}
	kept := map[string]bool{}
	for _, n := range steps {
		kept[n.ID] = true
	}
	var names []string
	for _, n := range steps {
		st := contract.ContractStep{
			ID:       n.ID,
			Agent:    n.ID,
			Metadata: map[string]any{MetaNode: convert.JSON(nodeMeta(n))},
		}
		if name := nodeName(n); name != "" && name != n.ID {
			st.Description = name
		}
		var in, toEnd []any
		var cond, loops []string
		for i, e := range g.Edges {
			if e.Source == n.ID && e.Target == End {
				toEnd = append(toEnd, edgeMeta(e, false))
			}
			if e.Target != n.ID || e.Source != Start && !kept[e.Source] {
				continue
			}
			in = append(in, edgeMeta(e, true))
			if e.Source == Start {
				continue
			}
			if back[i] {
				loops = appendOnce(loops, e.Source)
				continue
			}
			st.DependsOn = appendOnce(st.DependsOn, e.Source)
			if e.Conditional {
				cond = appendOnce(cond, e.Source)
			}
		}
		if in != nil {
			st.Metadata[MetaEdgesIn] = in
		}
		if toEnd != nil {
			st.Metadata[MetaEdgesToEnd] = toEnd
		}
		if cond != nil {
			st.Metadata[MetaConditionalFrom] = cond
		}
		if loops != nil {
			st.Metadata[MetaLoopsFrom] = loops
		}
		names = append(names, n.ID)
		c.Steps = append(c.Steps, st)
	}
	c.Description = fmt.Sprintf("LangGraph graph of %d nodes", len(names))
	if len(c.Metadata) == 0 {
		c.Metadata = nil
	}
	return c, nil
}

// backEdges marks the edges that close a loop: the back edges of a
// depth-first walk from __start__ (then from each node not reached, in
// the nodes' order) that follows each node's edges in the file's order.
func backEdges(g Graph) map[int]bool {
	out := map[string][]int{}
	for i, e := range g.Edges {
		out[e.Source] = append(out[e.Source], i)
	}
	const (
		unseen = iota
		open
		done
	)
	state := map[string]int{}
	back := map[int]bool{}
	// An explicit stack: a graph from a file may be deep.
	type frame struct {
		node string
		next int
	}
	walk := func(root string) {
		if state[root] != unseen {
			return
		}
		state[root] = open
		stack := []frame{{node: root}}
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.next == len(out[top.node]) {
				state[top.node] = done
				stack = stack[:len(stack)-1]
				continue
			}
			i := out[top.node][top.next]
			top.next++
			switch t := g.Edges[i].Target; state[t] {
			case open:
				back[i] = true
			case unseen:
				state[t] = open
				stack = append(stack, frame{node: t})
			}
		}
	}
	walk(Start)
	for _, n := range g.Nodes {
		walk(n.ID)
	}
	return back
}

func appendOnce(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

// nodeMeta is what a step's langgraphNode keeps of its node.
func nodeMeta(n Node) map[string]any {
	m := map[string]any{}
	if n.Type != "" {
		m["type"] = n.Type
	}
	if n.Data != nil {
		m["data"] = n.Data
	}
	if n.Metadata != nil {
		m["metadata"] = n.Metadata
	}
	return m
}

func edgeMeta(e Edge, withSource bool) map[string]any {
	m := map[string]any{"conditional": e.Conditional}
	if withSource {
		m["source"] = e.Source
	}
	if e.Data != nil {
		m["data"] = e.Data
	}
	return m
}

// nodeName is a runnable node's data.name.
func nodeName(n Node) string {
	d, _ := convert.JSON(n.Data).(map[string]any)
	return convert.String(d, "name")
}

// graphHash names a graph by its content, so that the same graph always
// makes the same contract id; the edges' order and the __start__ and
// __end__ nodes' schemas do not count (a round trip groups the edges by
// target and keeps the schemas only with PreserveMetadata).
func graphHash(g Graph) string {
	var nodes []Node
	for _, n := range g.Nodes {
		if n.ID != Start && n.ID != End {
			nodes = append(nodes, n)
		}
	}
	edges := make([]string, len(g.Edges))
	for i, e := range g.Edges {
		b, _ := json.Marshal(e)
		edges[i] = string(b)
	}
	slices.Sort(edges)
	b, _ := json.Marshal(struct {
		Nodes []Node   `json:"nodes"`
		Edges []string `json:"edges"`
	}{nodes, edges})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// FromContract converts a contract back to a graph: __start__, a node per
// step (id the step's; type, data and metadata from langgraphNode, else a
// runnable named by the step's agent), __end__; the edges into each step
// from its edgesIn (else one from each step it depends on, or from
// __start__ when it depends on none), then its edgesToEnd (else, when no
// step of the contract has edge metadata, one to __end__ from each step
// no other depends on). The __start__ and __end__ nodes' data come back
// with PreserveMetadata.
func FromContract(c *contract.AgentContract) (Graph, error) {
	if c == nil {
		return Graph{}, errors.New("langgraph: nil contract")
	}
	g := Graph{Nodes: []Node{virtualNode(Start, c.Metadata[MetaStartNode])}}
	present := map[string]bool{}
	dependedOn := map[string]bool{}
	withEdges := false
	for _, st := range c.Steps {
		present[st.ID] = true
		for _, d := range st.DependsOn {
			dependedOn[d] = true
		}
		if _, ok := st.Metadata[MetaEdgesIn]; ok {
			withEdges = true
		}
		if _, ok := st.Metadata[MetaEdgesToEnd]; ok {
			withEdges = true
		}
	}
	var toEnd []Edge
	for _, st := range c.Steps {
		n := Node{ID: st.ID}
		if md := convert.Object(st.Metadata[MetaNode]); md != nil {
			n.Type = convert.String(md, "type")
			n.Data = md["data"]
			n.Metadata = convert.Object(md["metadata"])
		} else {
			agent := st.Agent
			if agent == "" {
				agent = st.ID
			}
			n.Type = "runnable"
			n.Data = map[string]any{"id": []any{"langgraph", "RunnableCallable"}, "name": agent}
		}
		g.Nodes = append(g.Nodes, n)

		if in, ok := st.Metadata[MetaEdgesIn].([]any); ok {
			for _, x := range in {
				e := edgeFrom(x, st.ID)
				if e.Source == Start || present[e.Source] {
					g.Edges = append(g.Edges, e)
				}
			}
		} else if _, ok := st.Metadata[MetaEdgesIn]; !ok {
			if len(st.DependsOn) == 0 {
				g.Edges = append(g.Edges, Edge{Source: Start, Target: st.ID})
			}
			for _, d := range st.DependsOn {
				g.Edges = append(g.Edges, Edge{Source: d, Target: st.ID})
			}
		}
		if out, ok := st.Metadata[MetaEdgesToEnd].([]any); ok {
			for _, x := range out {
				e := edgeFrom(x, "")
				toEnd = append(toEnd, Edge{Source: st.ID, Target: End, Data: e.Data, Conditional: e.Conditional})
			}
		} else if !withEdges && !dependedOn[st.ID] {
			toEnd = append(toEnd, Edge{Source: st.ID, Target: End})
		}
	}
	g.Edges = append(g.Edges, toEnd...)
	g.Nodes = append(g.Nodes, virtualNode(End, c.Metadata[MetaEndNode]))
	return g, nil
}

func virtualNode(id string, md any) Node {
	n := Node{ID: id, Type: "schema"}
	if m := convert.Object(md); m != nil {
		n.Type = convert.String(m, "type")
		n.Data = m["data"]
		n.Metadata = convert.Object(m["metadata"])
	}
	return n
}

func edgeFrom(x any, target string) Edge {
	m := convert.Object(x)
	return Edge{Source: convert.String(m, "source"), Target: target, Data: m["data"], Conditional: convert.Bool(m, "conditional")}
}
