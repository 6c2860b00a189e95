package pactum_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/pactum/pactum"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/syncbuf"
	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/task"
)

// testCtx bounds everything a test does.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

func sqliteDSN(t *testing.T) string {
	t.Helper()
	return "sqlite://" + filepath.Join(t.TempDir(), "pactum.db")
}

// served is a pactum.Serve running in a goroutine.
type served struct {
	url    string
	cancel context.CancelFunc
	done   chan error
}

// serve runs pactum.Serve on a loopback listener with a SQLite store in a
// temp dir; opts come first, so a Config option may lead them. The test
// fails if Serve does not return nil within 15s of the end of the test.
func serve(t *testing.T, opts ...pactum.Option) *served {
	t.Helper()
	ln := listen(t)
	dsn := sqliteDSN(t)
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{url: "http://" + ln.Addr().String(), cancel: cancel, done: make(chan error, 1)}
	opts = append(opts, pactum.Store(dsn), pactum.Listener(ln))
	go func() { s.done <- pactum.Serve(ctx, opts...) }()
	t.Cleanup(func() {
		if err := s.stop(15 * time.Second); err != nil {
			t.Error(err)
		}
	})
	return s
}

// stop cancels Serve's context and waits for it to return.
func (s *served) stop(within time.Duration) error {
	s.cancel()
	select {
	case err, ok := <-s.done:
		if !ok {
			return nil // stopped before
		}
		close(s.done)
		if err != nil {
			return fmt.Errorf("Serve returned %w, want nil", err)
		}
		return nil
	case <-time.After(within):
		return fmt.Errorf("Serve did not return within %s of its context being canceled", within)
	}
}

// send sends text to the A2A agent at base (discovered from its card) and
// returns the task of the blocking SendMessage.
func send(ctx context.Context, t *testing.T, base, text string, metadata map[string]any) *a2a.Task {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(ctx, base)
	if err != nil {
		t.Fatalf("resolve card at %s: %v", base, err)
	}
	client, err := a2aclient.NewFromCard(ctx, card)
	if err != nil {
		t.Fatalf("client for %s: %v", base, err)
	}
	defer client.Destroy()
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	msg.Metadata = metadata
	res, err := client.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		t.Fatalf("send to %s: %v", base, err)
	}
	tk, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("send to %s returned %T, want a task", base, res)
	}
	return tk
}

func artifactText(tk *a2a.Task) string {
	var b strings.Builder
	for _, a := range tk.Artifacts {
		for _, p := range a.Parts {
			b.WriteString(p.Text())
		}
	}
	return b.String()
}

// pactumMeta returns the metadata.pactum object pactum adds to tasks.
func pactumMeta(t *testing.T, tk *a2a.Task) map[string]any {
	t.Helper()
	m, ok := tk.Metadata["pactum"].(map[string]any)
	if !ok {
		t.Fatalf("task metadata %v has no pactum object", tk.Metadata)
	}
	return m
}

