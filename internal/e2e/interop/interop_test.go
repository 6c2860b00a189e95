package interop

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/pactum/pactum/internal/oidctest"
)

const (
	npmTimeout  = 5 * time.Minute
	nodeTimeout = 5 * time.Minute  // interop.mjs bounds itself at 4m
	stepTimeout = 30 * time.Second // one step of the Go flow
	slowPrefix  = "slow: "
)

// TestJSClient runs js/interop.mjs — the official JavaScript client,
// @a2a-js/sdk pinned in js/package.json — against a pactum subprocess and
// requires it to exit 0. It is skipped only when node is not on PATH, and
// then fails instead if PACTUM_REQUIRE_INTEROP=1 (CI sets it).
func TestJSClient(t *testing.T) {
	t.Parallel()
	node, jsDir := jsClient(t)
	srv := setup(t)

	ctx, cancel := context.WithTimeout(t.Context(), nodeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "interop.mjs", srv.AgentURL("echo"))
	cmd.Dir = jsDir
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	logLines(t, out)
	if err != nil {
		t.Fatalf("node interop.mjs %s: %v (see FAIL lines above)", srv.AgentURL("echo"), err)
	}
	if !bytes.Contains(out, []byte("PASS ")) {
		t.Fatal("interop.mjs exited 0 without a PASS line")
	}
}

// TestJSClientBearer runs js/auth.mjs, the official JavaScript client,
// against a pactum subprocess with auth: bearer: the card declares the
// scheme, and calls need the token on JSON-RPC and HTTP+JSON alike.
func TestJSClientBearer(t *testing.T) {
	t.Parallel()
	node, jsDir := jsClient(t)
	cfg := filepath.Join(t.TempDir(), "auth.yaml")
	const src = "auth: bearer\nagents:\n  - {name: echo, type: echo}\nactors:\n  - {name: js-client, actions: ['*'], token_env: PACTUM_INTEROP_TOKEN}\n"
	if err := os.WriteFile(cfg, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	const token = "interop-token-7f3a"
	srv := setupWith(t, cfg, "PACTUM_INTEROP_TOKEN="+token)

	ctx, cancel := context.WithTimeout(t.Context(), nodeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "auth.mjs", srv.AgentURL("echo"), token)
	cmd.Dir = jsDir
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	logLines(t, out)
	if err != nil {
		t.Fatalf("node auth.mjs: %v (see FAIL lines above)", err)
	}
	if n := bytes.Count(out, []byte("PASS ")); n != 7 {
		t.Fatalf("auth.mjs passed %d checks, want 7", n)
	}
}

// TestJSClientOIDC runs js/auth.mjs, the official JavaScript client,
// against a pactum subprocess with auth: oidc trusting oidc-provider from
// npm (a real OpenID provider on loopback): the card declares
// openIdConnect with the provider's discovery URL, and calls need a client
// credentials token of the provider on JSON-RPC and HTTP+JSON alike.
func TestJSClientOIDC(t *testing.T) {
	t.Parallel()
	node, jsDir := jsClient(t)
	p := oidctest.StartNode(t, oidctest.Client{ID: "js-client", Secret: "js-secret", Scope: "pactum:echo"})
	cfg := filepath.Join(t.TempDir(), "auth.yaml")
	src := fmt.Sprintf("auth: {mode: oidc, issuer: %q, audience: %s, actor_claim: client_id, actions_claim: scope}\nagents:\n  - {name: echo, type: echo}\nactors:\n  - {name: js-client, actions: ['*'], subject: js-client}\n", p.Issuer, oidctest.Audience)
	if err := os.WriteFile(cfg, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := setupWith(t, cfg)

	ctx, cancel := context.WithTimeout(t.Context(), nodeTimeout)
	defer cancel()
	token, err := p.Token(ctx, "js-client", "pactum:echo")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, node, "auth.mjs", srv.AgentURL("echo"), token, "oidc")
	cmd.Dir = jsDir
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	logLines(t, out)
	if err != nil {
		t.Fatalf("node auth.mjs: %v (see FAIL lines above)", err)
	}
	if n := bytes.Count(out, []byte("PASS ")); n != 7 {
		t.Fatalf("auth.mjs passed %d checks, want 7", n)
	}
}

// jsClient returns node and the js directory with the pinned JS SDK
// installed. It skips the test when node is not on PATH, and fails it
// instead when PACTUM_REQUIRE_INTEROP=1 (CI sets it).
func jsClient(t *testing.T) (node, jsDir string) {
	t.Helper()
	return nodeWith(t, "js", filepath.Join("@a2a-js", "sdk"))
}

// nodeWith returns node and the absolute path of dir, whose pinned npm
// packages it installs (npm ci) unless node_modules/probe is there. It
// skips the test when node is not on PATH or the packages cannot be
// installed, and fails it instead when PACTUM_REQUIRE_INTEROP=1 (CI sets
// it).
func nodeWith(t *testing.T, dir, probe string) (node, abs string) {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("PACTUM_REQUIRE_INTEROP") == "1" {
			t.Fatalf(format+", and PACTUM_REQUIRE_INTEROP=1", args...)
		}
		t.Skipf(format+"; set PACTUM_REQUIRE_INTEROP=1 to make this a failure", args...)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not on PATH (%v)", err)
	}
	abs, err = filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := npmCI(t, abs, probe); err != nil {
		missing("%v", err)
	}
	return node, abs
}

