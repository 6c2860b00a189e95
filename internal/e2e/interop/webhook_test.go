package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// webhook is a push-notification receiver on a loopback port. It answers
// every POST with 200 and keeps the deliveries by request path, so each
// check can use a path of its own.
type webhook struct {
	URL string

	mu      sync.Mutex
	got     map[string][]delivery
	changed chan struct{} // closed and replaced on every delivery
}

// delivery is one webhook request, decoded as the StreamResponse the A2A
// 1.0 specification (§4.3.3) says it carries.
type delivery struct {
	Method string
	Header http.Header
	Body   string
	Event  a2a.Event // nil if the body is not a StreamResponse
	Err    error     // why the body is not a StreamResponse
}

func newWebhook(t *testing.T) *webhook {
	t.Helper()
	w := &webhook{got: map[string][]delivery{}, changed: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(w.serve)) // listens on 127.0.0.1
	t.Cleanup(srv.Close)
	w.URL = srv.URL
	return w
}

func (w *webhook) serve(rw http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	d := delivery{Method: r.Method, Header: r.Header.Clone(), Body: string(body)}
	var sr a2a.StreamResponse
	if err := json.Unmarshal(body, &sr); err != nil {
		d.Err = err
	} else if sr.Event == nil {
		d.Err = fmt.Errorf("no event in body")
	} else {
		d.Event = sr.Event
	}
	w.mu.Lock()
	w.got[r.URL.Path] = append(w.got[r.URL.Path], d)
	close(w.changed)
	w.changed = make(chan struct{})
	w.mu.Unlock()
	rw.Header().Set("Content-Type", "application/json")
	_, _ = rw.Write([]byte("{}"))
}

// wait returns the deliveries to path once done holds for them, or an
// error when ctx ends first.
func (w *webhook) wait(ctx context.Context, path string, done func([]delivery) bool) ([]delivery, error) {
	for {
		w.mu.Lock()
		got := append([]delivery(nil), w.got[path]...)
		changed := w.changed
		w.mu.Unlock()
		if done(got) {
			return got, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			var bodies []string
			for _, d := range got {
				bodies = append(bodies, d.Body)
			}
			return got, fmt.Errorf("webhook %s: %w; %d deliveries so far: %s", path, ctx.Err(), len(got), strings.Join(bodies, " | "))
		}
	}
}

// terminalFor reports whether deliveries hold a terminal state of task id.
func terminalFor(id a2a.TaskID) func([]delivery) bool {
	return func(ds []delivery) bool {
		for _, d := range ds {
			if st, ok := eventState(d.Event); ok && d.Event.TaskInfo().TaskID == id && st.Terminal() {
				return true
			}
		}
		return false
	}
}
