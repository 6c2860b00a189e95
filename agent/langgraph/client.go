package langgraph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/pactum/pactum/internal/httpstatus"
	"github.com/pactum/pactum/task"
)

// excerptBytes bounds the part of an error response quoted in errors.
const excerptBytes = 512

// maxJSONBytes bounds a JSON response (a thread's state, a list of runs).
const maxJSONBytes = 32 << 20

// errAttemptTimeout is the cancellation cause of an attempt that ran past
// Settings.Timeout, telling it apart from a cancellation by the caller.
var errAttemptTimeout = errors.New("attempt timed out")

// request makes one call to the Agent Server and returns the response when
// its status is 2xx; other statuses and transport failures become errors
// classified by the shared HTTP status policy. The caller closes the body.
func (r *Runtime) request(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, task.Permanent(fmt.Errorf("langgraph: encode %s %s: %w", method, path, err))
		}
		rd = bytes.NewReader(b)
	}
	hreq, err := http.NewRequestWithContext(ctx, method, r.base+path, rd)
	if err != nil {
		return nil, task.Permanent(fmt.Errorf("langgraph: %s %s: %w", method, path, err))
	}
	hreq.Header = r.header.Clone()
	if body != nil {
		hreq.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.client.Do(hreq)
	if err != nil {
		if ierr := r.interrupted(ctx, method+" "+path); ierr != nil {
			return nil, ierr
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its message repeats the URL
		}
		return nil, task.Errorf(task.CodeUnavailable, "langgraph %s: %s %s: %w", r.host, method, path, err)
	}
	if httpstatus.Classify(resp.StatusCode) == httpstatus.OK {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, statusError(r.host, method+" "+path, resp.StatusCode, resp.Status, bodyExcerpt(resp.Body))
}

// statusError is the error of a call answered with a non-2xx status.
func statusError(host, op string, status int, text, excerpt string) error {
	e := task.Errorf(httpstatus.Code(status), "langgraph %s: %s: %s%s", host, op, text, excerpt)
	if httpstatus.Classify(status) == httpstatus.Permanent {
		return task.Permanent(e)
	}
	return e
}

// call makes one call and decodes its JSON answer into out (nil: discard).
func (r *Runtime) call(ctx context.Context, method, path string, body, out any) error {
	resp, err := r.request(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxJSONBytes))
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxJSONBytes)).Decode(out); err != nil {
		if ierr := r.interrupted(ctx, method+" "+path); ierr != nil {
			return ierr
		}
		return task.Errorf(task.CodeAgentFailed, "langgraph %s: %s %s: unreadable answer: %w", r.host, method, path, err)
	}
	return nil
}

// interrupted returns the error for an attempt whose context ended, or nil
// while it runs: a retryable timeout when the attempt ran out of time, the
// cause (for the core to recognise) when the caller canceled.
func (r *Runtime) interrupted(ctx context.Context, op string) error {
	if ctx.Err() == nil {
		return nil
	}
	cause := context.Cause(ctx)
	if errors.Is(cause, errAttemptTimeout) {
		return task.Errorf(task.CodeTimeout, "langgraph %s: %s: run not finished within %s: %w", r.host, op, r.s.Timeout, context.DeadlineExceeded)
	}
	return fmt.Errorf("langgraph %s: %s: %w", r.host, op, cause)
}

// bodyExcerpt returns ": " and the start of an error response, or "".
func bodyExcerpt(rd io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(rd, excerptBytes+1))
	cut := len(b) > excerptBytes
	if cut {
		b = b[:excerptBytes]
	}
	s := strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
	if s == "" {
		return ""
	}
	if cut {
		s += "…"
	}
	return ": " + s
}
