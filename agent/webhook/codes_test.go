package webhook_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/agenttest"
	"github.com/pactum/pactum/task"
)

// refusedURL returns a loopback URL on which nothing listens: a port that
// was free a moment ago.
func refusedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr + "/webhook/agent"
}

// TestConnectionRefusedIsUnavailable: an endpoint that refuses the
// connection fails the call with code unavailable, retryable, as the
// status table of docs/runtimes.md says ("no response"); the task is
// retried by its policy and ends dead-lettered with that code.
func TestConnectionRefusedIsUnavailable(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), stuck)
	defer cancel()
	a, err := agent.New(ctx, agenttest.Spec(t, "webhook", fmt.Sprintf("url: %s\nallow_private: true\nretry: {max_attempts: 2, initial_backoff: 1ms, max_backoff: 1ms}\n", refusedURL(t))))
	if err != nil {
		t.Fatalf("agent.New: %v", err)
	}
	t.Cleanup(func() { _ = agent.Close(a) })

	_, err = a.Invoke(ctx, agenttest.Request("q"))
	if err == nil || task.IsPermanent(err) || task.ErrorCode(err) != task.CodeUnavailable {
		t.Fatalf("Invoke: err %v (code %q, permanent %v); want a retryable unavailable error", err, task.ErrorCode(err), task.IsPermanent(err))
	}
	if !strings.Contains(err.Error(), "refused") || !strings.Contains(err.Error(), "after 2 calls") {
		t.Errorf("err = %q, want it to say the connection was refused, after 2 calls", err)
	}

	coord := agenttest.Coordinator(t, "webhook-refused", task.AgentSpec{Name: "hook", Runner: agent.Runner(a), Timeout: stuck,
		Retry: task.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}})
	tk := agenttest.Run(t, ctx, coord, "hook", task.TextPart("q"))
	if tk.State != task.StateDeadLetter || tk.ErrorCode != task.CodeUnavailable || tk.Attempt != 3 {
		t.Fatalf("task %s, code %q, attempt %d (%s); want dead_letter, unavailable, after 3 attempts", tk.State, tk.ErrorCode, tk.Attempt, tk.Reason)
	}
}

// TestStatusCodes: a failed call carries the task error code the status
// table gives its status, and is permanent or retryable as it says.
func TestStatusCodes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status    int
		code      task.Code
		permanent bool
	}{
		{http.StatusBadRequest, task.CodeInvalidArgument, true},
		{http.StatusConflict, task.CodeInvalidArgument, true},
		{http.StatusUnauthorized, task.CodeForbidden, true},
		{http.StatusForbidden, task.CodeForbidden, true},
		{http.StatusNotFound, task.CodeUnsupported, true},
		{http.StatusNotImplemented, task.CodeUnsupported, true},
		{http.StatusTooManyRequests, task.CodeUnavailable, false},
		{http.StatusServiceUnavailable, task.CodeUnavailable, false},
	} {
		t.Run(strconv.Itoa(tc.status), func(t *testing.T) {
			t.Parallel()
			b := setup(t, func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "no", tc.status)
			}, "retry: {max_attempts: 1}")
			_, err := b.agent.Invoke(b.ctx, agenttest.Request("q"))
			if err == nil {
				t.Fatal("no error")
			}
			if got := task.ErrorCode(err); got != tc.code {
				t.Errorf("code %q, want %q (%v)", got, tc.code, err)
			}
			if got := task.IsPermanent(err); got != tc.permanent {
				t.Errorf("permanent %v, want %v (%v)", got, tc.permanent, err)
			}
		})
	}
}
