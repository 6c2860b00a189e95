package node_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace/noop"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/node"
	"github.com/pactum/pactum/internal/telemetry"
	"github.com/pactum/pactum/task"
)

// collector is an OTLP/HTTP trace receiver on loopback: it decodes each
// ExportTraceServiceRequest and keeps its spans.
type collector struct {
	*httptest.Server
	mu       sync.Mutex
	spans    []*tracepb.Span
	services []string
	requests int
}

func newCollector(t *testing.T) *collector {
	t.Helper()
	c := &collector{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "not an OTLP/HTTP protobuf trace export", http.StatusBadRequest)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		c.requests++
		for _, rs := range req.ResourceSpans {
			for _, kv := range rs.GetResource().GetAttributes() {
				if kv.Key == "service.name" {
					c.services = append(c.services, kv.GetValue().GetStringValue())
				}
			}
			for _, ss := range rs.ScopeSpans {
				c.spans = append(c.spans, ss.Spans...)
			}
		}
		c.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(c.Close)
	return c
}

// traceNode is a pactum node on a loopback httptest server whose handler
// records the traceparent of every POST it gets.
type traceNode struct {
	url  string
	srv  *node.Server
	mu   sync.Mutex
	got  []string
	stop func()
}

func (n *traceNode) traceparents() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.got...)
}

func startTraceNode(t *testing.T, yaml string) *traceNode {
	t.Helper()
	n := &traceNode{}
	var h http.Handler
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			n.mu.Lock()
			n.got = append(n.got, r.Header.Get("Traceparent"))
			n.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	n.url = ts.URL
	src := fmt.Sprintf("base_url: %s\nstore: %q\nlog: {level: error}\n%s", ts.URL,
		"sqlite://"+filepath.Join(t.TempDir(), "pactum.db"), yaml)
	cfg, err := config.Parse([]byte(src), "trace.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	n.srv, err = node.New(ctx, cfg, ".", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	h = n.srv.Handler()
	if err := n.srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	n.stop = func() {
		once.Do(func() {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := n.srv.Stop(sctx); err != nil {
				t.Errorf("stop node: %v", err)
			}
			ts.Close()
		})
	}
	t.Cleanup(n.stop)
	return n
}

// hook is a webhook agent's endpoint that records the traceparent of each
// call.
type hook struct {
	*httptest.Server
	mu  sync.Mutex
	got []string
}

func newHook(t *testing.T) *hook {
	t.Helper()
	k := &hook{}
	k.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k.mu.Lock()
		k.got = append(k.got, r.Header.Get("Traceparent"))
		k.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"output":"hooked"}`)
	}))
	t.Cleanup(k.Close)
	return k
}

func (k *hook) traceparents() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.got...)
}

// sendWithTrace sends a blocking A2A SendMessage (JSON-RPC) to url with
// traceparent (none when empty) and returns the task id of the answer.
func sendWithTrace(t *testing.T, url, traceparent string) string {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-%d","role":"ROLE_USER","parts":[{"text":"hello"}]}}}`, time.Now().UnixNano())
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewBufferString(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	if traceparent != "" {
		req.Header.Set("Traceparent", traceparent)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !bytes.Contains(out, []byte("TASK_STATE_COMPLETED")) {
		t.Fatalf("SendMessage: %d %s", resp.StatusCode, out)
	}
	_, rest, ok := bytes.Cut(out, []byte(`"id":"`))
	if !ok {
		t.Fatalf("no task id in %s", out)
	}
	id, _, _ := bytes.Cut(rest, []byte(`"`))
	return string(id)
}

// parseTP splits a W3C traceparent into its trace id and parent span id.
func parseTP(t *testing.T, tp string) (traceID, spanID string) {
	t.Helper()
	f := strings.Split(tp, "-")
	if len(f) != 4 || f[0] != "00" || len(f[1]) != 32 || len(f[2]) != 16 {
		t.Fatalf("malformed traceparent %q", tp)
	}
	return f[1], f[2]
}

func attrOf(s *tracepb.Span, key string) *commonpb.AnyValue {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value
		}
	}
	return nil
}