// npmCI installs the pinned npm packages of dir (npm ci) unless
// node_modules/probe is there already.
func npmCI(t *testing.T, dir, probe string) error {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", probe, "package.json")); err == nil {
		return nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("node_modules missing in %s and npm is not on PATH: %w", dir, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), npmTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm ci in %s: %w\n%s", dir, err, out)
	}
	return nil
}

func logLines(t *testing.T, out []byte) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		t.Log(sc.Text())
	}
}

// TestGoClient drives a pactum subprocess with the official Go client
// (a2aclient, agentcard resolver) over JSON-RPC, over HTTP+JSON and over
// gRPC (a2agrpc's transport, on the server's --grpc-listen port), through
// discovery, send, stream, get, list, cancel, subscribe and push configs;
// over gRPC also the extended card, so that all 11 operations are driven.
func TestGoClient(t *testing.T) {
	t.Parallel()
	cfg, err := filepath.Abs("pactum-interop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	srv := setupGRPC(t, cfg)
	hook := newWebhook(t)
	for _, tc := range []struct {
		name      string
		transport a2a.TransportProtocol
	}{
		{"JSONRPC", a2a.TransportProtocolJSONRPC},
		{"REST", a2a.TransportProtocolHTTPJSON},
		{"GRPC", a2a.TransportProtocolGRPC},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &goFlow{srv: srv, hook: hook, transport: tc.transport, rec: newRecorder()}
			f.http = &http.Client{Transport: f.rec, Timeout: time.Minute}
			f.run(t)
		})
	}
}

// goFlow is one pass of the Go client through the A2A operations; its steps
// share the tasks they create.
type goFlow struct {
	srv       *pactumServer
	hook      *webhook
	transport a2a.TransportProtocol
	rec       *recorder
	http      *http.Client

	echoCard, slowCard *a2a.AgentCard
	echo, slow         *a2aclient.Client
	done               *a2a.Task // a completed echo task
	input              string    // the text done echoed
}

// step runs fn as a subtest with a bounded context and shows the wire
// exchanges it made if it failed.
func (f *goFlow) step(t *testing.T, name string, fn func(t *testing.T, ctx context.Context)) bool {
	t.Helper()
	return t.Run(name, func(t *testing.T) {
		mark := f.rec.mark()
		t.Cleanup(func() {
			if t.Failed() {
				f.rec.dump(t, mark)
			}
		})
		ctx, cancel := context.WithTimeout(t.Context(), stepTimeout)
		defer cancel()
		fn(t, ctx)
	})
}

func (f *goFlow) run(t *testing.T) {
	// Discovery is not a subtest, so that -run can pick single steps: every
	// step needs its clients.
	mark := f.rec.mark()
	t.Cleanup(func() {
		if f.echo == nil || f.slow == nil {
			f.rec.dump(t, mark)
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), stepTimeout)
	f.discovery(t, ctx)
	cancel()
	if t.Failed() {
		t.FailNow()
	}
	f.step(t, "send", f.send)
	f.step(t, "idempotency", f.idempotency)
	f.step(t, "stream", f.stream)
	f.step(t, "get", f.get)
	f.step(t, "list", f.list)
	f.step(t, "cancel", f.cancel)
	f.step(t, "subscribe", f.subscribe)
	f.step(t, "resubscribe", f.resubscribe)
	f.step(t, "push", f.push)
	f.step(t, "push_in_send", f.pushInSend)
	if f.transport == a2a.TransportProtocolGRPC {
		f.step(t, "extended_card", f.extendedCard)
	}
}

func (f *goFlow) discovery(t *testing.T, ctx context.Context) {
	resolver := agentcard.NewResolver(f.http)
	var err error
	for _, a := range []struct {
		name string
		card **a2a.AgentCard
	}{{"echo", &f.echoCard}, {"slow-echo", &f.slowCard}} {
		card, err := resolver.Resolve(ctx, f.srv.AgentURL(a.name))
		if err != nil {
			t.Fatalf("resolve %s card: %v", a.name, err)
		}
		if card.Name != a.name {
			t.Errorf("card at %s is named %q", f.srv.AgentURL(a.name), card.Name)
		}
		iface := interfaceFor(card, f.transport)
		if iface == nil {
			t.Fatalf("%s card has no %s interface with protocolVersion 1.0: %+v", a.name, f.transport, card.SupportedInterfaces)
		}
		if !card.Capabilities.Streaming || !card.Capabilities.PushNotifications {
			t.Errorf("%s card capabilities %+v: want streaming and pushNotifications", a.name, card.Capabilities)
		}
		if len(card.Skills) == 0 || card.Version == "" || len(card.DefaultInputModes) == 0 || len(card.DefaultOutputModes) == 0 {
			t.Errorf("%s card lacks required fields (skills, version, default modes): %+v", a.name, card)
		}
		*a.card = card
	}
	root, err := resolver.Resolve(ctx, f.srv.URL)
	if err != nil {
		t.Errorf("resolve the root (default agent) card: %v", err)
	} else if root.Name != "echo" {
		t.Errorf("root card is %q, want the default agent echo", root.Name)
	}
	if f.transport == a2a.TransportProtocolGRPC {
		// The gRPC interface is the server's gRPC listener, and names
		// its agent as tenant (docs/a2a.md, "gRPC").
		for name, card := range map[string]*a2a.AgentCard{"echo": f.echoCard, "slow-echo": f.slowCard} {
			if iface := interfaceFor(card, f.transport); iface.URL != f.srv.GRPC || iface.Tenant != name {
				t.Errorf("%s card's gRPC interface %+v: want url %s, tenant %s", name, iface, f.srv.GRPC, name)
			}
		}
	}
	opts := []a2aclient.FactoryOption{
		a2aclient.WithJSONRPCTransport(f.http),
		a2aclient.WithRESTTransport(f.http),
		a2agrpc.WithGRPCTransport(f.grpcOptions()...),
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{f.transport}}),
	}
	if f.echo, err = a2aclient.NewFromCard(ctx, f.echoCard, opts...); err != nil {
		t.Fatalf("client for echo: %v", err)
	}
	if f.slow, err = a2aclient.NewFromCard(ctx, f.slowCard, opts...); err != nil {
		t.Fatalf("client for slow-echo: %v", err)
	}
	t.Logf("%s interface %s", f.transport, interfaceFor(f.echoCard, f.transport).URL)
}

