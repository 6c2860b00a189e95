package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/agenttest"
	"github.com/pactum/pactum/agent/internal/clientcreds/cctest"
	"github.com/pactum/pactum/agent/webhook"
	"github.com/pactum/pactum/task"
)

// stuck bounds every test so that a runtime that never returns fails
// instead of hanging; no test measures time.
const stuck = 30 * time.Second

type bundle struct {
	agent agent.Agent
	srv   *httptest.Server
	calls *atomic.Int32
	ctx   context.Context
}

// setup starts h on loopback and builds a webhook agent for it from YAML
// settings, as configuration does. allow_private is on: the server is on
// 127.0.0.1.
func setup(t *testing.T, h http.HandlerFunc, settings string) bundle {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		// The server notices a client going away (and cancels
		// r.Context()) only once the request body has been read.
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("read request body: %v", err)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	a, err := agent.New(context.Background(), agenttest.Spec(t, "webhook", fmt.Sprintf("url: %s/webhook/agent\nallow_private: true\n%s", srv.URL, settings)))
	if err != nil {
		t.Fatalf("agent.New: %v", err)
	}
	t.Cleanup(func() { _ = agent.Close(a) })
	ctx, cancel := context.WithTimeout(context.Background(), stuck)
	t.Cleanup(cancel)
	return bundle{agent: a, srv: srv, calls: &calls, ctx: ctx}
}

func (b bundle) invoke(t *testing.T, text string) *task.Result {
	t.Helper()
	res, err := b.agent.Invoke(b.ctx, agenttest.Request(text))
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	return res
}

func (b bundle) stream(t *testing.T, emit task.Emit) (*task.Result, error) {
	t.Helper()
	return b.agent.(agent.Streamer).Stream(b.ctx, agenttest.Request("hi"), emit)
}

func reply(contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		if contentType == "" {
			w.Header()["Content-Type"] = nil // no sniffing
		} else {
			w.Header().Set("Content-Type", contentType)
		}
		_, _ = io.WriteString(w, body)
	}
}

func TestDefaultPayload(t *testing.T) {
	t.Parallel()
	var got map[string]any
	var method, ctype string
	b := setup(t, func(w http.ResponseWriter, r *http.Request) {
		method, ctype = r.Method, r.Header.Get("Content-Type")
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Error(err)
		}
		reply("application/json", `{"output":"hi there"}`)(w, r)
	}, "")
	res := b.invoke(t, "what is 2+2?")
	if method != "POST" || ctype != "application/json" {
		t.Errorf("method %s, content type %q", method, ctype)
	}
	for k, want := range map[string]any{
		"chatInput": "what is 2+2?",
		"sessionId": "ctx-1",
		"taskId":    "task-1",
		"contextId": "ctx-1",
		"action":    "ask",
		"actor":     "alice",
		"attempt":   1.0,
		"metadata":  map[string]any{"source": "agenttest"},
	} {
		if !reflect.DeepEqual(got[k], want) {
			t.Errorf("payload %s = %#v, want %#v", k, got[k], want)
		}
	}
	msg, _ := got["message"].(map[string]any)
	if parts, _ := msg["parts"].([]any); len(parts) != 1 || msg["role"] != "user" || msg["id"] != "msg-1" {
		t.Errorf("payload message = %#v", got["message"])
	}
	if text := agenttest.ResultText(t, res); text != "hi there" || res.Message.Text() != "hi there" || res.Artifacts[0].Name != "output" {
		t.Errorf("result = %+v", res)
	}
}

