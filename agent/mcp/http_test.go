package mcpagent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/agenttest"
	"github.com/pactum/pactum/agent/internal/clientcreds/cctest"
	"github.com/pactum/pactum/task"
)

// The tests in this file serve an MCP server written with the Go SDK over
// streamable HTTP on a loopback port, and reach it through `url:`.

const testToken = "Bearer s3cret"

// httpServer is an in-process MCP server behind a bearer token.
type httpServer struct {
	url string
	// canceled receives when a call of the "block" tool sees its context
	// end (the client sent notifications/cancelled).
	canceled chan struct{}
	// close stops the server.
	close func()
	// traceparents receives the traceparent header of each greet call,
	// metaTraceparents its params._meta.traceparent.
	traceparents, metaTraceparents chan string
	// token is the Authorization the server accepts (default testToken).
	token atomic.Value
}

type greetIn struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type addOut struct {
	Sum int `json:"sum"`
}

type stepsIn struct {
	Steps int `json:"steps"`
}

func newHTTPServer(t *testing.T) *httpServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveHTTP(t, ln)
}

// serveHTTP serves a new MCP server on ln until the test ends.
func serveHTTP(t *testing.T, ln net.Listener) *httpServer {
	t.Helper()
	hs := &httpServer{canceled: make(chan struct{}, 1), traceparents: make(chan string, 16), metaTraceparents: make(chan string, 16)}
	srv := sdk.NewServer(&sdk.Implementation{Name: "pactum-test", Version: "1.0.0"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "greet", Description: "Greets someone by name"},
		func(_ context.Context, req *sdk.CallToolRequest, in greetIn) (*sdk.CallToolResult, any, error) {
			if req.Extra != nil {
				select {
				case hs.traceparents <- req.Extra.Header.Get("Traceparent"):
				default:
				}
			}
			tp, _ := req.Params.Meta["traceparent"].(string)
			select {
			case hs.metaTraceparents <- tp:
			default:
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "Hello, " + in.Name + "!"}}}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "add", Description: "Adds two integers"},
		func(_ context.Context, _ *sdk.CallToolRequest, in addIn) (*sdk.CallToolResult, addOut, error) {
			return nil, addOut{Sum: in.A + in.B}, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "fail", Description: "Always fails"},
		func(context.Context, *sdk.CallToolRequest, greetIn) (*sdk.CallToolResult, any, error) {
			return nil, nil, errors.New("the fail tool failed, as it always does")
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "steps", Description: "Reports progress"},
		func(ctx context.Context, req *sdk.CallToolRequest, in stepsIn) (*sdk.CallToolResult, any, error) {
			for i := 1; i <= in.Steps; i++ {
				if tok := req.Params.GetProgressToken(); tok != nil {
					p := &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(in.Steps), Message: fmt.Sprintf("step %d", i)}
					if err := req.Session.NotifyProgress(ctx, p); err != nil {
						return nil, nil, err
					}
				}
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("%d steps done", in.Steps)}}}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "block", Description: "Runs until canceled"},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Message: "started"})
			}
			select {
			case <-ctx.Done():
				hs.canceled <- struct{}{}
				return nil, nil, ctx.Err()
			case <-time.After(callTimeout):
				return nil, nil, errors.New("not canceled")
			}
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		want := testToken
		if tok, ok := hs.token.Load().(string); ok {
			want = tok
		}
		if r.Header.Get("Authorization") != want {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	// Close, unlike httptest.Server's, does not wait for the handlers of
	// open event streams: it stands in for a server that goes away.
	server := &http.Server{Handler: mux}
	go func() { _ = server.Serve(ln) }()
	hs.close = func() { _ = server.Close() }
	t.Cleanup(hs.close)
	hs.url = "http://" + ln.Addr().String() + "/mcp"
	return hs
}

// viaHTTP is a runtime calling tool at url with the test token.
func viaHTTP(t *testing.T, url, tool string, extra ...string) *bundle {
	t.Helper()
	return setup(t, fmt.Sprintf("url: %q\nheaders: {Authorization: %q}\ntool: %q\n%s", url, testToken, tool, strings.Join(extra, "\n")))
}