func interfaceFor(card *a2a.AgentCard, tr a2a.TransportProtocol) *a2a.AgentInterface {
	for _, i := range card.SupportedInterfaces {
		if i.ProtocolBinding == tr && i.ProtocolVersion == a2a.Version {
			return i
		}
	}
	return nil
}

func (f *goFlow) send(t *testing.T, ctx context.Context) {
	f.input = "hello from a2a-go " + string(f.transport) + " " + a2a.NewMessageID()[:8]
	res, err := f.echo.SendMessage(ctx, &a2a.SendMessageRequest{Message: userMessage(f.input, "")})
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	task := asTask(t, res)
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("blocking SendMessage returned %s, want %s (§3.2.2)", task.Status.State, a2a.TaskStateCompleted)
	}
	if got := artifactsText(task.Artifacts); !strings.Contains(got, f.input) {
		t.Errorf("artifacts %q do not echo %q", got, f.input)
	}
	if task.ContextID == "" {
		t.Errorf("task has no contextId (§3.4.1)")
	}
	// The request went over the transport under test, announcing 1.0.
	var ex *exchange
	switch f.transport {
	case a2a.TransportProtocolHTTPJSON:
		ex = f.rec.last("/message:send")
	case a2a.TransportProtocolGRPC:
		ex = f.rec.last("A2AService/SendMessage")
	default:
		ex = f.rec.last(`"SendMessage"`)
	}
	if ex == nil {
		t.Errorf("no %s SendMessage request recorded", f.transport)
	} else if ex.Version != "1.0" {
		t.Errorf("SendMessage sent A2A-Version %q, want 1.0", ex.Version)
	}
	f.done = task
	t.Logf("task %s %s, artifact %q", task.ID, task.Status.State, artifactsText(task.Artifacts))
}

func (f *goFlow) idempotency(t *testing.T, ctx context.Context) {
	key := a2a.NewMessageID()
	var ids []a2a.TaskID
	for range 2 {
		res, err := f.echo.SendMessage(ctx, &a2a.SendMessageRequest{Message: userMessage("idem "+key, key)})
		if err != nil {
			t.Fatalf("SendMessage: %v", err)
		}
		ids = append(ids, asTask(t, res).ID)
	}
	if ids[0] != ids[1] {
		t.Errorf("the same actor and pactum.idempotencyKey gave tasks %s and %s", ids[0], ids[1])
	}
}

// stream sends a streaming message to echo (which may finish before the
// stream attaches, leaving a completed Task as the whole stream) and to
// slow-echo (whose stream must carry the status and artifact events).
func (f *goFlow) stream(t *testing.T, ctx context.Context) {
	for _, c := range []struct {
		client         *a2aclient.Client
		prefix         string
		requireUpdates bool
	}{{f.echo, "", false}, {f.slow, slowPrefix, true}} {
		input := "stream " + a2a.NewMessageID()[:8]
		events, err := collect(c.client.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: userMessage(input, "")}), nil)
		if err != nil {
			t.Fatalf("SendStreamingMessage after %d events (%s): %v", len(events), kinds(events), err)
		}
		if err := checkLifecycle(events, "", c.prefix+input, c.requireUpdates); err != nil {
			t.Fatal(err)
		}
		t.Logf("events: %s", kinds(events))
	}
}