func TestAnswer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, ctype, body, settings string
		kind                        task.PartKind
		want                        string
	}{
		{"output first", "application/json", `{"text":"b","output":"a"}`, "", task.PartText, "a"},
		{"text", "application/json; charset=utf-8", `{"text":"b"}`, "", task.PartText, "b"},
		{"answer", "application/json", `{"answer":"c","x":1}`, "", task.PartText, "c"},
		{"response", "application/json", `{"response":"r"}`, "", task.PartText, "r"},
		{"n8n item list", "application/json", `[{"output":"from n8n"}]`, "", task.PartText, "from n8n"},
		{"structured output", "application/json", `{"output":{"k":1}}`, "", task.PartData, `{"k":1}`},
		{"whole body", "application/json", `{"other":1}`, "", task.PartData, `{"other":1}`},
		{"pointer", "application/json", `{"data":{"reply":"x"},"output":"no"}`, "answer: /data/reply", task.PartText, "x"},
		{"problem+json", "application/problem+json", `{"text":"t"}`, "", task.PartText, "t"},
		{"plain text", "text/plain; charset=utf-8", "just text\n", "", task.PartText, "just text\n"},
		{"no type, JSON", "", `{"output":"sniffed"}`, "", task.PartText, "sniffed"},
		{"no type, text", "", `hello`, "", task.PartText, "hello"},
		{"file", "application/pdf", "%PDF-1.7", "", task.PartRaw, "%PDF-1.7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, reply(tt.ctype, tt.body), tt.settings)
			res := b.invoke(t, "q")
			if len(res.Artifacts) != 1 || len(res.Artifacts[0].Parts) != 1 {
				t.Fatalf("result = %+v", res)
			}
			p := res.Artifacts[0].Parts[0]
			if p.Kind != tt.kind {
				t.Fatalf("part = %+v, want kind %s", p, tt.kind)
			}
			got := p.Text
			switch p.Kind {
			case task.PartData:
				got = string(p.Data)
			case task.PartRaw:
				got = string(p.Raw)
				if p.MediaType != tt.ctype {
					t.Errorf("media type = %q", p.MediaType)
				}
			}
			if got != tt.want {
				t.Errorf("answer = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAnswerErrors(t *testing.T) {
	t.Parallel()
	b := setup(t, reply("application/json", `{"data":{}}`), "answer: /data/reply")
	if _, err := b.agent.Invoke(b.ctx, agenttest.Request("q")); err == nil || !strings.Contains(err.Error(), `"/data/reply"`) {
		t.Errorf("missing answer: err = %v", err)
	}
	b = setup(t, reply("application/json", `{"data":`), "")
	if _, err := b.agent.Invoke(b.ctx, agenttest.Request("q")); err == nil || !strings.Contains(err.Error(), "invalid JSON") {
		t.Errorf("truncated JSON: err = %v", err)
	}
}

func TestEmptyBody(t *testing.T) {
	t.Parallel()
	b := setup(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }, "")
	if res := b.invoke(t, "q"); len(res.Artifacts) != 0 || res.Message != nil {
		t.Errorf("result = %+v, want empty", res)
	}
}

func TestRetries5xxThenSuccess(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	b := setup(t, func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) {
		case 1:
			http.Error(w, "warming up", http.StatusServiceUnavailable)
		case 2:
			w.Header().Set("Retry-After", "1") // capped by max_backoff
			http.Error(w, "slow down", http.StatusTooManyRequests)
		default:
			reply("application/json", `{"output":"ok"}`)(w, r)
		}
	}, "retry: {initial_backoff: 1ms, max_backoff: 5ms}")
	if got := agenttest.ResultText(t, b.invoke(t, "q")); got != "ok" {
		t.Errorf("text = %q", got)
	}
	if c := b.calls.Load(); c != 3 {
		t.Errorf("calls = %d, want 3", c)
	}
}

func TestRetriesRunOut(t *testing.T) {
	t.Parallel()
	b := setup(t, func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "database down", http.StatusInternalServerError)
	}, "retry: {max_attempts: 3, initial_backoff: 1ms, max_backoff: 2ms}")
	_, err := b.agent.Invoke(b.ctx, agenttest.Request("q"))
	if err == nil || task.IsPermanent(err) {
		t.Fatalf("err = %v, want a retryable error", err)
	}
	for _, want := range []string{"500 Internal Server Error", "database down", "after 3 calls"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %q, want it to contain %q", err, want)
		}
	}
	if c := b.calls.Load(); c != 3 {
		t.Errorf("calls = %d, want 3", c)
	}
}

func TestConnectionErrorRetried(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	b := setup(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			_ = conn.Close() // no response at all
			return
		}
		reply("text/plain", "second time lucky")(w, r)
	}, "retry: {initial_backoff: 1ms}")
	if got := agenttest.ResultText(t, b.invoke(t, "q")); got != "second time lucky" {
		t.Errorf("text = %q", got)
	}
	if c := b.calls.Load(); c != 2 {
		t.Errorf("calls = %d, want 2", c)
	}
}