func TestHTTPTextToOnlyRequiredString(t *testing.T) {
	t.Parallel()
	srv := newHTTPServer(t)
	b := viaHTTP(t, srv.url, "greet")
	if got := b.text(t, "Ada"); got != "Hello, Ada!" {
		t.Errorf("text = %q", got)
	}
	if got := b.text(t, "Grace"); got != "Hello, Grace!" {
		t.Errorf("second call text = %q", got)
	}
	if b.starts() != 1 {
		t.Errorf("sessions started = %d, want 1", b.starts())
	}
	if d := b.r.Metadata().Description; d != "Greets someone by name" {
		t.Errorf("description = %q", d)
	}
}

// TestHTTPClientCredentials: with oauth2 the session's requests carry the
// bearer token of a client credentials grant (a stand-in token endpoint,
// cctest), fetched once for the session and its calls.
func TestHTTPClientCredentials(t *testing.T) {
	// Not parallel: cctest sets the secret's environment variable.
	idp := cctest.Start(t)
	srv := newHTTPServer(t)
	srv.token.Store("Bearer tok-1")
	b := setup(t, fmt.Sprintf("url: %q\ntool: greet\n%s", srv.url, idp.YAML()))
	for _, who := range []string{"Ada", "Grace"} {
		if got := b.text(t, who); got != "Hello, "+who+"!" {
			t.Errorf("text = %q", got)
		}
	}
	if n := idp.Issued(); n != 1 {
		t.Errorf("%d tokens issued, want 1", n)
	}
	if _, err := agent.New(context.Background(), agenttest.Spec(t, "mcp", "command: cat\ntool: x\n"+idp.YAML())); err == nil ||
		!strings.Contains(err.Error(), "oauth2: for a streamable-HTTP server (url)") {
		t.Errorf("oauth2 on a stdio server: %v", err)
	}
}

func TestHTTPConfiguredArgument(t *testing.T) {
	t.Parallel()
	srv := newHTTPServer(t)
	b := viaHTTP(t, srv.url, "greet", "argument: name")
	if got := b.text(t, "Alan"); got != "Hello, Alan!" {
		t.Errorf("text = %q", got)
	}
}

func TestHTTPStructuredContent(t *testing.T) {
	t.Parallel()
	srv := newHTTPServer(t)
	b := viaHTTP(t, srv.url, "add")
	res, err := b.invokeData(t, `{"a": 40, "b": 2}`)
	if err != nil {
		t.Fatal(err)
	}
	parts := res.Artifacts[0].Parts
	last := parts[len(parts)-1]
	if last.Kind != task.PartData || string(last.Data) != `{"sum":42}` {
		t.Errorf("parts = %+v, want a data part {\"sum\":42} last", parts)
	}
}

func TestHTTPToolError(t *testing.T) {
	t.Parallel()
	srv := newHTTPServer(t)
	b := viaHTTP(t, srv.url, "fail")
	_, err := b.invoke(t, "x")
	wantPermanent(t, err, task.CodeAgentFailed, "the fail tool failed")
}

func TestHTTPProgress(t *testing.T) {
	t.Parallel()
	srv := newHTTPServer(t)
	b := viaHTTP(t, srv.url, "steps")
	var rec agenttest.Recorder
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	res, err := b.r.Stream(ctx, dataRequest(`{"steps": 3}`), rec.Emit)
	if err != nil {
		t.Fatal(err)
	}
	agenttest.CheckChunks(t, rec.Chunks(), res)
	// The tool returns right after its last notification; none is lost.
	want := []string{"1/3: step 1\n", "2/3: step 2\n", "3/3: step 3\n", ""}
	if texts := rec.Texts(); !slices.Equal(texts, want) {
		t.Errorf("progress chunks = %q, want %q", texts, want)
	}
	// Invoked without streaming, no progress is asked for.
	res, err = b.invokeData(t, `{"steps": 3}`)
	if got := mustText(t, res, err); got != "3 steps done" {
		t.Errorf("text = %q", got)
	}
}