func (f *goFlow) get(t *testing.T, ctx context.Context) {
	if f.done == nil {
		t.Skip("no completed task from send")
	}
	task, err := f.echo.GetTask(ctx, &a2a.GetTaskRequest{ID: f.done.ID, HistoryLength: ptr(1)})
	if err != nil {
		t.Fatalf("GetTask: %v", err)
	}
	if task.ID != f.done.ID || task.Status.State != a2a.TaskStateCompleted {
		t.Errorf("GetTask returned %s %s, want %s %s", task.ID, task.Status.State, f.done.ID, a2a.TaskStateCompleted)
	}
	if len(task.History) > 1 {
		t.Errorf("historyLength=1 returned %d history messages (§3.2.4)", len(task.History))
	}
	if got := artifactsText(task.Artifacts); !strings.Contains(got, f.input) {
		t.Errorf("GetTask artifacts %q do not echo %q", got, f.input)
	}
	_, err = f.echo.GetTask(ctx, &a2a.GetTaskRequest{ID: "no-such-task-" + a2a.TaskID(a2a.NewMessageID())})
	f.expectError(t, "GetTask of an unknown id", err, errTaskNotFound)
}

func (f *goFlow) list(t *testing.T, ctx context.Context) {
	if f.done == nil {
		t.Skip("no completed task from send")
	}
	all, err := f.echo.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: 100})
	if err != nil {
		t.Fatalf("ListTasks: %v", err)
	}
	if !slices.ContainsFunc(all.Tasks, func(x *a2a.Task) bool { return x.ID == f.done.ID }) {
		t.Errorf("ListTasks (%d tasks) lacks task %s", len(all.Tasks), f.done.ID)
	}
	for i := 1; i < len(all.Tasks); i++ {
		a, b := all.Tasks[i-1].Status.Timestamp, all.Tasks[i].Status.Timestamp
		if a != nil && b != nil && b.After(*a) {
			t.Errorf("ListTasks not sorted by status timestamp descending at %d (§3.1.4)", i)
			break
		}
	}
	byCtx, err := f.echo.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: f.done.ContextID})
	if err != nil {
		t.Fatalf("ListTasks by contextId: %v", err)
	}
	if !slices.ContainsFunc(byCtx.Tasks, func(x *a2a.Task) bool { return x.ID == f.done.ID }) {
		t.Errorf("ListTasks(contextId=%s) lacks task %s", f.done.ContextID, f.done.ID)
	}
	for _, x := range byCtx.Tasks {
		if x.ContextID != f.done.ContextID {
			t.Errorf("ListTasks(contextId=%s) returned task %s of context %s", f.done.ContextID, x.ID, x.ContextID)
		}
	}
	p1, err := f.echo.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: 1})
	if err != nil {
		t.Fatalf("ListTasks pageSize=1: %v", err)
	}
	if len(p1.Tasks) != 1 || p1.NextPageToken == "" {
		t.Fatalf("pageSize=1: %d tasks, nextPageToken %q; want 1 task and a token (several tasks exist)", len(p1.Tasks), p1.NextPageToken)
	}
	p2, err := f.echo.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: 1, PageToken: p1.NextPageToken})
	if err != nil {
		t.Fatalf("ListTasks page 2: %v", err)
	}
	if len(p2.Tasks) != 1 || p2.Tasks[0].ID == p1.Tasks[0].ID {
		t.Errorf("page 2 = %d tasks (%v); want one task other than %s", len(p2.Tasks), taskIDs(p2.Tasks), p1.Tasks[0].ID)
	}
}

func (f *goFlow) cancel(t *testing.T, ctx context.Context) {
	task := f.startSlow(t, ctx, "cancel me")
	canceled, err := f.slow.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatalf("CancelTask of running task %s: %v", task.ID, err)
	}
	if canceled.ID != task.ID || canceled.Status.State != a2a.TaskStateCanceled {
		t.Errorf("CancelTask returned %s %s, want %s %s", canceled.ID, canceled.Status.State, task.ID, a2a.TaskStateCanceled)
	}
	got, err := f.slow.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatalf("GetTask after cancel: %v", err)
	}
	if got.Status.State != a2a.TaskStateCanceled {
		t.Errorf("GetTask after cancel: %s, want %s", got.Status.State, a2a.TaskStateCanceled)
	}
	if f.done != nil {
		_, err = f.echo.CancelTask(ctx, &a2a.CancelTaskRequest{ID: f.done.ID})
		f.expectError(t, "CancelTask of a completed task", err, errTaskNotCancelable)
	}
	_, err = f.echo.CancelTask(ctx, &a2a.CancelTaskRequest{ID: "no-such-task-" + a2a.TaskID(a2a.NewMessageID())})
	f.expectError(t, "CancelTask of an unknown id", err, errTaskNotFound)
}

