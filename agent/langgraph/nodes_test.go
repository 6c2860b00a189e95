package langgraph

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/pactum/pactum/internal/lgstate"
	"github.com/pactum/pactum/task"
)

// nodeLog collects what the runtime reports through Request.OnNode.
type nodeLog struct {
	mu    sync.Mutex
	nodes []task.Node
	stop  string // the node whose report is refused
	err   error
}

func (l *nodeLog) on(_ context.Context, n task.Node) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.nodes = append(l.nodes, n)
	if n.Name == l.stop {
		return l.err
	}
	return nil
}

func (l *nodeLog) names() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, n := range l.nodes {
		out = append(out, n.Name)
	}
	return out
}

// outputs returns each node's output by name.
func (l *nodeLog) outputs() map[string]*task.Result {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]*task.Result{}
	for _, n := range l.nodes {
		out[n.Name] = n.Result
	}
	return out
}

// TestNodesReported: each node of the graph is reported as it ends, with
// its state update as its output (lgstate.NodeOutput); an attempt that
// finds the run finished reports the same nodes with the same outputs,
// read from the thread's history instead of the stream.
func TestNodesReported(t *testing.T) {
	b := setup(t, "chain", "")
	req := request("task-nodes", "ctx-nodes", "pactum")
	streamed := &nodeLog{}
	req.OnNode = streamed.on
	if _, err := b.r.Invoke(b.ctx, req); err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	if got, want := streamed.names(), []string{"research", "write", "review"}; !slices.Equal(got, want) {
		t.Fatalf("nodes reported %v, want %v", got, want)
	}
	out := streamed.outputs()
	if got := out["write"].Message.Text(); got != "# Report\n\nfacts: pactum" {
		t.Errorf("write's output text = %q", got)
	}
	if a := out["research"].Artifacts; len(a) != 1 || a[0].Name != "output" || len(a[0].Parts) != 1 || a[0].Parts[0].Kind != task.PartData {
		t.Errorf("research's output artifacts = %+v, want one data part named output", a)
	}

	// The same turn again (a restart after the run finished): the nodes
	// come from the history, equal to what the stream said.
	again := request("task-nodes", "ctx-nodes", "pactum")
	again.Attempt = 2
	fromHistory := &nodeLog{}
	again.OnNode = fromHistory.on
	if _, err := b.r.Invoke(b.ctx, again); err != nil {
		t.Fatalf("Invoke again: %v", err)
	}
	if got, want := fromHistory.names(), []string{"research", "write", "review"}; !slices.Equal(got, want) {
		t.Fatalf("nodes reported from the history %v, want %v", got, want)
	}
	if h := fromHistory.outputs(); !reflect.DeepEqual(h, out) {
		t.Errorf("outputs from the history differ from the stream's:\nhistory %+v\nstream  %+v", h, out)
	}
	if got := threadRuns(t, b.url, ThreadID(t.Name(), "ctx-nodes")); len(got) != 1 {
		t.Errorf("runs = %q, want one", got)
	}
}

// TestNodeRefusedStopsTheRun: a report refused stops the attempt with the
// refusal, unchanged, and cancels the run on the server while its next
// node runs; that node is never reported.
func TestNodeRefusedStopsTheRun(t *testing.T) {
	b := setup(t, "chain", "")
	req := request("task-stop", "ctx-stop", "pactum")
	refusal := errors.New("write broke its contract")
	log := &nodeLog{stop: "write", err: refusal}
	req.OnNode = log.on
	_, err := b.r.Invoke(b.ctx, req)
	if !errors.Is(err, refusal) || err.Error() != refusal.Error() {
		t.Fatalf("Invoke = %v, want the refusal unchanged", err)
	}
	if got, want := log.names(), []string{"research", "write"}; !slices.Equal(got, want) {
		t.Errorf("nodes reported %v, want %v", got, want)
	}
	thread := ThreadID(t.Name(), "ctx-stop")
	waitRuns(t, b.url, thread, "ended")
	// The run was canceled while review ran: review never ended.
	var states []lgstate.ThreadState
	if err := b.r.call(b.ctx, http.MethodPost, "/threads/"+thread+"/history", map[string]any{"limit": 100}, &states); err != nil {
		t.Fatal(err)
	}
	runs, _, err := lgstate.NodeRuns(lgstate.Latest(states))
	if err != nil {
		t.Fatal(err)
	}
	var ran []string
	for _, r := range runs {
		ran = append(ran, r.Task.Name)
	}
	if want := []string{"research", "write"}; !slices.Equal(ran, want) {
		t.Errorf("the history shows the nodes %v ran, want %v", ran, want)
	}
}
