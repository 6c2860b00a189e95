package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/internal/clientcreds"
	"github.com/pactum/pactum/agent/internal/clientcreds/cctest"
	"github.com/pactum/pactum/agent/openai"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/task"
)

// fakeServer is an OpenAI-compatible chat completions server written for
// these tests: no model can run on this machine, so it stands in for
// Ollama, vLLM, llama.cpp's server or OpenAI. It checks every request it
// receives against what the test expects (path, model, messages, stream
// flag, Authorization) and answers from a script, one reply per call.
type fakeServer struct {
	t   *testing.T
	url string

	// want is what every request must carry.
	wantModel    string
	wantMessages []wireMessage
	wantStream   bool
	wantAuth     string // the whole Authorization header; "" means none

	mu      sync.Mutex
	replies []reply
	calls   int
	// traceparents are the traceparent headers of the calls, in order.
	traceparents []string
}

// reply is one scripted answer: a status with headers and a JSON error,
// or a successful answer (streamed as SSE chunks when the request asked).
type reply struct {
	status     int
	retryAfter string
	chunks     []string // the answer's text in pieces
}

type wireMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type wireRequest struct {
	Model         string          `json:"model"`
	Messages      []wireMessage   `json:"messages"`
	Stream        bool            `json:"stream"`
	StreamOptions json.RawMessage `json:"stream_options"`
	Temperature   *float64        `json:"temperature"`
	MaxTokens     *int64          `json:"max_tokens"`
}

func newFakeServer(t *testing.T, f *fakeServer) *fakeServer {
	t.Helper()
	f.t = t
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	f.url = srv.URL + "/v1"
	return f
}