func get(ctx context.Context, t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// cardURL returns the URL of the first interface a card advertises.
func cardURL(t *testing.T, body string) string {
	t.Helper()
	var card a2a.AgentCard
	if err := json.Unmarshal([]byte(body), &card); err != nil {
		t.Fatalf("card: %v\n%s", err, body)
	}
	if len(card.SupportedInterfaces) == 0 {
		t.Fatalf("card advertises no interface: %s", body)
	}
	return card.SupportedInterfaces[0].URL
}

func greeter() *pactum.AgentOption {
	return pactum.Func("greeter", func(ctx context.Context, in string) (string, error) {
		return "hello, " + in, nil
	})
}

func TestServeReturnsWhenContextEnds(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	s := serve(t, greeter())
	if tk := send(ctx, t, s.url+"/agents/greeter", "world", nil); artifactText(tk) != "hello, world" {
		t.Fatalf("answer %q", artifactText(tk))
	}
	if code, body := get(ctx, t, s.url+"/readyz"); code != http.StatusOK || body != "ready\n" {
		t.Fatalf("/readyz = %d %q", code, body)
	}
	if code, body := get(ctx, t, s.url+"/metrics"); code != http.StatusOK || !strings.Contains(body, `pactum_tasks{state="succeeded"} 1`) {
		t.Fatalf("/metrics = %d, without one succeeded task:\n%s", code, body)
	}
	if err := s.stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if conn, err := net.DialTimeout("tcp", strings.TrimPrefix(s.url, "http://"), time.Second); err == nil {
		conn.Close()
		t.Fatal("the listener still accepts connections after Serve returned")
	}
}

func TestServeErrors(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	for _, tc := range []struct {
		name string
		opts []pactum.Option
		want string
	}{
		{"no agents", nil, "no agents configured"},
		{"bad store", []pactum.Option{greeter(), pactum.Store("nosuch://x")}, `unknown scheme "nosuch"`},
		{"duplicate agent", []pactum.Option{greeter(), greeter()}, `agent "greeter" registered twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ln := listen(t)
			opts := append([]pactum.Option{pactum.Store(sqliteDSN(t))}, tc.opts...)
			err := pactum.Serve(ctx, append(opts, pactum.Listener(ln))...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Serve = %v, want an error containing %q", err, tc.want)
			}
			// Serve owns the listener it was given, also when it fails.
			if err := ln.(*net.TCPListener).SetDeadline(time.Now().Add(5 * time.Second)); err != nil && !errors.Is(err, net.ErrClosed) {
				t.Fatal(err)
			}
			if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
				t.Fatalf("Accept after a failed Serve: %v, want the listener closed", err)
			}
		})
	}
}

// TestFuncErrors checks how Func errors steer a task: a permanent error
// fails it after one attempt, a plain one is retried until the attempts
// are spent, and a success after a failure completes it.
func TestFuncErrors(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	var permanent, transient, flaky atomic.Int64
	s := serve(t,
		pactum.Func("permanent", func(ctx context.Context, in string) (string, error) {
			permanent.Add(1)
			return "", pactum.Permanent(errors.New("bad input: " + in))
		}).Retry(2, time.Millisecond),
		pactum.Func("transient", func(ctx context.Context, in string) (string, error) {
			transient.Add(1)
			return "", errors.New("upstream unavailable")
		}).Retry(2, time.Millisecond),
		pactum.Func("flaky", func(ctx context.Context, in string) (string, error) {
			if flaky.Add(1) == 1 {
				return "", errors.New("first attempt fails")
			}
			return "ok: " + in, nil
		}).Retry(2, time.Millisecond),
	)
	for _, tc := range []struct {
		agent   string
		calls   *atomic.Int64
		state   a2a.TaskState
		pactum  string
		attempt float64
		reason  string
	}{
		{"permanent", &permanent, a2a.TaskStateFailed, "failed", 1, "bad input: x"},
		{"transient", &transient, a2a.TaskStateFailed, "dead_letter", 2, "attempt 2 of 2 failed: upstream unavailable"},
		{"flaky", &flaky, a2a.TaskStateCompleted, "succeeded", 2, ""},
	} {
		t.Run(tc.agent, func(t *testing.T) {
			tk := send(ctx, t, s.url+"/agents/"+tc.agent, "x", nil)
			meta := pactumMeta(t, tk)
			if tk.Status.State != tc.state || meta["state"] != tc.pactum || meta["attempt"] != tc.attempt || meta["maxAttempts"] != float64(2) {
				t.Fatalf("task %s (pactum %v, attempt %v of %v), want %s (%s, attempt %v of 2)",
					tk.Status.State, meta["state"], meta["attempt"], meta["maxAttempts"], tc.state, tc.pactum, tc.attempt)
			}
			if got := tc.calls.Load(); got != int64(tc.attempt) {
				t.Fatalf("the function ran %d times, want %v", got, tc.attempt)
			}
			if tc.reason != "" {
				if m := tk.Status.Message; m == nil || !strings.Contains(m.Parts[0].Text(), tc.reason) {
					t.Fatalf("status message %+v, want it to contain %q", tk.Status.Message, tc.reason)
				}
			} else if artifactText(tk) != "ok: x" {
				t.Fatalf("answer %q, want \"ok: x\"", artifactText(tk))
			}
		})
	}
}

// TestHandlerMounted mounts pactum in an existing ServeMux: next to the
// program's routes at the root, and under a path prefix.
func TestHandlerMounted(t *testing.T) {
	t.Parallel()
	t.Run("root", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		h, err := pactum.Handler(ctx, greeter(), pactum.Store(sqliteDSN(t)))
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		mux.HandleFunc("GET /app", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "app") })
		mux.Handle("/", h) // everything else, the default agent at the root included
		url := startHTTP(t, mux)

		if code, body := get(ctx, t, url+"/app"); code != http.StatusOK || body != "app" {
			t.Fatalf("the program's own route: %d %q", code, body)
		}
		code, body := get(ctx, t, url+"/agents/greeter/.well-known/agent-card.json")
		if code != http.StatusOK {
			t.Fatalf("card: %d %s", code, body)
		}
		// No BaseURL given: the card must point where it was fetched from,
		// not at the default listen address nobody listens on.
		if got := cardURL(t, body); got != url+"/agents/greeter" {
			t.Fatalf("card advertises %s, want %s", got, url+"/agents/greeter")
		}
		if code, body := get(ctx, t, url+"/.well-known/agent-card.json"); code != http.StatusOK || cardURL(t, body) != url {
			t.Fatalf("default agent card: %d %s, want it to advertise %s", code, body, url)
		}
		for _, base := range []string{url + "/agents/greeter", url} {
			if tk := send(ctx, t, base, "mux", nil); tk.Status.State != a2a.TaskStateCompleted || artifactText(tk) != "hello, mux" {
				t.Fatalf("%s: task %s, answer %q", base, tk.Status.State, artifactText(tk))
			}
		}
		if code, body := get(ctx, t, url+"/metrics"); code != http.StatusOK || !strings.Contains(body, `pactum_tasks{state="succeeded"} 2`) {
			t.Fatalf("/metrics: %d, without two succeeded tasks:\n%s", code, body)
		}
	})
	t.Run("prefix", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		ln := listen(t)
		base := "http://" + ln.Addr().String() + "/pactum"
		h, err := pactum.Handler(ctx, greeter(), pactum.Store(sqliteDSN(t)), pactum.BaseURL(base))
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		mux.Handle("/pactum/", http.StripPrefix("/pactum", h))
		serveHTTP(t, ln, mux)

		code, body := get(ctx, t, base+"/agents/greeter/.well-known/agent-card.json")
		if code != http.StatusOK || cardURL(t, body) != base+"/agents/greeter" {
			t.Fatalf("card: %d %s, want it to advertise %s", code, body, base+"/agents/greeter")
		}
		if tk := send(ctx, t, base+"/agents/greeter", "prefix", nil); artifactText(tk) != "hello, prefix" {
			t.Fatalf("answer %q", artifactText(tk))
		}
		if code, _ := get(ctx, t, base+"/metrics"); code != http.StatusOK {
			t.Fatalf("/pactum/metrics: %d", code)
		}
	})
}

// TestHandlerGuarded: a mounted Handler refuses, on a loopback listener, a
// foreign Host (DNS rebinding), a cross-site request and a JSON call sent
// as text/plain, and starts no task for them, as `pactum serve` does.
func TestHandlerGuarded(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	dsn := sqliteDSN(t)
	h, err := pactum.Handler(ctx, greeter(), pactum.Store(dsn))
	if err != nil {
		t.Fatal(err)
	}
	url := startHTTP(t, h)
	for i, tc := range []struct {
		name, host, origin, contentType string
		want                            int
	}{
		{"foreign Host", "evil.example", "", "application/json", http.StatusForbidden},
		{"cross-site", "", "http://evil.example", "text/plain", http.StatusForbidden},
		{"text/plain", "", "", "text/plain", http.StatusUnsupportedMediaType},
	} {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"g-%d","role":"ROLE_USER","parts":[{"text":"x"}]}}}`, i)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/?A2A-Version=1.0", strings.NewReader(body))
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		req.Header.Set("Content-Type", tc.contentType)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %s, want %d", tc.name, resp.Status, tc.want)
		}
	}
	st, err := store.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	page, err := st.ListTasks(ctx, task.ListParams{PageSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Tasks) != 0 {
		t.Errorf("refused requests created %d tasks", len(page.Tasks))
	}
	if tk := send(ctx, t, url, "guarded", nil); artifactText(tk) != "hello, guarded" {
		t.Errorf("a proper request: answer %q", artifactText(tk))
	}
}

func startHTTP(t *testing.T, h http.Handler) string {
	t.Helper()
	ln := listen(t)
	serveHTTP(t, ln, h)
	return "http://" + ln.Addr().String()
}

func serveHTTP(t *testing.T, ln net.Listener, h http.Handler) {
	t.Helper()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
}

// TestListenerKeepsBaseURL checks that a BaseURL given before Listener is
// kept: the listener's address is only the default.
func TestListenerKeepsBaseURL(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	const public = "https://agents.example.com"
	ln := listen(t)
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- pactum.Serve(sctx, greeter(), pactum.BaseURL(public), pactum.Store(sqliteDSN(t)), pactum.Listener(ln))
	}()
	code, body := get(ctx, t, "http://"+ln.Addr().String()+"/agents/greeter/.well-known/agent-card.json")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if code != http.StatusOK || cardURL(t, body) != public+"/agents/greeter" {
		t.Fatalf("card %d advertises %s, want %s", code, cardURL(t, body), public+"/agents/greeter")
	}
}