// TestTraceAcrossTwoNodesAndWebhook follows one task through node A (an
// a2a-runtime agent), node B (a webhook agent) and the webhook, with
// tracing exported over OTLP/HTTP to a collector on loopback, and checks
// the trace span by span.
func TestTraceAcrossTwoNodesAndWebhook(t *testing.T) {
	col := newCollector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.URL)
	t.Setenv("OTEL_SERVICE_NAME", "pactum-trace-test")
	shutdown, err := telemetry.Setup(context.Background(), "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { otel.SetTracerProvider(noop.NewTracerProvider()) })

	wh := newHook(t)
	nodeB := startTraceNode(t, fmt.Sprintf("node: node-b\nagents:\n  - name: hook\n    type: webhook\n    webhook: {url: %q, allow_private: true}\n", wh.URL))
	nodeA := startTraceNode(t, fmt.Sprintf("node: node-a\nagents:\n  - name: relay\n    type: a2a\n    a2a: {url: %q}\n", nodeB.url+"/agents/hook"))

	const inTrace, inSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	id := sendWithTrace(t, nodeA.url+"/agents/relay", "00-"+inTrace+"-"+inSpan+"-01")

	// The trace is stored with each task.
	for _, n := range []*traceNode{nodeA, nodeB} {
		res, err := n.srv.Coordinator().List(context.Background(), task.ListParams{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tasks) != 1 {
			t.Fatalf("%s: %d tasks, want 1", n.url, len(res.Tasks))
		}
		if got := res.Tasks[0].TraceID(); got != inTrace {
			t.Errorf("%s: stored trace id %q, want %s", n.url, got, inTrace)
		}
	}

	// Stop both nodes (every attempt's span has ended), then flush.
	nodeA.stop()
	nodeB.stop()
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	col.mu.Lock()
	spans := append([]*tracepb.Span(nil), col.spans...)
	services := append([]string(nil), col.services...)
	col.mu.Unlock()
	if len(spans) == 0 {
		t.Fatal("the collector received no spans")
	}
	for _, s := range services {
		if s != "pactum-trace-test" {
			t.Errorf("service.name %q, want OTEL_SERVICE_NAME's pactum-trace-test", s)
		}
	}
	byID := map[string]*tracepb.Span{}
	var names []string
	for _, s := range spans {
		if got := hex.EncodeToString(s.TraceId); got != inTrace {
			t.Errorf("span %q in trace %s, want the incoming trace %s", s.Name, got, inTrace)
		}
		byID[hex.EncodeToString(s.SpanId)] = s
		names = append(names, s.Name)
	}
	t.Logf("spans: %q", names)
	parentOf := func(s *tracepb.Span) string { return hex.EncodeToString(s.ParentSpanId) }
	idOf := func(s *tracepb.Span) string { return hex.EncodeToString(s.SpanId) }
	one := func(name string) *tracepb.Span {
		t.Helper()
		var found *tracepb.Span
		for _, s := range spans {
			if s.Name == name {
				if found != nil {
					t.Fatalf("two spans named %q; spans: %q", name, names)
				}
				found = s
			}
		}
		if found == nil {
			t.Fatalf("no span named %q; spans: %q", name, names)
		}
		return found
	}
	// isBelow reports whether s descends from ancestor.
	isBelow := func(s, ancestor *tracepb.Span) bool {
		for p := byID[parentOf(s)]; p != nil; p = byID[parentOf(p)] {
			if p == ancestor {
				return true
			}
		}
		return false
	}
	str := func(s *tracepb.Span, key string) string {
		t.Helper()
		v := attrOf(s, key)
		if v == nil {
			t.Errorf("span %q has no attribute %s", s.Name, key)
			return ""
		}
		return v.GetStringValue()
	}

	// Node A.
	subA := one("submit relay")
	if parentOf(subA) != inSpan {
		t.Errorf("node A's submission span has parent %s, want the incoming span %s", parentOf(subA), inSpan)
	}
	if subA.Kind != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("submit relay kind %v, want server", subA.Kind)
	}
	if got := str(subA, "pactum.task.id"); got != id {
		t.Errorf("submit relay pactum.task.id %q, want %s", got, id)
	}
	attA := one("attempt relay")
	if parentOf(attA) != idOf(subA) {
		t.Errorf("attempt relay's parent %s, want submit relay %s", parentOf(attA), idOf(subA))
	}
	if got := str(attA, "pactum.node"); got != "node-a" {
		t.Errorf("attempt relay pactum.node %q", got)
	}
	if got := str(attA, "pactum.task.state"); got != "succeeded" {
		t.Errorf("attempt relay pactum.task.state %q", got)
	}
	for _, step := range []string{"step policy", "step dry_run"} {
		var found bool
		for _, s := range spans {
			if s.Name == step && isBelow(s, attA) {
				found = true
			}
		}
		if !found {
			t.Errorf("no %q span below attempt relay; spans: %q", step, names)
		}
	}
	invA := one("invoke_agent relay")
	if !isBelow(invA, attA) {
		t.Errorf("invoke_agent relay is not below attempt relay")
	}
	if invA.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("invoke_agent relay kind %v, want client", invA.Kind)
	}
	if str(invA, "gen_ai.operation.name") != "invoke_agent" || str(invA, "gen_ai.agent.name") != "relay" {
		t.Errorf("invoke_agent relay attributes: %v", invA.Attributes)
	}

	// What node B received: one SendMessage (or stream) POST carrying the
	// traceparent of node A's HTTP client span, itself below invoke_agent.
	tps := nodeB.traceparents()
	if len(tps) == 0 {
		t.Fatal("node B received no POST")
	}
	var sendSpan *tracepb.Span
	for _, tp := range tps {
		if tp == "" {
			t.Fatalf("node B received a POST without traceparent: %q", tps)
		}
		tr, sp := parseTP(t, tp)
		if tr != inTrace {
			t.Errorf("node B received trace %s, want %s", tr, inTrace)
		}
		s := byID[sp]
		if s == nil {
			t.Fatalf("node B's traceparent names span %s, which node A did not export", sp)
		}
		if s.Kind != tracepb.Span_SPAN_KIND_CLIENT || parentOf(s) != idOf(invA) {
			t.Errorf("node B's traceparent names span %q (kind %v, parent %s), want an HTTP client span below invoke_agent relay %s", s.Name, s.Kind, parentOf(s), idOf(invA))
		}
		sendSpan = s
	}

	// Node B.
	subB := one("submit hook")
	if parentOf(subB) != idOf(sendSpan) {
		t.Errorf("node B's submission has parent %s, want node A's HTTP client span %s", parentOf(subB), idOf(sendSpan))
	}
	attB := one("attempt hook")
	if parentOf(attB) != idOf(subB) {
		t.Errorf("attempt hook's parent %s, want submit hook %s", parentOf(attB), idOf(subB))
	}
	if got := str(attB, "pactum.node"); got != "node-b" {
		t.Errorf("attempt hook pactum.node %q", got)
	}
	invB := one("invoke_agent hook")
	if !isBelow(invB, attB) || str(invB, "gen_ai.agent.name") != "hook" {
		t.Errorf("invoke_agent hook: below attempt hook %v, attributes %v", isBelow(invB, attB), invB.Attributes)
	}

	// The webhook.
	hooks := wh.traceparents()
	if len(hooks) != 1 {
		t.Fatalf("webhook called %d times, want 1", len(hooks))
	}
	tr, sp := parseTP(t, hooks[0])
	if tr != inTrace {
		t.Errorf("webhook got trace %s, want %s", tr, inTrace)
	}
	if s := byID[sp]; s == nil || s.Kind != tracepb.Span_SPAN_KIND_CLIENT || parentOf(s) != idOf(invB) {
		t.Errorf("webhook's traceparent names span %v, want node B's HTTP client span below invoke_agent hook", s)
	}

}

