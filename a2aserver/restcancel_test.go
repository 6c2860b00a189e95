package a2aserver_test

import (
	"net/http"
	"strings"
	"testing"
)

// An A2A 1.0 HTTP+JSON cancel (POST /tasks/{id}:cancel) may carry the
// request's metadata in its body, as JSON-RPC's params do: the reason
// under metadata.pactum.reason is recorded; a body that does not decode,
// or metadata pactum refuses, is refused before anything changes; no body
// cancels with the Coordinator's default reason.
func TestRESTCancelReadsTheBody(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := testCtx(t)
	send := b.startSlowREST
	id := send()
	for _, tc := range []struct{ body, want string }{
		{`{"metadata":{"pactum":{"reson":"typo"}}}`, `"status":"INVALID_ARGUMENT"`},
		{`{"metadata":{"pactum":{"reason":7}}}`, `"status":"INVALID_ARGUMENT"`},
		{`{"metadata":[]}`, `body.metadata: got an array, want an object`},
		{`{"metadata":`, `"reason":"PARSE_ERROR"`},
	} {
		r := b.post("/agents/slow/tasks/"+id+":cancel", "1.0", tc.body)
		if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), tc.want) {
			t.Errorf("cancel with body %s: %d %s, want 400 holding %s", tc.body, r.status, r.body, tc.want)
		}
	}
	if st, err := b.coord.Get(ctx, id, 0); err != nil || st.State.Terminal() {
		t.Fatalf("after the refused cancels the task is %v (err %v), want it still running", st.State, err)
	}
	r := b.post("/agents/slow/tasks/"+id+":cancel", "1.0", `{"metadata":{"pactum":{"reason":"changed my mind over REST"}}}`)
	if r.status != http.StatusOK || !strings.Contains(string(r.body), "TASK_STATE_CANCELED") {
		t.Fatalf("cancel: %d %s", r.status, r.body)
	}
	if st, err := b.coord.Get(ctx, id, 0); err != nil || st.Reason != "changed my mind over REST" {
		t.Fatalf("stored reason = %q (err %v), want the one in the body's metadata.pactum.reason", st.Reason, err)
	}
	id = send()
	if r := b.post("/agents/slow/tasks/"+id+":cancel", "1.0", ""); r.status != http.StatusOK {
		t.Fatalf("cancel without a body: %d %s", r.status, r.body)
	}
	if st, err := b.coord.Get(ctx, id, 0); err != nil || st.Reason != "canceled by request" {
		t.Fatalf("stored reason = %q (err %v), want the default", st.Reason, err)
	}
}