// TestConfigFile serves a configuration loaded from a file in another
// directory: relative paths in it (the exec agent's script) resolve
// against that file, as with `pactum serve --config`.
func TestConfigFile(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	cfg, err := config.Load(filepath.Join("examples", "exec.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := serve(t, pactum.Config(cfg))
	tk := send(ctx, t, s.url+"/agents/summarize", "one two three\nsecond line", map[string]any{"pactum": map[string]any{"actor": "bob"}})
	if tk.Status.State != a2a.TaskStateCompleted || artifactText(tk) != "words: 5\nfirst line: one two three" {
		msg := ""
		if tk.Status.Message != nil {
			msg = tk.Status.Message.Parts[0].Text()
		}
		t.Fatalf("task %s (%s), answer %q", tk.Status.State, msg, artifactText(tk))
	}
	// The file's actors apply: mallory may not call summarize.
	if tk := send(ctx, t, s.url+"/agents/summarize", "x", map[string]any{"pactum": map[string]any{"actor": "mallory"}}); tk.Status.State != a2a.TaskStateRejected {
		t.Fatalf("a caller the file does not list: task %s, want rejected", tk.Status.State)
	}
}

// closeWatch is a store driver for these tests: SQLite, with Close
// reported on a channel and optionally failing.
type closeWatch struct {
	task.Store
	closed chan struct{}
	err    error
}

func (c *closeWatch) Close() error {
	err := c.Store.Close()
	close(c.closed)
	if c.err != nil {
		return c.err
	}
	return err
}

var (
	watchMu sync.Mutex
	watched = map[string]*closeWatch{} // by path
)

func init() {
	open := func(failClose bool) store.Driver {
		return store.Driver{Migrate: func(context.Context, string, store.Options) (int, error) { return 0, nil }, Open: func(ctx context.Context, dsn string, opts store.Options) (task.Store, error) {
			_, path, _ := strings.Cut(dsn, "://")
			st, err := store.OpenWith(ctx, "sqlite://"+path, opts)
			if err != nil {
				return nil, err
			}
			w := &closeWatch{Store: st, closed: make(chan struct{})}
			if failClose {
				w.err = errors.New("disk on fire")
			}
			watchMu.Lock()
			watched[path] = w
			watchMu.Unlock()
			return w, nil
		}}
	}
	store.Register("watch", open(false))
	store.Register("watchfail", open(true))
}

// waitClosed waits (bounded) until the store opened at path is closed.
func waitClosed(t *testing.T, path string) {
	t.Helper()
	watchMu.Lock()
	w := watched[path]
	watchMu.Unlock()
	if w == nil {
		t.Fatalf("no store was opened at %s", path)
	}
	select {
	case <-w.closed:
	case <-time.After(15 * time.Second):
		t.Fatal("the store was not closed within 15s of the context ending")
	}
}

// TestHandlerStopsWithContext checks that a Handler's node stops and closes
// its store when its context ends, and that a failure to stop is logged,
// with or without a Logger.
func TestHandlerStopsWithContext(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		scheme string
		logger bool
	}{
		{"clean", "watch", true},
		{"close fails, logged", "watchfail", true},
		{"close fails, no logger", "watchfail", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "pactum.db")
			logs := &syncbuf.Buffer{}
			opts := []pactum.Option{greeter(), pactum.Store(tc.scheme + "://" + path)}
			if tc.logger {
				opts = append(opts, pactum.Logger(slog.New(slog.NewTextHandler(logs, nil))))
			}
			ctx, cancel := context.WithCancel(testCtx(t))
			h, err := pactum.Handler(ctx, opts...)
			if err != nil {
				t.Fatal(err)
			}
			url := startHTTP(t, h)
			if tk := send(ctx, t, url+"/agents/greeter", "before", nil); artifactText(tk) != "hello, before" {
				t.Fatalf("answer %q", artifactText(tk))
			}
			cancel()
			waitClosed(t, path)
			// Without a Logger, a failed stop used to be logged through a
			// nil *slog.Logger: a panic, which takes the test binary down.
			if tc.scheme == "watchfail" && tc.logger {
				deadline := time.Now().Add(10 * time.Second)
				for !strings.Contains(logs.String(), "disk on fire") {
					if time.Now().After(deadline) {
						t.Fatalf("the failed stop was not logged:\n%s", logs.String())
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
		})
	}
}