func Test4xxIsPermanent(t *testing.T) {
	t.Parallel()
	b := setup(t, func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "field chatInput is required "+strings.Repeat("x", 2000), http.StatusBadRequest)
	}, "retry: {initial_backoff: 1ms}")
	_, err := b.agent.Invoke(b.ctx, agenttest.Request("q"))
	if !task.IsPermanent(err) {
		t.Fatalf("err = %v, want permanent", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "400 Bad Request: field chatInput is required") || len(msg) > 700 {
		t.Errorf("err = %q (%d bytes), want the status and a short body excerpt", msg, len(msg))
	}
	if c := b.calls.Load(); c != 1 {
		t.Errorf("calls = %d, want 1", c)
	}
}

// TestStatusPolicy: each status the HTTP runtimes' shared policy names is
// retried inside the attempt, or fails the task at once, as
// docs/runtimes.md says.
func TestStatusPolicy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status    int
		permanent bool
	}{
		{http.StatusRequestTimeout, false},
		{http.StatusLocked, false},
		{http.StatusTooEarly, false},
		{http.StatusTooManyRequests, false},
		{http.StatusBadGateway, false},
		{http.StatusConflict, true},
		{http.StatusNotFound, true},
		{http.StatusNotImplemented, true},
		{http.StatusHTTPVersionNotSupported, true},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.status), func(t *testing.T) {
			t.Parallel()
			b := setup(t, func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "no", tt.status)
			}, "retry: {max_attempts: 2, initial_backoff: 1ms, max_backoff: 1ms}")
			_, err := b.agent.Invoke(b.ctx, agenttest.Request("q"))
			if err == nil {
				t.Fatal("no error")
			}
			if got := task.IsPermanent(err); got != tt.permanent {
				t.Errorf("permanent = %v, want %v (%v)", got, tt.permanent, err)
			}
			want := "no"
			if !tt.permanent {
				want = "after 2 calls"
			}
			if !strings.Contains(err.Error(), strconv.Itoa(tt.status)) || !strings.Contains(err.Error(), want) {
				t.Errorf("err = %q, want the status and %q", err, want)
			}
			calls := int32(2)
			if tt.permanent {
				calls = 1
			}
			if c := b.calls.Load(); c != calls {
				t.Errorf("calls = %d, want %d", c, calls)
			}
		})
	}
}

func TestCallTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t, func(_ http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}, "timeout: 50ms\nretry: {max_attempts: 2, initial_backoff: 1ms}")
	_, err := b.agent.Invoke(b.ctx, agenttest.Request("q"))
	if !errors.Is(err, context.DeadlineExceeded) || task.IsPermanent(err) || !strings.Contains(err.Error(), "no response within 50ms") {
		t.Errorf("err = %v, want a retryable timeout", err)
	}
	if c := b.calls.Load(); c != 2 {
		t.Errorf("calls = %d, want 2", c)
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{})
	b := setup(t, func(_ http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done()
	}, "")
	ctx, cancel := context.WithCancel(b.ctx)
	go func() {
		<-arrived
		cancel()
	}()
	_, err := b.agent.Invoke(ctx, agenttest.Request("q"))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestResponseTooLarge(t *testing.T) {
	t.Parallel()
	b := setup(t, reply("text/plain", strings.Repeat("a", 100)), "max_response_bytes: 10")
	_, err := b.agent.Invoke(b.ctx, agenttest.Request("q"))
	if !task.IsPermanent(err) || !strings.Contains(err.Error(), "max_response_bytes") {
		t.Errorf("err = %v, want a permanent size error", err)
	}
	b = setup(t, reply("text/plain", strings.Repeat("a", 10)), "max_response_bytes: 10")
	if got := agenttest.ResultText(t, b.invoke(t, "q")); got != strings.Repeat("a", 10) {
		t.Errorf("body at the limit = %q", got)
	}
}