// startSlow sends text to slow-echo with returnImmediately and returns the
// still-running task.
func (f *goFlow) startSlow(t *testing.T, ctx context.Context, text string) *a2a.Task {
	t.Helper()
	res, err := f.slow.SendMessage(ctx, &a2a.SendMessageRequest{
		Message: userMessage(text, ""),
		Config:  &a2a.SendMessageConfig{ReturnImmediately: true},
	})
	if err != nil {
		t.Fatalf("SendMessage(returnImmediately) to slow-echo: %v", err)
	}
	task := asTask(t, res)
	if task.Status.State.Terminal() {
		t.Fatalf("returnImmediately send returned %s, want a non-terminal state (§3.2.2)", task.Status.State)
	}
	return task
}

func (f *goFlow) subscribe(t *testing.T, ctx context.Context) {
	input := "subscribe " + a2a.NewMessageID()[:8]
	task := f.startSlow(t, ctx, input)
	events, err := collect(f.slow.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}), nil)
	if err != nil {
		t.Fatalf("SubscribeToTask after %d events (%s): %v", len(events), kinds(events), err)
	}
	if err := checkLifecycle(events, task.ID, slowPrefix+input, true); err != nil {
		t.Fatal(err)
	}
	t.Logf("events: %s", kinds(events))

	if f.done != nil {
		events, err := collect(f.echo.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: f.done.ID}), nil)
		if err == nil && len(events) > 0 {
			t.Errorf("SubscribeToTask of a completed task streamed %s, want %v (§3.1.6)", kinds(events), a2a.ErrUnsupportedOperation)
		} else {
			f.expectError(t, "SubscribeToTask of a completed task (§3.1.6)", err, errUnsupportedOperation)
		}
	}
}

// resubscribe opens a stream, drops it after the first event, and
// subscribes again: the task outlives the stream (§3.5.2).
func (f *goFlow) resubscribe(t *testing.T, ctx context.Context) {
	input := "reconnect " + a2a.NewMessageID()[:8]
	first, err := collect(f.slow.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: userMessage(input, "")}),
		func(a2a.Event) bool { return true })
	if err != nil {
		t.Fatalf("SendStreamingMessage: %v", err)
	}
	task, ok := first[0].(*a2a.Task)
	if !ok {
		t.Fatalf("first streamed event is %T, want *a2a.Task", first[0])
	}
	events, err := collect(f.slow.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}), nil)
	if err != nil {
		t.Fatalf("SubscribeToTask after %d events (%s): %v", len(events), kinds(events), err)
	}
	if err := checkLifecycle(events, task.ID, slowPrefix+input, true); err != nil {
		t.Fatal(err)
	}
	t.Logf("events after reconnect: %s", kinds(events))
}

func (f *goFlow) push(t *testing.T, ctx context.Context) {
	input := "push " + a2a.NewMessageID()[:8]
	task := f.startSlow(t, ctx, input)
	path := fmt.Sprintf("/hook/go/%s/%s", f.transport, task.ID)
	token := "tok-" + a2a.NewMessageID()
	created, err := f.slow.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, URL: f.hook.URL + path, Token: token})
	if err != nil {
		t.Fatalf("CreateTaskPushConfig: %v", err)
	}
	if created.ID == "" || created.TaskID != task.ID || created.URL != f.hook.URL+path {
		t.Errorf("created config %+v: want an id, task %s, url %s", created, task.ID, f.hook.URL+path)
	}
	got, err := f.slow.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: created.ID})
	if err != nil {
		t.Fatalf("GetTaskPushConfig: %v", err)
	}
	if got.ID != created.ID || got.URL != created.URL {
		t.Errorf("GetTaskPushConfig = %+v, want %+v", got, created)
	}
	list, err := f.slow.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: task.ID})
	if err != nil {
		t.Fatalf("ListTaskPushConfigs: %v", err)
	}
	if !slices.ContainsFunc(list, func(c *a2a.PushConfig) bool { return c.ID == created.ID }) {
		t.Errorf("ListTaskPushConfigs = %+v, lacks %s", list, created.ID)
	}

	deliveries, err := f.hook.wait(ctx, path, terminalFor(task.ID))
	if err != nil {
		t.Fatal(err)
	}
	// The config exists before the slow agent answers, so every artifact
	// chunk must reach the webhook.
	if err := checkDeliveries(deliveries, task.ID, slowPrefix+input); err != nil {
		t.Error(err)
	}
	t.Logf("webhook got %s; headers of the first: %v", deliveryKinds(deliveries), deliveries[0].Header)

	if err := f.slow.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: created.ID}); err != nil {
		t.Fatalf("DeleteTaskPushConfig: %v", err)
	}
	list, err = f.slow.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: task.ID})
	if err != nil {
		t.Fatalf("ListTaskPushConfigs after delete: %v", err)
	}
	if slices.ContainsFunc(list, func(c *a2a.PushConfig) bool { return c.ID == created.ID }) {
		t.Errorf("config %s still listed after delete", created.ID)
	}
	_, err = f.slow.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: created.ID})
	if err == nil {
		t.Errorf("GetTaskPushConfig of a deleted config succeeded (§3.1.8: MUST fail)")
	} else {
		f.expectError(t, "GetTaskPushConfig of a deleted config (§3.1.8)", err, errTaskNotFound)
	}
}

