// Package httpstatus is pactum's one policy for what an HTTP response
// status means to an outbound call that got it (the a2a, langgraph, mcp
// and webhook runtimes, push-notification delivery): success, worth another call, or
// a failure that no retry can fix.
// docs/runtimes.md shows the policy as a table; change both together.
package httpstatus

import (
	"net/http"

	"github.com/pactum/pactum/task"
)

// Verdict is what a status means to the call that received it.
type Verdict int

const (
	// OK is a 2xx: the call succeeded as far as HTTP can tell.
	OK Verdict = iota
	// Retry is a failure that the same call may get past later: the
	// server is busy, overloaded, restarting, or the call never reached
	// it.
	Retry
	// Permanent is a failure that the same call will meet again: the URL,
	// the credentials or the request are wrong, or the server will not do
	// what is asked. The runtime marks it with task.Permanent.
	Permanent
)

// String returns the verdict's name.
func (v Verdict) String() string {
	switch v {
	case OK:
		return "ok"
	case Retry:
		return "retry"
	case Permanent:
		return "permanent"
	}
	return "unknown"
}

// NoResponse is the status of a call that got no response at all: the
// connection was refused or reset, DNS or TLS failed, or the call timed
// out. It is retryable.
const NoResponse = 0

// Classify returns what status means to the call that received it
// (RFC 9110 §15):
//
//   - NoResponse (0): Retry, a transport failure.
//   - 2xx: OK.
//   - 1xx and 3xx: Permanent. The HTTP client handles interim responses
//     and follows redirects itself, so one that reaches the runtime is a
//     protocol switch it did not ask for or a redirect it cannot follow:
//     the configured URL is wrong.
//   - 4xx: Permanent, the request is wrong, except 408 Request Timeout,
//     425 Too Early and 429 Too Many Requests (RFC 9110 §15.5.9, RFC 8470
//     §5.2, RFC 6585 §4 all invite a retry) and 423 Locked (RFC 4918
//     §11.3: the resource is held by a lock, which its holder releases).
//     409 Conflict stays Permanent: RFC 9110 §15.5.10 expects the client
//     to resolve the conflict and send a different request, and the
//     runtime would send the same one.
//   - 5xx: Retry, the server's own trouble, except 501 Not Implemented
//     and 505 HTTP Version Not Supported: the server says it cannot do
//     this at all, which no retry changes.
//   - Anything else is not an HTTP status (RFC 9110 §15 allows 100–599):
//     Permanent, the server does not speak HTTP as the runtime does.
func Classify(status int) Verdict {
	switch status {
	case NoResponse:
		return Retry
	case http.StatusRequestTimeout, http.StatusLocked, http.StatusTooEarly, http.StatusTooManyRequests:
		return Retry
	case http.StatusNotImplemented, http.StatusHTTPVersionNotSupported:
		return Permanent
	}
	switch {
	case status >= 200 && status <= 299:
		return OK
	case status >= 500 && status <= 599:
		return Retry
	}
	return Permanent
}

// Code returns the task error code of a failed call that received status:
// forbidden for 401 and 403; unsupported for 404, 405, 501 and 505 (the
// URL or the server does not offer this); agent_failed for a status that
// is not HTTP's; invalid_argument for the other permanent statuses;
// unavailable for the retryable ones. A 2xx has no code: "".
func Code(status int) task.Code {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return task.CodeForbidden
	case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotImplemented, http.StatusHTTPVersionNotSupported:
		return task.CodeUnsupported
	}
	switch Classify(status) {
	case OK:
		return ""
	case Retry:
		return task.CodeUnavailable
	}
	if status < 100 || status > 599 {
		return task.CodeAgentFailed
	}
	return task.CodeInvalidArgument
}