func TestSSEStreaming(t *testing.T) {
	t.Parallel()
	firstSeen := make(chan struct{})
	b := setup(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, ": hello\nevent: token\ndata: {\"text\":\"Hel\"}\n\n")
		w.(http.Flusher).Flush()
		// The rest waits until the client has emitted the first chunk.
		select {
		case <-firstSeen:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, "data: lo\r\n\r\ndata: \"quoted\"\n\ndata: {\"type\":\"begin\"}\n\ndata: multi\ndata: line\n\ndata: [DONE]\n\n")
	}, "")
	var rec agenttest.Recorder
	res, err := b.stream(t, func(c task.ArtifactChunk) error {
		if len(rec.Chunks()) == 0 {
			close(firstSeen)
		}
		return rec.Emit(c)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rec.Texts(), []string{"Hel", "lo", "quoted", "multi\nline", ""}; !reflect.DeepEqual(got, want) {
		t.Errorf("chunks = %q, want %q", got, want)
	}
	agenttest.CheckChunks(t, rec.Chunks(), res)
	if got := agenttest.ResultText(t, res); got != "Helloquotedmulti\nline" {
		t.Errorf("final text = %q", got)
	}
}

// n8n streams {"type":"begin"}, {"type":"item","content":…}…, {"type":"end"}.
const n8nStream = `{"type":"begin","metadata":{"nodeId":"1"}}
{"type":"item","content":"Hello","metadata":{"nodeId":"1"}}
{"type":"item","content":" world","metadata":{"nodeId":"1"}}
{"type":"end","metadata":{"nodeId":"1"}}
`

func TestNDJSONStreaming(t *testing.T) {
	t.Parallel()
	// n8n labels its stream application/json; the runtime sees the
	// second document and streams all the same.
	for _, ctype := range []string{"application/x-ndjson", "application/json; charset=utf-8"} {
		b := setup(t, reply(ctype, n8nStream), "")
		var rec agenttest.Recorder
		res, err := b.stream(t, rec.Emit)
		if err != nil {
			t.Fatalf("%s: %v", ctype, err)
		}
		if got, want := rec.Texts(), []string{"Hello", " world", ""}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: chunks = %q, want %q", ctype, got, want)
		}
		agenttest.CheckChunks(t, rec.Chunks(), res)
		if got := agenttest.ResultText(t, res); got != "Hello world" {
			t.Errorf("%s: final text = %q", ctype, got)
		}
		// Invoke reads the same stream to its end without emitting.
		if got := agenttest.ResultText(t, b.invoke(t, "q")); got != "Hello world" {
			t.Errorf("%s: Invoke text = %q", ctype, got)
		}
	}
}

func TestNDJSONArrivesWhileOpen(t *testing.T) {
	t.Parallel()
	firstSeen := make(chan struct{})
	b := setup(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		_, _ = io.WriteString(w, `{"type":"item","content":"one"}`+"\n")
		w.(http.Flusher).Flush()
		select {
		case <-firstSeen:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, `{"type":"item","content":"two"}`+"\n")
	}, "")
	var rec agenttest.Recorder
	res, err := b.stream(t, func(c task.ArtifactChunk) error {
		if len(rec.Chunks()) == 0 {
			close(firstSeen)
		}
		return rec.Emit(c)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := agenttest.ResultText(t, res); got != "onetwo" {
		t.Errorf("final text = %q", got)
	}
}

func TestStreamErrorEvent(t *testing.T) {
	t.Parallel()
	b := setup(t, reply("application/x-ndjson", `{"type":"begin"}`+"\n"+`{"type":"error","content":"node Agent failed"}`+"\n"), "")
	_, err := b.stream(t, (&agenttest.Recorder{}).Emit)
	if err == nil || !strings.Contains(err.Error(), "node Agent failed") {
		t.Errorf("err = %v, want the stream's error", err)
	}
}

func TestStreamAnswerPointer(t *testing.T) {
	t.Parallel()
	b := setup(t, reply("text/event-stream", "data: {\"delta\":{\"text\":\"a\"}}\n\ndata: {\"delta\":{\"text\":\"b\"}}\n\n"), "answer: /delta/text")
	var rec agenttest.Recorder
	res, err := b.stream(t, rec.Emit)
	if err != nil {
		t.Fatal(err)
	}
	if got := agenttest.ResultText(t, res); got != "ab" {
		t.Errorf("final text = %q", got)
	}
}

func TestTemplatedBody(t *testing.T) {
	t.Parallel()
	var got string
	b := setup(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = string(body)
		reply("application/json", `{"output":"ok"}`)(w, r)
	}, `body: '{"query": {{json .Input}}, "session": "{{.ContextID}}", "n": {{.Attempt}}, "data": {{.Data}}}'`)
	b.invoke(t, `say "hi"`)
	if want := `{"query": "say \"hi\"", "session": "ctx-1", "n": 1, "data": null}`; got != want {
		t.Errorf("body = %s, want %s", got, want)
	}
}