func (f *goFlow) pushInSend(t *testing.T, ctx context.Context) {
	path := fmt.Sprintf("/hook/go/%s/inline-%s", f.transport, a2a.NewMessageID()[:8])
	input := "inline push " + a2a.NewMessageID()[:8]
	res, err := f.echo.SendMessage(ctx, &a2a.SendMessageRequest{
		Message: userMessage(input, ""),
		Config:  &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: f.hook.URL + path, Token: "inline-" + a2a.NewMessageID()}},
	})
	if err != nil {
		t.Fatalf("SendMessage with a push config: %v", err)
	}
	task := asTask(t, res)
	deliveries, err := f.hook.wait(ctx, path, terminalFor(task.ID))
	if err != nil {
		t.Fatal(err)
	}
	// The config comes with the message that creates the task, so the
	// webhook must see every update of it, the first artifact chunk included.
	if err := checkDeliveries(deliveries, task.ID, input); err != nil {
		t.Error(err)
	}
	t.Logf("webhook got %s", deliveryKinds(deliveries))
}

// grpcOptions are the options of the flow's gRPC connections: plaintext
// on loopback, every call recorded.
func (f *goFlow) grpcOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(f.rec.unaryGRPC),
		grpc.WithStreamInterceptor(f.rec.streamGRPC),
	}
}

// extendedCard calls GetExtendedAgentCard over gRPC. The client refuses
// it without a call when the card does not declare an extended card, so
// its gRPC transport makes the call, with the agent as tenant; pactum has
// no extended card and answers UnsupportedOperation.
func (f *goFlow) extendedCard(t *testing.T, ctx context.Context) {
	if _, err := f.echo.GetExtendedAgentCard(ctx, &a2a.GetExtendedAgentCardRequest{}); !errors.Is(err, a2a.ErrExtendedCardNotConfigured) {
		t.Errorf("client GetExtendedAgentCard: %v, want the client's own %v", err, a2a.ErrExtendedCardNotConfigured)
	}
	conn, err := grpc.NewClient(f.srv.GRPC, f.grpcOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	tr := a2agrpc.NewGRPCTransport(conn)
	defer tr.Destroy()
	_, err = tr.GetExtendedAgentCard(ctx, a2aclient.ServiceParams{a2a.SvcParamVersion: {string(a2a.Version)}}, &a2a.GetExtendedAgentCardRequest{Tenant: "echo"})
	f.expectError(t, "GetExtendedAgentCard", err, errUnsupportedOperation)
}

// ---------------------------------------------------------------- helpers

// a2aError is an A2A error as each binding carries it (§5.4, §9.5,
// §10.6, §11.6).
type a2aError struct {
	sentinel   error
	rpcCode    int
	httpStatus int
	reason     string // google.rpc.ErrorInfo reason
	grpcCode   codes.Code
}

var (
	errTaskNotFound         = a2aError{a2a.ErrTaskNotFound, -32001, http.StatusNotFound, "TASK_NOT_FOUND", codes.NotFound}
	errTaskNotCancelable    = a2aError{a2a.ErrTaskNotCancelable, -32002, http.StatusBadRequest, "TASK_NOT_CANCELABLE", codes.FailedPrecondition}
	errUnsupportedOperation = a2aError{a2a.ErrUnsupportedOperation, -32004, http.StatusBadRequest, "UNSUPPORTED_OPERATION", codes.FailedPrecondition}
)

// expectError checks that the last call failed with want. When a2a-go does
// not surface the error it received (v2.4.0 turns REST errors sent as
// application/a2a+json into ErrServerError, and ignores a JSON-RPC error
// answered to a streaming call as plain JSON), the wire response is judged
// instead and the client's reading is logged.
func (f *goFlow) expectError(t *testing.T, what string, err error, want a2aError) {
	t.Helper()
	ex := f.rec.lastExchange()
	if f.transport == a2a.TransportProtocolGRPC {
		// a2a-go's gRPC transport reads every error it gets: no allowance.
		switch {
		case !errors.Is(err, want.sentinel):
			t.Errorf("%s: got %v, want %v (gRPC %v %s)", what, err, want.sentinel, want.grpcCode, want.reason)
		case ex == nil || ex.Method != "gRPC" || ex.StatusCode != int(want.grpcCode):
			t.Errorf("%s: the last call recorded is %+v, want one answered with gRPC %v", what, ex, want.grpcCode)
		}
		return
	}
	if errors.Is(err, want.sentinel) {
		if ex != nil && f.transport == a2a.TransportProtocolHTTPJSON && ex.StatusCode != want.httpStatus {
			// a2a-go reads errors inside an SSE stream; @a2a-js/sdk does not
			// (js/interop.mjs fails on it), and §11.6 maps the error to the
			// HTTP status.
			t.Logf("%s: %s came as %s %s, not HTTP %d (§5.4, §11.6)", what, want.reason, ex.Status, ex.ContentType, want.httpStatus)
		}
		return
	}
	if ex == nil {
		t.Errorf("%s: got %v, want %v; no request recorded", what, err, want.sentinel)
		return
	}
	got, ok := ex.decodeError()
	switch {
	case ok && f.transport == a2a.TransportProtocolJSONRPC && got.rpcCode == want.rpcCode,
		ok && f.transport == a2a.TransportProtocolHTTPJSON && got.httpStatus == want.httpStatus && got.reason == want.reason:
		t.Logf("%s: the response carries %s (%s) but a2a-go returned %v", what, want.reason, ex.Status, err)
	default:
		t.Errorf("%s: got %v, want %v (JSON-RPC %d / HTTP %d %s); response %s %s: %s",
			what, err, want.sentinel, want.rpcCode, want.httpStatus, want.reason, ex.Status, ex.ContentType, ex.body())
	}
}

// userMessage is a user text message carrying the pactum envelope; an empty
// key gets a fresh idempotency key.
func userMessage(text, key string) *a2a.Message {
	if key == "" {
		key = a2a.NewMessageID()
	}
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	m.Metadata = map[string]any{"pactum": map[string]any{"actor": "interop-go", "idempotencyKey": key}}
	return m
}

func asTask(t *testing.T, res a2a.SendMessageResult) *a2a.Task {
	t.Helper()
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("SendMessage returned %T, want *a2a.Task", res)
	}
	return task
}

