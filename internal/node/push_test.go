package node_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/e2e/nodeproc"
	"github.com/pactum/pactum/internal/node"
	"github.com/pactum/pactum/internal/syncbuf"
)

// testNode is a real pactum node on a loopback port, served as `pactum serve`
// serves one (ServeListener on 127.0.0.1:0), whose logs are captured.
type testNode struct {
	srv  *node.Server
	addr string // host:port
	base string // http://host:port
	logs *syncbuf.Buffer
	stop func() // stops the node and waits for it; safe to call twice
}

// startNode runs a node over dsn (a SQLite file when empty) with the given
// YAML, logging at debug level into its logs.
func startNode(t *testing.T, dsn, yaml string) *testNode {
	t.Helper()
	if dsn == "" {
		dsn = "sqlite://" + t.TempDir() + "/pactum.db"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf("listen: %s\nstore: %q\n%s", ln.Addr(), dsn, yaml)
	cfg, err := config.Parse([]byte(src), "push.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n := &testNode{addr: ln.Addr().String(), base: "http://" + ln.Addr().String(), logs: &syncbuf.Buffer{}}
	log := slog.New(slog.NewTextHandler(n.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := node.New(ctx, cfg, ".", nil, log)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	n.srv = srv
	done := make(chan error, 1)
	go func() { done <- srv.ServeListener(ctx, ln, 10*time.Second) }()
	var once sync.Once
	n.stop = func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	t.Cleanup(n.stop)
	return n
}

// client returns an a2a-go client of the node's echo agent.
func (n *testNode) client(t *testing.T) *a2aclient.Client {
	t.Helper()
	ctx := context.Background()
	card, err := agentcard.DefaultResolver.Resolve(ctx, n.base+"/agents/echo")
	if err != nil {
		t.Fatal(err)
	}
	c, err := a2aclient.NewFromCard(ctx, card)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

// sendWithPush sends a message whose configuration asks for pushes to url.
func sendWithPush(ctx context.Context, c *a2aclient.Client, text, url string) (a2a.SendMessageResult, error) {
	req := &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))}
	if url != "" {
		req.Config = &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: url}}
	}
	return c.SendMessage(ctx, req)
}

// pushOutcome reads pactum_push_deliveries_total{outcome} from /metrics.
func (n *testNode) pushOutcome(t *testing.T, outcome string) int {
	t.Helper()
	return int(n.metric(t, fmt.Sprintf("pactum_push_deliveries_total{outcome=%q}", outcome)))
}

// metric reads one sample from /metrics: series is the metric's name with
// its labels as the text format prints them. A series not there is 0.
func (n *testNode) metric(t *testing.T, series string) float64 {
	t.Helper()
	resp, err := http.Get(n.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			var f float64
			if _, err := fmt.Sscan(v, &f); err != nil {
				t.Fatalf("metric line %q: %v", line, err)
			}
			return f
		}
	}
	return 0
}

// waitFor polls cond until it holds or a generous bound passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// counter is a webhook receiver that counts the requests per body.
type counter struct {
	mu     sync.Mutex
	bodies map[string]int
	order  []string
}

func (c *counter) add(body []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bodies[string(body)] == 0 {
		c.order = append(c.order, string(body))
	}
	c.bodies[string(body)]++
}

func (c *counter) snapshot() (map[string]int, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := make(map[string]int, len(c.bodies))
	for k, v := range c.bodies {
		m[k] = v
	}
	return m, append([]string(nil), c.order...)
}