func TestTemplatedBodyMustBeJSON(t *testing.T) {
	t.Parallel()
	b := setup(t, reply("text/plain", "unreachable"), `body: '{"query": {{.Input}}}'`)
	_, err := b.agent.Invoke(b.ctx, agenttest.Request("not quoted"))
	if !task.IsPermanent(err) || !strings.Contains(err.Error(), "invalid JSON") {
		t.Errorf("err = %v, want a permanent body error", err)
	}
	if c := b.calls.Load(); c != 0 {
		t.Errorf("calls = %d, want none", c)
	}
}

func TestGETSendsNoBody(t *testing.T) {
	t.Parallel()
	var method string
	var length int64
	b := setup(t, func(w http.ResponseWriter, r *http.Request) {
		method, length = r.Method, r.ContentLength
		reply("text/plain", "got it")(w, r)
	}, "method: get")
	b.invoke(t, "q")
	if method != "GET" || length != 0 {
		t.Errorf("method %s with %d body bytes", method, length)
	}
}

func TestHeaderEnv(t *testing.T) {
	// Not parallel: t.Setenv.
	t.Setenv("PACTUM_TEST_WEBHOOK_TOKEN", "s3cret")
	var auth, static, ua string
	b := setup(t, func(w http.ResponseWriter, r *http.Request) {
		auth, static, ua = r.Header.Get("Authorization"), r.Header.Get("X-Static"), r.Header.Get("User-Agent")
		reply("text/plain", "ok")(w, r)
	}, "headers:\n  Authorization: Bearer ${PACTUM_TEST_WEBHOOK_TOKEN}\n  X-Static: $5 plain\n")
	b.invoke(t, "q")
	if auth != "Bearer s3cret" || static != "$5 plain" || ua != "pactum" {
		t.Errorf("headers: Authorization %q, X-Static %q, User-Agent %q", auth, static, ua)
	}

	_, err := agent.New(context.Background(), agenttest.Spec(t, "webhook", "url: https://example.com\nheaders: {X-Key: '${PACTUM_TEST_SURELY_UNSET}', X-Other: '${PACTUM_TEST_WEBHOOK_TOKEN}'}"))
	if err == nil || !strings.Contains(err.Error(), "headers.X-Key: environment variable PACTUM_TEST_SURELY_UNSET is not set") {
		t.Errorf("unset variable: err = %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error reveals a header value: %v", err)
	}
}

// TestClientCredentials: with oauth2 each call carries the bearer token
// of a client credentials grant (from a stand-in token endpoint, cctest),
// fetched once; oauth2 beside an Authorization header is refused.
func TestClientCredentials(t *testing.T) {
	// Not parallel: cctest sets the secret's environment variable.
	idp := cctest.Start(t)
	var auths []string
	b := setup(t, func(w http.ResponseWriter, r *http.Request) {
		auths = append(auths, r.Header.Get("Authorization"))
		reply("text/plain", "ok")(w, r)
	}, idp.YAML())
	b.invoke(t, "q")
	b.invoke(t, "again")
	if len(auths) != 2 || auths[0] != "Bearer tok-1" || auths[1] != "Bearer tok-1" || idp.Issued() != 1 {
		t.Errorf("Authorization %q with %d tokens issued; want Bearer tok-1 twice, one token", auths, idp.Issued())
	}
	_, err := agent.New(context.Background(), agenttest.Spec(t, "webhook", "url: https://example.com\nheaders: {Authorization: x}\n"+idp.YAML()))
	if err == nil || !strings.Contains(err.Error(), "oauth2: the client credentials grant sets the Authorization header") {
		t.Errorf("oauth2 with an Authorization header: %v", err)
	}
}