func TestHTTPCancelReachesServer(t *testing.T) {
	t.Parallel()
	srv := newHTTPServer(t)
	b := viaHTTP(t, srv.url, "block")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var once sync.Once
	_, err := b.r.Stream(ctx, dataRequest(`{}`), func(task.ArtifactChunk) error {
		once.Do(cancel) // the call is running on the server
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	select {
	case <-srv.canceled:
	case <-time.After(callTimeout):
		t.Fatal("the server's tool call was not canceled")
	}
}

func TestHTTPWrongEndpointIsPermanent(t *testing.T) {
	t.Parallel()
	srv := newHTTPServer(t)
	b := viaHTTP(t, strings.TrimSuffix(srv.url, "/mcp")+"/nope", "greet")
	_, err := b.invoke(t, "x")
	wantPermanent(t, err, task.CodeUnsupported, "HTTP 404")

	b = setup(t, fmt.Sprintf("url: %q\ntool: greet\n", srv.url)) // no token
	_, err = b.invoke(t, "x")
	wantPermanent(t, err, task.CodeForbidden, "HTTP 401")
}

// TestHTTPStartStatusPolicy: an HTTP status answering the start of a
// session fails the task, or leaves it to be retried, by the policy the
// HTTP runtimes share (docs/runtimes.md).
func TestHTTPStartStatusPolicy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status    int
		permanent bool
		code      task.Code
	}{
		{http.StatusRequestTimeout, false, task.CodeUnavailable},
		{http.StatusLocked, false, task.CodeUnavailable},
		{http.StatusTooEarly, false, task.CodeUnavailable},
		{http.StatusTooManyRequests, false, task.CodeUnavailable},
		{http.StatusBadGateway, false, task.CodeUnavailable},
		{http.StatusConflict, true, task.CodeInvalidArgument},
		{http.StatusNotImplemented, true, task.CodeUnsupported},
		{http.StatusHTTPVersionNotSupported, true, task.CodeUnsupported},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.status), func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "no", tt.status)
			}))
			t.Cleanup(srv.Close)
			b := viaHTTP(t, srv.URL+"/mcp", "greet")
			_, err := b.invoke(t, "x")
			if tt.permanent {
				wantPermanent(t, err, tt.code, fmt.Sprintf("HTTP %d", tt.status))
			} else {
				wantRetryable(t, err, tt.code, "connect to "+srv.URL)
			}
		})
	}
}

func TestHTTPConnectionRefusedIsRetryable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	b := viaHTTP(t, "http://"+addr+"/mcp", "greet")
	_, err = b.invoke(t, "x")
	wantRetryable(t, err, task.CodeUnavailable, "connect to http://"+addr)
}

// TestHTTPServerRestart: a server that went away and came back (on the
// same address, without the old session) is reached again on a new
// session. The first call after the restart may still go out on a pooled
// connection to the old server and fail, retryably; the call after it
// succeeds.
func TestHTTPServerRestart(t *testing.T) {
	t.Parallel()
	srv := newHTTPServer(t)
	b := viaHTTP(t, srv.url, "greet")
	if got := b.text(t, "one"); got != "Hello, one!" {
		t.Fatalf("text = %q", got)
	}
	srv.close()
	addr := strings.TrimSuffix(strings.TrimPrefix(srv.url, "http://"), "/mcp")
	// The port was just released; another process taking it meanwhile is
	// rare, so retry briefly and fail (not skip) if it stays taken.
	var ln net.Listener
	var err error
	for try := 0; try < 40; try++ {
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("cannot listen on %s again to restart the server: %v", addr, err)
	}
	serveHTTP(t, ln)
	res, err := b.invoke(t, "two")
	if err != nil {
		wantRetryable(t, err, task.CodeUnavailable)
		res, err = b.invoke(t, "two")
	}
	if got := mustText(t, res, err); got != "Hello, two!" {
		t.Errorf("text after the restart = %q", got)
	}
	if b.starts() != 2 {
		t.Errorf("sessions started = %d, want 2", b.starts())
	}
}