// collect reads a stream to its end, or until stop says so.
func collect(seq iter.Seq2[a2a.Event, error], stop func(a2a.Event) bool) ([]a2a.Event, error) {
	var events []a2a.Event
	for ev, err := range seq {
		if err != nil {
			return events, err
		}
		events = append(events, ev)
		if stop != nil && stop(ev) {
			break
		}
	}
	return events, nil
}

// checkLifecycle checks an A2A 1.0 task lifecycle stream (§3.1.2, §3.1.6):
// a Task first, then status and artifact events of that task, the last
// status TASK_STATE_COMPLETED, with an artifact containing wantText (the
// stream having ended is collect's part). A Task that is already completed
// may be the whole stream (the agent finished before the stream attached)
// unless requireUpdates is set.
func checkLifecycle(events []a2a.Event, id a2a.TaskID, wantText string, requireUpdates bool) error {
	if len(events) == 0 {
		return errors.New("stream had no events")
	}
	first, ok := events[0].(*a2a.Task)
	if !ok {
		return fmt.Errorf("first event is %T, want *a2a.Task (§3.1.2/§3.1.6); events %s", events[0], kinds(events))
	}
	if id == "" {
		id = first.ID
	} else if first.ID != id {
		return fmt.Errorf("first event is task %s, want %s", first.ID, id)
	}
	lastStatus, artifacts := -1, 0
	for i, ev := range events {
		if got := ev.TaskInfo().TaskID; got != id {
			return fmt.Errorf("event %d (%T) is for task %q, want %s", i, ev, got, id)
		}
		switch ev.(type) {
		case *a2a.TaskStatusUpdateEvent:
			lastStatus = i
		case *a2a.TaskArtifactUpdateEvent:
			artifacts++
		}
	}
	if text := assembleArtifacts(events); !strings.Contains(text, wantText) {
		return fmt.Errorf("artifacts assembled from the stream are %q, want them to contain %q; events %s", text, wantText, kinds(events))
	}
	if len(events) == 1 && !requireUpdates {
		if first.Status.State != a2a.TaskStateCompleted {
			return fmt.Errorf("the only event is a %s task, want %s", first.Status.State, a2a.TaskStateCompleted)
		}
		return nil
	}
	if lastStatus < 0 {
		return fmt.Errorf("no status update event; events %s", kinds(events))
	}
	if requireUpdates && artifacts == 0 {
		return fmt.Errorf("no artifact update event; events %s", kinds(events))
	}
	if st, _ := eventState(events[lastStatus]); st != a2a.TaskStateCompleted {
		return fmt.Errorf("final status update is %s, want %s; events %s", st, a2a.TaskStateCompleted, kinds(events))
	}
	for _, ev := range events[lastStatus+1:] {
		if st, ok := eventState(ev); !ok || !st.Terminal() {
			return fmt.Errorf("%T after the final status; events %s", ev, kinds(events))
		}
	}
	return nil
}

// assembleArtifacts rebuilds the text of each artifact a stream carried: the
// Task snapshot seeds them, an artifact update replaces its artifact unless
// Append is set, in which case its parts are added (§4.2.2).
func assembleArtifacts(events []a2a.Event) string {
	var order []a2a.ArtifactID
	text := map[a2a.ArtifactID]string{}
	set := func(id a2a.ArtifactID, s string) {
		if _, ok := text[id]; !ok {
			order = append(order, id)
		}
		text[id] = s
	}
	for _, ev := range events {
		switch e := ev.(type) {
		case *a2a.Task:
			for _, a := range e.Artifacts {
				set(a.ID, partsText(a.Parts))
			}
		case *a2a.TaskArtifactUpdateEvent:
			if e.Artifact == nil {
				continue
			}
			if prev, ok := text[e.Artifact.ID]; ok && e.Append {
				set(e.Artifact.ID, prev+partsText(e.Artifact.Parts))
			} else {
				set(e.Artifact.ID, partsText(e.Artifact.Parts))
			}
		}
	}
	var out []string
	for _, id := range order {
		out = append(out, text[id])
	}
	return strings.Join(out, "|")
}

