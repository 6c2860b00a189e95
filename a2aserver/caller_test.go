package a2aserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// headerUser authenticates the user the X-Test-User header names, as an
// a2asrv authentication interceptor does: it sets CallContext.User.
type headerUser struct {
	a2asrv.PassthroughCallInterceptor
}

func (headerUser) Before(ctx context.Context, cc *a2asrv.CallContext, _ *a2asrv.Request) (context.Context, any, error) {
	if v, ok := cc.ServiceParams().Get("X-Test-User"); ok && len(v) == 1 {
		cc.User = a2asrv.NewAuthenticatedUser(v[0], nil)
	}
	return ctx, nil, nil
}

// TestCallContextUserIsTheCaller: the Handler mounted on a2a-go's own
// JSON-RPC transport behind an authentication interceptor acts as the
// CallContext's user: a task is submitted under it, and another user
// neither reads, lists nor subscribes to it (the subscription answers
// TaskNotFound before any event).
func TestCallContextUserIsTheCaller(t *testing.T) {
	t.Parallel()
	b := setup(t)
	h, _ := b.srv.RequestHandler("slow")
	srv := httptest.NewServer(a2asrv.NewJSONRPCHandler(&a2asrv.InterceptedHandler{Handler: h, Interceptors: []a2asrv.CallInterceptor{headerUser{}}}))
	t.Cleanup(srv.Close)
	rpc := func(user, method, params string) string {
		t.Helper()
		req, _ := http.NewRequestWithContext(testCtx(t), http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Test-User", user)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	sent := rpc("alice", "SendMessage", `{"configuration":{"returnImmediately":true},"message":{"messageId":"cc-1","role":"ROLE_USER","parts":[{"text":"alice's secret"}]}}`)
	var res struct {
		Result struct {
			Task struct {
				ID       string         `json:"id"`
				Metadata map[string]any `json:"metadata"`
			} `json:"task"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(sent), &res); err != nil || res.Result.Task.ID == "" {
		t.Fatalf("alice's SendMessage: %s", sent)
	}
	id := res.Result.Task.ID
	if got := pactumMeta(t, res.Result.Task.Metadata)["actor"]; got != "alice" {
		t.Errorf("the task's actor is %v, want alice (the CallContext user)", got)
	}
	b.waitStarted()

	for _, c := range []struct{ method, params string }{
		{"GetTask", `{"id":"` + id + `"}`},
		{"SubscribeToTask", `{"id":"` + id + `"}`},
		{"CancelTask", `{"id":"` + id + `"}`},
	} {
		got := rpc("bob", c.method, c.params)
		if !strings.Contains(got, `"code":-32001`) || strings.Contains(got, "secret") || strings.Contains(got, "alice") {
			t.Errorf("bob's %s of alice's task: %s; want TaskNotFound and nothing of the task", c.method, got)
		}
	}
	if got := rpc("bob", "ListTasks", `{}`); strings.Contains(got, id) || !strings.Contains(got, `"tasks":[]`) {
		t.Errorf("bob's ListTasks: %s; want no tasks", got)
	}
	if got := rpc("alice", "GetTask", `{"id":"`+id+`"}`); !strings.Contains(got, "alice's secret") {
		t.Errorf("alice's GetTask of her task: %s", got)
	}
}