func (f *fakeServer) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	t := f.t
	f.mu.Lock()
	f.calls++
	f.traceparents = append(f.traceparents, r.Header.Get("Traceparent"))
	if len(f.replies) == 0 {
		f.mu.Unlock()
		t.Errorf("unexpected call %s %s: no reply left in the script", r.Method, r.URL.Path)
		http.Error(w, "no reply scripted", http.StatusTeapot)
		return
	}
	rp := f.replies[0]
	f.replies = f.replies[1:]
	f.mu.Unlock()

	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		t.Errorf("request %s %s, want POST /v1/chat/completions", r.Method, r.URL.Path)
	}
	if got := r.Header.Get("Authorization"); got != f.wantAuth {
		t.Errorf("Authorization = %q, want %q", got, f.wantAuth)
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Errorf("read request: %v", err)
		return
	}
	var req wireRequest
	if err := json.Unmarshal(b, &req); err != nil {
		t.Errorf("request body %s: %v", b, err)
		return
	}
	if req.Model != f.wantModel {
		t.Errorf("model = %q, want %q", req.Model, f.wantModel)
	}
	if req.Stream != f.wantStream {
		t.Errorf("stream = %v, want %v", req.Stream, f.wantStream)
	}
	if f.wantStream && !strings.Contains(string(req.StreamOptions), `"include_usage":true`) {
		t.Errorf("stream_options = %s, want include_usage true", req.StreamOptions)
	}
	if len(req.Messages) != len(f.wantMessages) {
		t.Errorf("messages = %+v\nwant %+v", req.Messages, f.wantMessages)
	} else {
		for i := range req.Messages {
			if req.Messages[i] != f.wantMessages[i] {
				t.Errorf("messages[%d] = %+v, want %+v", i, req.Messages[i], f.wantMessages[i])
			}
		}
	}

	if rp.status != 0 && rp.status != http.StatusOK {
		if rp.retryAfter != "" {
			w.Header().Set("Retry-After", rp.retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rp.status)
		fmt.Fprintf(w, `{"error":{"message":"scripted %d","type":"test","param":null,"code":null}}`, rp.status)
		return
	}
	full := strings.Join(rp.chunks, "")
	usage := fmt.Sprintf(`{"prompt_tokens":11,"completion_tokens":%d,"total_tokens":%d}`, len(rp.chunks), 11+len(rp.chunks))
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		c, _ := json.Marshal(full)
		fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":"%s-served","choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],"usage":%s}`, req.Model, c, usage)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	for i, piece := range rp.chunks {
		c, _ := json.Marshal(piece)
		role := ""
		if i == 0 {
			role = `"role":"assistant",`
		}
		fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"%s-served\",\"choices\":[{\"index\":0,\"delta\":{%s\"content\":%s},\"finish_reason\":null}]}\n\n", req.Model, role, c)
		fl.Flush()
	}
	fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"%s-served\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n", req.Model)
	fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"%s-served\",\"choices\":[],\"usage\":%s}\n\n", req.Model, usage)
	fmt.Fprint(w, "data: [DONE]\n\n")
	fl.Flush()
}

// conversation is a task's history: a first question with a data part,
// the agent's question back, and the caller's answer.
func conversation() *task.Request {
	h := []task.Message{
		{ID: "m1", Role: task.RoleUser, Parts: []task.Part{task.TextPart("Review this change."), task.DataPart(json.RawMessage(`{ "file": "a.go",  "lines": [1, 2] }`))}},
		{ID: "m2", Role: task.RoleAgent, Parts: []task.Part{task.TextPart("Which branch?")}},
		{ID: "m3", Role: task.RoleUser, Parts: []task.Part{task.TextPart("main")}},
	}
	return &task.Request{TaskID: "t1", ContextID: "c1", Attempt: 1, Message: h[2], History: h}
}

func wantConversation(system string) []wireMessage {
	var out []wireMessage
	if system != "" {
		out = append(out, wireMessage{"system", system})
	}
	return append(out,
		wireMessage{"user", "Review this change.\n\n" + `{"file":"a.go","lines":[1,2]}`},
		wireMessage{"assistant", "Which branch?"},
		wireMessage{"user", "main"},
	)
}

func ptr[T any](v T) *T { return &v }

func newRuntime(t *testing.T, s openai.Settings) *openai.Runtime {
	t.Helper()
	r, err := openai.New(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func checkUsage(t *testing.T, a task.Artifact, model string, completion int64) {
	t.Helper()
	b, err := json.Marshal(a.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`{"pactum":{"model":%q,"usage":{"completion_tokens":%d,"prompt_tokens":11,"total_tokens":%d}}}`, model, completion, 11+completion)
	if string(b) != want {
		t.Errorf("artifact metadata = %s\nwant %s", b, want)
	}
}

// TestClientCredentials: with oauth2 the calls carry the bearer token of
// a client credentials grant (a stand-in token endpoint, cctest) instead
// of an API key; OPENAI_API_KEY is not sent; both at once are refused.
func TestClientCredentials(t *testing.T) {
	// Not parallel: t.Setenv.
	idp := cctest.Start(t)
	t.Setenv("OPENAI_API_KEY", "sk-must-not-be-sent")
	f := newFakeServer(t, &fakeServer{
		wantModel: "llama3.2", wantStream: true, wantAuth: "Bearer tok-1",
		wantMessages: wantConversation(""),
		replies:      []reply{{chunks: []string{"ok"}}, {chunks: []string{"ok"}}},
	})
	cc := &clientcreds.Settings{TokenURL: idp.URL, ClientID: "pactum", ClientSecretEnv: cctest.SecretEnv}
	r := newRuntime(t, openai.Settings{BaseURL: f.url, Model: "llama3.2", OAuth2: cc})
	for i := 0; i < 2; i++ {
		if _, err := r.Invoke(t.Context(), conversation()); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if n := idp.Issued(); n != 1 {
		t.Errorf("%d tokens issued for two calls, want 1", n)
	}
	if _, err := openai.New(openai.Settings{BaseURL: f.url, Model: "m", APIKeyEnv: "OPENAI_API_KEY", OAuth2: cc}); err == nil ||
		!strings.Contains(err.Error(), "oauth2: not with api_key_env") {
		t.Errorf("oauth2 with api_key_env: %v", err)
	}
}

// TestStream: the streamed answer arrives as artifact chunks, the result
// holds it whole with the usage, and the request carries the system
// prompt, the history and the key from the named environment variable.
func TestStream(t *testing.T) {
	t.Setenv("PACTUM_TEST_OPENAI_KEY", "sk-test-123")
	t.Setenv("OPENAI_API_KEY", "sk-must-not-be-sent")
	f := newFakeServer(t, &fakeServer{
		wantModel: "llama3.2", wantStream: true, wantAuth: "Bearer sk-test-123",
		wantMessages: wantConversation("You review Go code."),
		replies:      []reply{{chunks: []string{"Looks ", "good ", "to me."}}},
	})
	r := newRuntime(t, openai.Settings{BaseURL: f.url, Model: "llama3.2", APIKeyEnv: "PACTUM_TEST_OPENAI_KEY", System: "You review Go code."})
	var chunks []task.ArtifactChunk
	res, err := agent.Runner(r).Run(t.Context(), conversation(), func(c task.ArtifactChunk) error {
		chunks = append(chunks, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for i, c := range chunks {
		if c.Append != (i > 0) || c.LastChunk != (i == len(chunks)-1) {
			t.Errorf("chunk %d: append %v last %v", i, c.Append, c.LastChunk)
		}
		if c.Artifact.ID != res.Artifacts[0].ID {
			t.Errorf("chunk %d: artifact %q, result artifact %q", i, c.Artifact.ID, res.Artifacts[0].ID)
		}
		texts = append(texts, c.Artifact.Parts[0].Text)
	}
	if got, want := strings.Join(texts, "|"), "Looks |good |to me.|"; got != want {
		t.Errorf("chunks = %q, want %q", got, want)
	}
	if len(res.Artifacts) != 1 || res.Artifacts[0].Parts[0].Text != "Looks good to me." {
		t.Fatalf("result = %+v", res.Artifacts)
	}
	if res.Message == nil || res.Message.Text() != "Looks good to me." {
		t.Errorf("result message = %+v", res.Message)
	}
	checkUsage(t, res.Artifacts[0], "llama3.2-served", 3)
	if n := f.callCount(); n != 1 {
		t.Errorf("%d calls, want 1", n)
	}
}

// TestInvokeNotStreaming: stream: false sends stream false and returns the
// text; no key is configured, so none is sent, OPENAI_API_KEY or not.
func TestInvokeNotStreaming(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-must-not-be-sent")
	f := newFakeServer(t, &fakeServer{
		wantModel: "qwen", wantStream: false,
		wantMessages: wantConversation(""),
		replies:      []reply{{chunks: []string{"LGTM"}}},
	})
	r := newRuntime(t, openai.Settings{BaseURL: f.url + "/", Model: "qwen", Stream: ptr(false), Temperature: ptr(0.2), MaxTokens: 64})
	if r.Metadata().Streaming {
		t.Error("metadata says streaming with stream: false")
	}
	res, err := r.Invoke(t.Context(), conversation())
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Artifacts[0].Parts[0].Text; got != "LGTM" {
		t.Errorf("answer = %q", got)
	}
	checkUsage(t, res.Artifacts[0], "qwen-served", 1)
}

// TestErrors: the shared HTTP-status policy decides what is retried and
// what fails the task permanently.
func TestErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		retries   int
		replies   []reply
		wantCalls int
		wantErr   string // "" means success
		permanent bool
		code      task.Code
	}{
		{"500 retryable, no retries", 0, []reply{{status: 500}}, 1, "500: scripted 500", false, task.CodeUnavailable},
		{"500 then success", 2, []reply{{status: 500}, {chunks: []string{"ok"}}}, 2, "", false, ""},
		{"400 permanent, not retried", 2, []reply{{status: 400}}, 1, "400: scripted 400", true, task.CodeInvalidArgument},
		{"401 permanent forbidden", 2, []reply{{status: 401}}, 1, "401: scripted 401", true, task.CodeForbidden},
		{"409 permanent (the client alone would retry it)", 2, []reply{{status: 409}}, 1, "409: scripted 409", true, task.CodeInvalidArgument},
		{"501 permanent", 2, []reply{{status: 501}}, 1, "501: scripted 501", true, task.CodeUnsupported},
		{"429 with Retry-After then success", 2, []reply{{status: 429, retryAfter: "1"}, {chunks: []string{"ok"}}}, 2, "", false, ""},
		// A Retry-After beyond the client's limit (2 minutes) stops the
		// retries: the attempt fails retryably and the task's own retry
		// policy waits.
		{"429 with a long Retry-After", 2, []reply{{status: 429, retryAfter: "3600"}}, 1, "429: scripted 429", false, task.CodeUnavailable},
	} {
		for _, stream := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s stream=%v", tc.name, stream), func(t *testing.T) {
				t.Parallel()
				f := newFakeServer(t, &fakeServer{wantModel: "m", wantStream: stream, wantMessages: wantConversation(""), replies: tc.replies})
				r := newRuntime(t, openai.Settings{BaseURL: f.url, Model: "m", Stream: ptr(stream), MaxRetries: ptr(tc.retries)})
				res, err := r.Invoke(t.Context(), conversation())
				if n := f.callCount(); n != tc.wantCalls {
					t.Errorf("%d calls, want %d", n, tc.wantCalls)
				}
				if tc.wantErr == "" {
					if err != nil {
						t.Fatal(err)
					}
					if got := res.Artifacts[0].Parts[0].Text; got != "ok" {
						t.Errorf("answer = %q", got)
					}
					return
				}
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if task.IsPermanent(err) != tc.permanent {
					t.Errorf("permanent = %v, want %v (%v)", task.IsPermanent(err), tc.permanent, err)
				}
				if got := task.ErrorCode(err); got != tc.code {
					t.Errorf("code = %q, want %q", got, tc.code)
				}
			})
		}
	}
}

// TestNoServer: a connection refused is retryable.
func TestNoServer(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL
	srv.Close()
	r := newRuntime(t, openai.Settings{BaseURL: u + "/v1", Model: "m", MaxRetries: ptr(0)})
	_, err := r.Invoke(t.Context(), conversation())
	if err == nil || task.IsPermanent(err) {
		t.Fatalf("err = %v, want a retryable error", err)
	}
}

// TestCanceled: a canceled attempt returns the context's error.
func TestCanceled(t *testing.T) {
	t.Parallel()
	r := newRuntime(t, openai.Settings{BaseURL: "http://127.0.0.1:1/v1", Model: "m"})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := r.Invoke(ctx, conversation()); err == nil || !strings.Contains(err.Error(), context.Canceled.Error()) {
		t.Fatalf("err = %v, want canceled", err)
	}
}

func TestSettings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    openai.Settings
		want string
	}{
		{openai.Settings{Model: "m"}, "base_url: required"},
		{openai.Settings{BaseURL: "ftp://x/v1", Model: "m"}, `base_url: scheme must be http or https, not "ftp"`},
		{openai.Settings{BaseURL: "http://u:p@x/v1", Model: "m"}, "base_url: credentials in the URL are not supported; name the key's environment variable in api_key_env"},
		{openai.Settings{BaseURL: "http://x/v1"}, "model: required"},
		{openai.Settings{BaseURL: "http://x/v1", Model: "m", Temperature: ptr(2.5)}, "temperature: must be between 0 and 2"},
		{openai.Settings{BaseURL: "http://x/v1", Model: "m", MaxTokens: -1}, "max_tokens: must not be negative"},
		{openai.Settings{BaseURL: "http://x/v1", Model: "m", Timeout: -1}, "timeout: must not be negative"},
		{openai.Settings{BaseURL: "http://x/v1", Model: "m", MaxRetries: ptr(-1)}, "max_retries: must not be negative"},
		{openai.Settings{BaseURL: "http://x/v1", Model: "m", Models: map[string]string{"haiku": ""}}, `models: alias "haiku"`},
		{openai.Settings{BaseURL: "http://x/v1", Model: "m", APIKeyEnv: "PACTUM_TEST_OPENAI_UNSET_VAR"}, "api_key_env: environment variable PACTUM_TEST_OPENAI_UNSET_VAR is not set"},
	} {
		_, err := openai.New(tc.s)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want %q…", tc.s, err, tc.want)
		}
	}
}

func TestResolveModel(t *testing.T) {
	t.Parallel()
	r := newRuntime(t, openai.Settings{BaseURL: "http://x/v1", Model: "llama3.2", Models: map[string]string{"sonnet": "qwen2.5-coder:32b", "haiku": "llama3.2:1b"}})
	for alias, want := range map[string]string{"": "llama3.2", "inherit": "llama3.2", "sonnet": "qwen2.5-coder:32b", "haiku": "llama3.2:1b", "mistral": "mistral"} {
		if got := r.ResolveModel(alias); got != want {
			t.Errorf("ResolveModel(%q) = %q, want %q", alias, got, want)
		}
	}
}

// TestRegistered: configuration's `type: openai` builds this runtime.
func TestRegistered(t *testing.T) {
	t.Parallel()
	a, err := agent.New(t.Context(), agent.Spec{Name: "llm", Type: "openai", Decode: func(v any) error {
		s := v.(*openai.Settings)
		s.BaseURL, s.Model = "http://127.0.0.1:11434/v1", "llama3.2"
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close(a)
	if m := agent.MetadataOf(a); m.Type != "openai" || !m.Streaming {
		t.Errorf("metadata = %+v", m)
	}
}

// TestDocExamples builds every agent of the openai example in
// docs/runtimes.md, so the documented settings stay the runtime's.
func TestDocExamples(t *testing.T) {
	t.Setenv("VLLM_KEY", "k")
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "runtimes.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## openai\n")
	if !ok {
		t.Fatal("docs/runtimes.md has no openai section")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	_, y, ok := strings.Cut(sec, "```yaml\n")
	if !ok {
		t.Fatal("the openai section has no yaml example")
	}
	y, _, _ = strings.Cut(y, "```")
	c, err := config.Parse([]byte(y), "runtimes.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Agents) != 3 {
		t.Fatalf("%d agents in the example, want 3", len(c.Agents))
	}
	for _, a := range c.Agents {
		ag, err := agent.New(t.Context(), agent.Spec(c.AgentSpec(a, "")))
		if err != nil {
			t.Errorf("agent %s: %v", a.Name, err)
			continue
		}
		_ = agent.Close(ag)
	}
}