// checkDeliveries checks that each webhook request was a POST whose body is
// a StreamResponse about task id, that the last state delivered is
// TASK_STATE_COMPLETED, and that the artifact reassembled from the
// deliveries holds wantText (no chunk went missing).
func checkDeliveries(ds []delivery, id a2a.TaskID, wantText string) error {
	for i, d := range ds {
		if d.Method != http.MethodPost {
			return fmt.Errorf("delivery %d used %s, want POST", i, d.Method)
		}
		if d.Err != nil {
			return fmt.Errorf("delivery %d is not a StreamResponse (§4.3.3): %v: %s", i, d.Err, d.Body)
		}
		if got := d.Event.TaskInfo().TaskID; got != id {
			return fmt.Errorf("delivery %d (%T) is for task %q, want %s", i, d.Event, got, id)
		}
	}
	// The final state is COMPLETED: no other state is delivered after it.
	var states []a2a.TaskState
	for _, d := range ds {
		if st, ok := eventState(d.Event); ok {
			states = append(states, st)
		}
	}
	if len(states) == 0 || states[len(states)-1] != a2a.TaskStateCompleted {
		return fmt.Errorf("the last state delivered is not %s; got %s", a2a.TaskStateCompleted, deliveryKinds(ds))
	}
	events := make([]a2a.Event, len(ds))
	var bodies []string
	for i, d := range ds {
		events[i] = d.Event
		bodies = append(bodies, d.Body)
	}
	if text := assembleArtifacts(events); !strings.Contains(text, wantText) {
		return fmt.Errorf("the artifact reassembled from the deliveries is %q, want it to contain %q; deliveries %s: %s",
			text, wantText, deliveryKinds(ds), strings.Join(bodies, " | "))
	}
	return nil
}

func eventState(ev a2a.Event) (a2a.TaskState, bool) {
	switch e := ev.(type) {
	case *a2a.Task:
		return e.Status.State, true
	case *a2a.TaskStatusUpdateEvent:
		return e.Status.State, true
	}
	return "", false
}

func kinds(events []a2a.Event) string {
	var s []string
	for _, ev := range events {
		s = append(s, eventKind(ev))
	}
	return strings.Join(s, ",")
}

func deliveryKinds(ds []delivery) string {
	var s []string
	for _, d := range ds {
		if d.Event == nil {
			s = append(s, "invalid")
			continue
		}
		s = append(s, eventKind(d.Event))
	}
	return strings.Join(s, ",")
}

func eventKind(ev a2a.Event) string {
	switch e := ev.(type) {
	case *a2a.Task:
		return "task:" + trimState(e.Status.State)
	case *a2a.Message:
		return "message"
	case *a2a.TaskStatusUpdateEvent:
		return "status:" + trimState(e.Status.State)
	case *a2a.TaskArtifactUpdateEvent:
		return "artifact"
	}
	return fmt.Sprintf("%T", ev)
}

func trimState(s a2a.TaskState) string { return strings.TrimPrefix(string(s), "TASK_STATE_") }

func artifactsText(arts []*a2a.Artifact) string {
	var s []string
	for _, a := range arts {
		s = append(s, partsText(a.Parts))
	}
	return strings.Join(s, "|")
}

func partsText(parts a2a.ContentParts) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text())
	}
	return b.String()
}

func taskIDs(ts []*a2a.Task) []a2a.TaskID {
	var ids []a2a.TaskID
	for _, x := range ts {
		ids = append(ids, x.ID)
	}
	return ids
}

func ptr[T any](v T) *T { return &v }

// TestJSClientContract runs js/contract.mjs: the official JavaScript
// client sends a message to a contract served as an agent (the "report"
// contract of examples/contract-run, three steps on exec agents) over
// JSON-RPC and HTTP+JSON, and reads the run's verified results: the
// verified-results artifact and metadata.pactum.verifiedResult.
func TestJSClientContract(t *testing.T) {
	t.Parallel()
	node, jsDir := jsClient(t)
	cfg, err := filepath.Abs(filepath.Join("..", "..", "..", "examples", "contract-run", "pactum.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	srv := setupWith(t, cfg)

	ctx, cancel := context.WithTimeout(t.Context(), nodeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "contract.mjs", srv.AgentURL("report"))
	cmd.Dir = jsDir
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	logLines(t, out)
	if err != nil {
		t.Fatalf("node contract.mjs: %v (see FAIL lines above)", err)
	}
	if n := bytes.Count(out, []byte("PASS ")); n != 5 {
		t.Fatalf("contract.mjs passed %d checks, want 5", n)
	}
}