func TestErrorsHideSecrets(t *testing.T) {
	t.Parallel()
	b := setup(t, func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "nope", http.StatusUnauthorized)
	}, "headers: {Authorization: Bearer tok-123}")
	_, err := b.agent.Invoke(b.ctx, agenttest.Request("q"))
	if err == nil || strings.Contains(err.Error(), "tok-123") || strings.Contains(err.Error(), "/webhook/agent") {
		t.Errorf("err = %v: want no header value and no URL path", err)
	}
}

func TestRefusesPrivateByDefault(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { calls.Add(1) }))
	defer srv.Close()
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	tests := []struct{ url, kind string }{
		{srv.URL, "127.0.0.1, a loopback address"},
		{"http://localhost:" + port, "a loopback address"}, // resolved by DNS first
		{"http://10.0.0.1/webhook", "10.0.0.1, a private address"},
		{"http://169.254.169.254/latest/meta-data", "a link-local address"},
	}
	for _, tt := range tests {
		// From configuration (serve, config check), such a URL is an
		// error at once, at the url.
		_, err := agent.New(context.Background(), agenttest.Spec(t, "webhook", "url: "+tt.url))
		if err == nil || !strings.Contains(err.Error(), "url: host ") || !strings.Contains(err.Error(), tt.kind) || !strings.Contains(err.Error(), "allow_private: true") {
			t.Errorf("%s: agent.New err = %v, want a url error saying %q and how to allow it", tt.url, err, tt.kind)
		}
		// The dialer's guard refuses it at run time too (a name may
		// resolve elsewhere by then).
		a, err := webhook.New(webhook.Settings{URL: tt.url})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), stuck)
		_, err = a.Invoke(ctx, agenttest.Request("q"))
		cancel()
		if !task.IsPermanent(err) || !strings.Contains(err.Error(), tt.kind) || !strings.Contains(err.Error(), "allow_private: true") {
			t.Errorf("%s: err = %v, want a permanent refusal saying %q and how to allow it", tt.url, err, tt.kind)
		}
	}
	if c := calls.Load(); c != 0 {
		t.Errorf("the loopback server got %d calls", c)
	}
}

func TestSettingsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ yaml, want string }{
		{"method: POST", "url: required"},
		{"url: ftp://example.com/x", `url: scheme must be http or https, not "ftp"`},
		{"url: /relative", `url: scheme must be http or https, not ""`},
		{"url: 'http://a b'", "url:"},
		{"url: https://example.com\nmethod: TRACE", "method: must be"},
		{"url: https://example.com\nheaders: {'Bad Name': x}", "headers: invalid header name"},
		{"url: https://example.com\nheaders: {X-A: \"a\\nb\"}", "headers.X-A: the value holds a line break"},
		{"url: https://example.com\nbody: '{{.Nope}}'", "body:"},
		{"url: https://example.com\ntimeout: -1s", "timeout: must not be negative"},
		{"url: https://example.com\nretry: {max_attempts: -1}", "retry.max_attempts"},
		{"url: https://example.com\nretry: {initial_backoff: -1s}", "retry.initial_backoff"},
		{"url: https://example.com\nretry: {initial_backoff: 2s, max_backoff: 1s}", "retry.max_backoff"},
		{"url: https://example.com\nanswer: output", "answer: JSON pointer"},
		{"url: https://example.com\ninput_required: needs_input", "input_required: JSON pointer"},
		{"url: https://example.com\ninput_required: /a~2", "input_required: JSON pointer"},
		{"url: https://example.com\nmax_response_bytes: -5", "max_response_bytes"},
		{"url: https://example.com\nretry: {attempts: 2}", "attempts"},
	}
	for _, tt := range tests {
		_, err := agent.New(context.Background(), agenttest.Spec(t, "webhook", tt.yaml))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("settings %q: err = %v, want it to contain %q", tt.yaml, err, tt.want)
		}
	}
}

func TestNewForGo(t *testing.T) {
	t.Parallel()
	r, err := webhook.New(webhook.Settings{URL: "https://n8n.example.com/webhook/secret-path?token=x"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	m := r.Metadata()
	if m.Type != "webhook" || !m.Streaming || m.Description != "HTTP POST to n8n.example.com" {
		t.Errorf("metadata = %+v", m)
	}
}
