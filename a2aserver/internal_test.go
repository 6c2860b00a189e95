package a2aserver

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/internal/bearer"
	"github.com/pactum/pactum/task"
)

func TestErrorTable(t *testing.T) {
	t.Parallel()
	codes := []task.Code{
		task.CodeInvalidArgument, task.CodeNotFound, task.CodeConflict, task.CodeIllegalTransition,
		task.CodeNotCancelable, task.CodeNotRetryable, task.CodeForbidden, task.CodePolicyDenied,
		task.CodeApprovalRequired, task.CodeUnsupported, task.CodeUnavailable, task.CodeTimeout,
		task.CodeAgentFailed, task.CodeGateBlocked, task.CodeLeaseExpired, task.CodeInternal,
	}
	log := slog.New(slog.DiscardHandler)
	for _, c := range codes {
		sentinel, ok := errorTable[c]
		switch {
		case c.Exposed() && !ok:
			t.Errorf("exposed code %s is not in the error table", c)
			continue
		case !c.Exposed() && ok:
			t.Errorf("hidden code %s is in the error table", c)
		case !c.Exposed():
			sentinel = a2a.ErrInternalError
		}
		err := toA2AError(context.Background(), log, "test", task.Errorf(c, "secret detail of %s", c))
		if !errors.Is(err, sentinel) {
			t.Errorf("code %s → %v, want %v", c, err, sentinel)
		}
		internal := sentinel == a2a.ErrInternalError
		if leaked := strings.Contains(err.Error(), "secret detail"); leaked == internal {
			t.Errorf("code %s → %q: internal errors must hide their detail, others keep it", c, err)
		}
	}
	for _, tc := range []struct {
		in   error
		want error
	}{
		{task.Errorf(task.CodeNotFound, "task x not found: %w", task.ErrNotFound), a2a.ErrTaskNotFound},
		{task.Errorf(task.CodeNotCancelable, "no"), a2a.ErrTaskNotCancelable},
		{task.Errorf(task.CodeUnsupported, "no"), a2a.ErrUnsupportedOperation},
		{task.Errorf(task.CodeConflict, "no"), a2a.ErrInvalidRequest},
		{task.Errorf(task.CodeInvalidArgument, "no"), a2a.ErrInvalidParams},
		{errors.New("wrapped: " + task.ErrIllegalTransition.Error()), a2a.ErrInternalError},
		{a2a.ErrTaskNotFound, a2a.ErrTaskNotFound},
		{context.Canceled, context.Canceled},
	} {
		if got := toA2AError(context.Background(), log, "test", tc.in); !errors.Is(got, tc.want) {
			t.Errorf("%v → %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestNegotiate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want a2a.ProtocolVersion
		ok   bool
	}{
		{"", "0.3", true},
		{"0.3", "0.3", true},
		{"0.3.1", "0.3", true},
		{"1.0", "1.0", true},
		{"1.0.0", "1.0", true},
		{"1", "", false},
		{"2.0", "", false},
		{"1.1", "", false},
		{"v1.0", "", false},
		{"1.0.0.0", "", false},
		{"1..0", "", false},
		{"1.0-beta", "", false},
	} {
		got, ok := negotiate(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("negotiate(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestReadEnvelope(t *testing.T) {
	t.Parallel()
	e, err := readEnvelope(
		map[string]any{"pactum": map[string]any{"actor": "req-actor", "policyRef": "P-1", "matter": nil}},
		map[string]any{"pactum": map[string]any{"actor": "msg-actor", "approvalRef": "A-1"}},
	)
	if err != nil {
		t.Fatal(err)
	}
	if e.Actor != "msg-actor" || e.PolicyRef != "P-1" || e.ApprovalRef != "A-1" {
		t.Fatalf("envelope = %+v: the message must win, the request fill in", e)
	}
	env, err := envelopeMeta{}.envelope(task.Message{ID: "m-1", ContextID: "c-1"}, map[string]any{"pactum": map[string]any{}, "x": 1}, "")
	if err != nil {
		t.Fatal(err)
	}
	if env.Actor != AnonymousActor || env.IdempotencyKey != "m-1" || env.ContextID != "c-1" || env.Metadata["x"] != 1 || env.Metadata["pactum"] != nil {
		t.Fatalf("defaults = %+v", env)
	}
	// A custom workflow run's agents travel in the message's metadata,
	// read by the run, not the envelope.
	if _, err := readEnvelope(nil, map[string]any{"pactum": map[string]any{"agents": []any{"a", "b"}, "actor": "x"}}); err != nil {
		t.Errorf("message metadata.pactum.agents refused: %v", err)
	}
	if _, err := readEnvelope(map[string]any{"pactum": map[string]any{"agents": []any{"a"}}}, nil); err == nil {
		t.Error("request metadata.pactum.agents accepted: the run reads only the message's")
	}
	for _, bad := range []map[string]any{
		{"pactum": "alice"},
		{"pactum": map[string]any{"actor": 1}},
		{"pactum": map[string]any{"policy_ref": "x"}},
	} {
		if _, err := readEnvelope(nil, bad); err == nil {
			t.Errorf("readEnvelope(%v) accepted", bad)
		}
	}
}

// FuzzBearerHeader feeds arbitrary Authorization headers to the bearer
// check: it never panics, lets a request through only with the scheme
// Bearer (any case) and the known token, and then carries the token's
// actor; everything else is a 401 with a challenge.
func FuzzBearerHeader(f *testing.F) {
	for _, s := range []string{"", "Bearer s3cret", "bearer s3cret", "Bearer  s3cret ", "Basic s3cret", "Bearer", "Bearer ", "Bearer wrong", "s3cret", "Bearer s3cret extra"} {
		f.Add(s)
	}
	s := &Server{opts: Options{Authenticate: func(_ context.Context, token string) (task.Identity, error) {
		if token != "s3cret" {
			return task.Identity{}, bearer.ErrInvalidToken
		}
		return task.Identity{Actor: "alice"}, nil
	}}}
	f.Fuzz(func(t *testing.T, header string) {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		r.Header.Set("Authorization", header)
		w := httptest.NewRecorder()
		got := s.authenticate(w, r)
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		valid := strings.EqualFold(scheme, "Bearer") && strings.TrimSpace(token) == "s3cret"
		switch {
		case valid && (got == nil || task.Caller(got.Context()) != "alice"):
			t.Fatalf("header %q: refused or without its actor", header)
		case !valid && got != nil:
			t.Fatalf("header %q: let through", header)
		case !valid && (w.Code != http.StatusUnauthorized || !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Bearer ")):
			t.Fatalf("header %q: %d, challenge %q; want 401 with a Bearer challenge", header, w.Code, w.Header().Get("WWW-Authenticate"))
		}
	})
}