// TestTracingOff checks the default: with no OTEL_* configuration (here
// OTEL_TRACES_EXPORTER=none, which wins over an endpoint) nothing is
// exported; a task submitted without traceparent sends none to its
// webhook and stores none; one submitted with a traceparent passes it on
// unchanged (pactum makes no spans of its own) and stores its trace id.
func TestTracingOff(t *testing.T) {
	col := newCollector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.URL)
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	shutdown, err := telemetry.Setup(context.Background(), "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	otel.SetTracerProvider(noop.NewTracerProvider())

	wh := newHook(t)
	n := startTraceNode(t, fmt.Sprintf("agents:\n  - name: hook\n    type: webhook\n    webhook: {url: %q, allow_private: true}\n", wh.URL))
	plain := sendWithTrace(t, n.url+"/agents/hook", "")
	const inTrace, inSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	incoming := "00-" + inTrace + "-" + inSpan + "-01"
	traced := sendWithTrace(t, n.url+"/agents/hook", incoming)
	for id, want := range map[string]string{plain: "", traced: inTrace} {
		tk, err := n.srv.Coordinator().Get(context.Background(), id, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := tk.TraceID(); got != want {
			t.Errorf("task %s: stored trace id %q, want %q", id, got, want)
		}
	}
	n.stop()
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	if got := wh.traceparents(); len(got) != 2 || got[0] != "" || got[1] != incoming {
		t.Errorf("webhook got traceparents %q, want none then %q", got, incoming)
	}
	col.mu.Lock()
	requests := col.requests
	col.mu.Unlock()
	if requests != 0 {
		t.Errorf("the collector got %d exports with tracing off", requests)
	}
}

// BenchmarkSendMessageTraced is BenchmarkSendMessage with tracing on:
// every span exported over OTLP/HTTP, in batches, to a collector on
// loopback that decodes them. Run:
// go test -run x -bench SendMessageTraced -benchtime 3000x ./internal/node
func BenchmarkSendMessageTraced(b *testing.B) {
	col := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	defer col.Close()
	b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.URL)
	shutdown, err := telemetry.Setup(context.Background(), "bench", nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = shutdown(context.Background())
		otel.SetTracerProvider(noop.NewTracerProvider())
	})
	base := startServer(b, "workers: 64\nlog: {level: error}\nagents:\n  - name: echo\n    type: echo\n")
	benchSend(b, base+"/agents/echo")
}
