package push

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
)

// TestPushStatusPolicy: a webhook's answer is judged by the one HTTP
// policy of pactum (internal/httpstatus), as the runtimes judge theirs:
// 423 and 503 are worth another delivery, 409, 501 and 505 are not.
func TestPushStatusPolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status    int
		ok, retry bool
	}{
		{status: 200, ok: true},
		{status: 204, ok: true},
		{status: 408, retry: true},
		{status: 423, retry: true},
		{status: 425, retry: true},
		{status: 429, retry: true},
		{status: 500, retry: true},
		{status: 503, retry: true},
		{status: 400},
		{status: 404},
		{status: 409},
		{status: 501},
		{status: 505},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(tc.status) }))
		p := New(nil, Options{Timeout: 5 * time.Second, Client: srv.Client()})
		err := p.post(t.Context(), delivery{config: task.PushConfig{URL: srv.URL}, body: []byte(`{}`)}, 1)
		srv.Close()
		var perm *permanentPushError
		switch {
		case tc.ok && err != nil:
			t.Errorf("%d: %v, want delivered", tc.status, err)
		case tc.retry && (err == nil || errors.As(err, &perm)):
			t.Errorf("%d: %v, want a retryable failure", tc.status, err)
		case !tc.ok && !tc.retry && !errors.As(err, &perm):
			t.Errorf("%d: %v, want a permanent failure", tc.status, err)
		}
	}
}
