package httpstatus_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/pactum/pactum/internal/httpstatus"
	"github.com/pactum/pactum/task"
)

// TestClassifyNamed pins the statuses the policy names, each with the
// verdict and the code docs/runtimes.md gives it.
func TestClassifyNamed(t *testing.T) {
	t.Parallel()
	const (
		ok   = httpstatus.OK
		retr = httpstatus.Retry
		perm = httpstatus.Permanent
	)
	tests := []struct {
		status int
		want   httpstatus.Verdict
		code   task.Code
	}{
		{httpstatus.NoResponse, retr, task.CodeUnavailable},
		{http.StatusContinue, perm, task.CodeInvalidArgument},
		{http.StatusSwitchingProtocols, perm, task.CodeInvalidArgument},
		{http.StatusOK, ok, ""},
		{http.StatusAccepted, ok, ""},
		{http.StatusNoContent, ok, ""},
		{http.StatusMovedPermanently, perm, task.CodeInvalidArgument},
		{http.StatusNotModified, perm, task.CodeInvalidArgument},
		{http.StatusPermanentRedirect, perm, task.CodeInvalidArgument},
		{http.StatusBadRequest, perm, task.CodeInvalidArgument},
		{http.StatusUnauthorized, perm, task.CodeForbidden},
		{http.StatusForbidden, perm, task.CodeForbidden},
		{http.StatusNotFound, perm, task.CodeUnsupported},
		{http.StatusMethodNotAllowed, perm, task.CodeUnsupported},
		{http.StatusRequestTimeout, retr, task.CodeUnavailable},
		{http.StatusConflict, perm, task.CodeInvalidArgument},
		{http.StatusGone, perm, task.CodeInvalidArgument},
		{http.StatusRequestEntityTooLarge, perm, task.CodeInvalidArgument},
		{http.StatusUnprocessableEntity, perm, task.CodeInvalidArgument},
		{http.StatusLocked, retr, task.CodeUnavailable},
		{http.StatusTooEarly, retr, task.CodeUnavailable},
		{http.StatusTooManyRequests, retr, task.CodeUnavailable},
		{http.StatusUnavailableForLegalReasons, perm, task.CodeInvalidArgument},
		{http.StatusInternalServerError, retr, task.CodeUnavailable},
		{http.StatusNotImplemented, perm, task.CodeUnsupported},
		{http.StatusBadGateway, retr, task.CodeUnavailable},
		{http.StatusServiceUnavailable, retr, task.CodeUnavailable},
		{http.StatusGatewayTimeout, retr, task.CodeUnavailable},
		{http.StatusHTTPVersionNotSupported, perm, task.CodeUnsupported},
		{http.StatusInsufficientStorage, retr, task.CodeUnavailable},
		{http.StatusNetworkAuthenticationRequired, retr, task.CodeUnavailable},
		{599, retr, task.CodeUnavailable},
		{-1, perm, task.CodeAgentFailed},
		{99, perm, task.CodeAgentFailed},
		{600, perm, task.CodeAgentFailed},
		{999, perm, task.CodeAgentFailed},
	}
	for _, tt := range tests {
		if got := httpstatus.Classify(tt.status); got != tt.want {
			t.Errorf("Classify(%d) = %v, want %v", tt.status, got, tt.want)
		}
		if got := httpstatus.Code(tt.status); got != tt.code {
			t.Errorf("Code(%d) = %q, want %q", tt.status, got, tt.code)
		}
	}
}

// TestClassifyEveryStatus walks every status 0–999 (what Go's HTTP client
// accepts) and checks it against the policy stated class by class.
func TestClassifyEveryStatus(t *testing.T) {
	t.Parallel()
	retryable4xx := map[int]bool{408: true, 423: true, 425: true, 429: true}
	permanent5xx := map[int]bool{501: true, 505: true}
	for status := 0; status <= 999; status++ {
		var want httpstatus.Verdict
		switch {
		case status == 0:
			want = httpstatus.Retry
		case status < 100:
			want = httpstatus.Permanent
		case status < 200: // 1xx
			want = httpstatus.Permanent
		case status < 300: // 2xx
			want = httpstatus.OK
		case status < 400: // 3xx
			want = httpstatus.Permanent
		case status < 500: // 4xx
			want = httpstatus.Permanent
			if retryable4xx[status] {
				want = httpstatus.Retry
			}
		case status < 600: // 5xx
			want = httpstatus.Retry
			if permanent5xx[status] {
				want = httpstatus.Permanent
			}
		default:
			want = httpstatus.Permanent
		}
		got := httpstatus.Classify(status)
		if got != want {
			t.Errorf("Classify(%d) = %v, want %v", status, got, want)
		}
		code := httpstatus.Code(status)
		switch {
		case got == httpstatus.OK && code != "":
			t.Errorf("Code(%d) = %q, want none for a success", status, code)
		case got == httpstatus.Retry && code != task.CodeUnavailable:
			t.Errorf("Code(%d) = %q, want %q for a retryable status", status, code, task.CodeUnavailable)
		case got == httpstatus.Permanent && (code == "" || code == task.CodeUnavailable):
			t.Errorf("Code(%d) = %q, want a permanent code", status, code)
		}
	}
}

func ExampleClassify() {
	for _, status := range []int{200, 404, 408, 409, 423, 425, 429, 500, 501, 503} {
		fmt.Printf("%d %v %q\n", status, httpstatus.Classify(status), httpstatus.Code(status))
	}
	// Output:
	// 200 ok ""
	// 404 permanent "unsupported"
	// 408 retry "unavailable"
	// 409 permanent "invalid_argument"
	// 423 retry "unavailable"
	// 425 retry "unavailable"
	// 429 retry "unavailable"
	// 500 retry "unavailable"
	// 501 permanent "unsupported"
	// 503 retry "unavailable"
}