// TestPushMaxAttempts: push.max_attempts: 2 against a webhook that always
// answers 500 makes exactly two tries of every notification.
func TestPushMaxAttempts(t *testing.T) {
	t.Parallel()
	recv := &counter{bodies: map[string]int{}}
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		recv.add(body)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer hook.Close()
	n := startNode(t, "", "push: {allow_private: true, max_attempts: 2}\nagents:\n  - name: echo\n    type: echo\n")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := sendWithPush(ctx, n.client(t), "count my tries", hook.URL+"/hook"); err != nil {
		t.Fatal(err)
	}
	// Deliveries of one task go one after the other, so once the final
	// status has been given up on, every notification has been.
	waitFor(t, "every notification to fail", func() bool {
		_, order := recv.snapshot()
		return len(order) > 0 && strings.Contains(order[len(order)-1], "TASK_STATE_COMPLETED") && n.pushOutcome(t, "failed") == len(order)
	})
	n.stop()
	counts, order := recv.snapshot()
	for _, body := range order {
		if counts[body] != 2 {
			t.Errorf("notification tried %d times, want 2 (max_attempts): %.120s", counts[body], body)
		}
	}
}

// TestPushTimeout: push.timeout cuts an attempt against a webhook that
// never answers, so both attempts (max_attempts: 2) of the first
// notification are made and given up on well before the 10s default
// would cut even one.
func TestPushTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var mu sync.Mutex
	cut := 0
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Once the body is read the server watches the connection, so the
		// request's context ends when the client gives up.
		_, _ = io.ReadAll(r.Body)
		select {
		case <-r.Context().Done():
			mu.Lock()
			cut++
			mu.Unlock()
		case <-release:
		}
	}))
	defer hook.Close()
	defer close(release)
	n := startNode(t, "", "push: {allow_private: true, max_attempts: 2, timeout: 100ms}\nagents:\n  - name: echo\n    type: echo\n")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := sendWithPush(ctx, n.client(t), "hang", hook.URL+"/hook"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(8 * time.Second)
	for n.pushOutcome(t, "failed") < 1 {
		if time.Now().After(deadline) {
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("no notification given up on within 8s (%d attempts cut): push.timeout is not applied", cut)
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitFor(t, "the webhook to see both attempts cut", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return cut >= 2
	})
}

// TestPushAllowPrivate: without push.allow_private a loopback push URL is
// refused when the message is sent; with it, it is accepted.
func TestPushAllowPrivate(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tc := range []struct {
		yaml string
		ok   bool
	}{
		{"", false},
		{"push: {allow_private: false}\n", false},
		{"push: {allow_private: true, max_attempts: 1}\n", true},
	} {
		n := startNode(t, "", tc.yaml+"agents:\n  - name: echo\n    type: echo\n")
		_, err := sendWithPush(ctx, n.client(t), "hi", "http://2130706433:9/hook")
		if tc.ok != (err == nil) || !tc.ok && !errors.Is(err, a2a.ErrInvalidParams) {
			t.Errorf("%q: send with a loopback push URL: err = %v, want ok=%v (InvalidParams when refused)", tc.yaml, err, tc.ok)
		}
	}
}

// postgresDSN returns a DSN for a fresh schema on the test PostgreSQL
// server, dropped when the test ends. Without a server the test skips,
// unless PACTUM_REQUIRE_POSTGRES=1 makes it fail.
func postgresDSN(t *testing.T) string {
	t.Helper()
	return nodeproc.SchemaDSN(t, nodeproc.PostgresDSN(t), "push_")
}

// TestPushNoWarnWithoutDrops: a PostgreSQL node's relay resyncs when it
// starts listening, and a burst of tasks without any push configuration
// goes through; neither loses a notification, so the Pusher logs no
// warning.
func TestPushNoWarnWithoutDrops(t *testing.T) {
	t.Parallel()
	n := startNode(t, postgresDSN(t), "workers: 32\nagents:\n  - name: echo\n    type: echo\n")
	waitFor(t, "the event relay to listen", func() bool { return strings.Contains(n.logs.String(), "event relay listening") })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := n.client(t)
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for i := range 400 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := sendWithPush(ctx, c, fmt.Sprintf("burst %d", i), ""); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	n.stop()
	for _, line := range strings.Split(n.logs.String(), "\n") {
		if strings.Contains(line, "level=WARN") && strings.Contains(line, "push:") {
			t.Errorf("push warning with nothing dropped: %s", line)
		}
	}
}
