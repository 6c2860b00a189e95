package langgraph

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pactum/pactum/task"
)

// newStub serves h on loopback for tests of what the runtime does with
// answers the real server does not give on demand (statuses, cut streams).
func newStub(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// stubServer answers the calls before a run like an Agent Server with an
// empty thread, and the run stream and run status with stream and status.
func stubServer(t *testing.T, streamStatus int, stream, runStatus string) string {
	return newStub(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/threads":
			fmt.Fprint(w, `{}`)
		case strings.HasSuffix(r.URL.Path, "/runs") && r.Method == http.MethodGet:
			fmt.Fprint(w, `[]`)
		case strings.HasSuffix(r.URL.Path, "/history"):
			fmt.Fprint(w, `[]`)
		case strings.HasSuffix(r.URL.Path, "/runs/stream"):
			if streamStatus != http.StatusOK {
				http.Error(w, `{"detail":"stub says no"}`, streamStatus)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Content-Location", r.URL.Path[:len(r.URL.Path)-len("/stream")]+"/run-1")
			fmt.Fprint(w, stream)
		case strings.HasSuffix(r.URL.Path, "/runs/run-1"):
			fmt.Fprintf(w, `{"run_id":"run-1","status":%q}`, runStatus)
		default:
			http.NotFound(w, r)
		}
	})
}

func TestStatusesAndOutcomes(t *testing.T) {
	t.Parallel()
	const values = "event: values\ndata: {\"messages\":[{\"type\":\"ai\",\"content\":\"ok\"}]}\n\n"
	for _, tc := range []struct {
		name         string
		streamStatus int
		stream       string
		runStatus    string
		code         task.Code
		permanent    bool
		text         string
	}{
		{name: "success", streamStatus: 200, stream: values, runStatus: "success", text: "ok"},
		{name: "503", streamStatus: 503, code: task.CodeUnavailable},
		{name: "429", streamStatus: 429, code: task.CodeUnavailable},
		{name: "422", streamStatus: 422, code: task.CodeInvalidArgument, permanent: true},
		{name: "404", streamStatus: 404, code: task.CodeUnsupported, permanent: true},
		{name: "403", streamStatus: 403, code: task.CodeForbidden, permanent: true},
		{name: "error event", streamStatus: 200, stream: "event: error\ndata: {\"error\":\"ValueError\",\"message\":\"bad\"}\n\n", runStatus: "error", code: task.CodeAgentFailed},
		{name: "cut short", streamStatus: 200, stream: "event: metadata\ndata: {\"run_id\":\"run-1\"}\n\n", runStatus: "running", code: task.CodeUnavailable},
		{name: "server timeout", streamStatus: 200, stream: values, runStatus: "timeout", code: task.CodeTimeout},
		{name: "canceled on the server", streamStatus: 200, stream: values, runStatus: "interrupted", code: task.CodeUnavailable},
		{name: "bad JSON", streamStatus: 200, stream: "event: values\ndata: {\n\n", runStatus: "success", code: task.CodeAgentFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url := stubServer(t, tc.streamStatus, tc.stream, tc.runStatus)
			r, err := New(Settings{URL: url, Assistant: "a"})
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Invoke(context.Background(), request("t", "c", "hi"))
			if tc.code == "" {
				if err != nil {
					t.Fatalf("Invoke: %v", err)
				}
				if got := res.Message.Text(); got != tc.text {
					t.Errorf("answer = %q, want %q", got, tc.text)
				}
				return
			}
			if task.ErrorCode(err) != tc.code || task.IsPermanent(err) != tc.permanent {
				t.Errorf("error = %v (code %s, permanent %v), want code %s, permanent %v", err, task.ErrorCode(err), task.IsPermanent(err), tc.code, tc.permanent)
			}
		})
	}
}

func TestCancelWithoutRunIsNoop(t *testing.T) {
	t.Parallel()
	r, err := New(Settings{URL: "http://127.0.0.1:1", Assistant: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Cancel(context.Background(), "unknown"); err != nil {
		t.Errorf("Cancel = %v", err)
	}
}

func TestRunBody(t *testing.T) {
	t.Parallel()
	r, err := New(Settings{URL: "http://127.0.0.1:1", Assistant: "a"})
	if err != nil {
		t.Fatal(err)
	}
	req := request("t", "c", "look at this")
	req.Message.Parts = append(req.Message.Parts, task.DataPart([]byte(`{"k":1}`)))
	body, err := r.runBody(req, "thread", "t/m")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(body)
	want := `{"assistant_id":"a","input":{"messages":[{"content":"look at this\n\n{\"k\":1}","role":"user"}]},"stream_mode":["values","messages-tuple","updates"],"metadata":{"pactum_task":"t","pactum_turn":"t/m"},"multitask_strategy":"enqueue","on_disconnect":"continue"}`
	if string(raw) != want {
		t.Errorf("body = %s\nwant   %s", raw, want)
	}

	d, err := New(Settings{URL: "http://127.0.0.1:1", Assistant: "a", Input: InputData})
	if err != nil {
		t.Fatal(err)
	}
	body, err = d.runBody(req, "thread", "t/m")
	if err != nil {
		t.Fatal(err)
	}
	if raw, _ := json.Marshal(body.Input); string(raw) != `{"k":1}` {
		t.Errorf("data input = %s", raw)
	}
	if _, err := d.runBody(request("t", "c", "text only"), "thread", "t/m"); !task.IsPermanent(err) || task.ErrorCode(err) != task.CodeInvalidArgument {
		t.Errorf("text for data input: %v, want a permanent invalid_argument", err)
	}

	// An attempt after feedback: the newest message is the feedback. A
	// messages graph gets it as the next user message on the thread, which
	// already holds the request and the rejected answer; a data graph gets
	// the turn's request's data again.
	rejected := task.Message{ID: "a1", Role: task.RoleAgent, Parts: []task.Part{task.TextPart("bad")},
		Metadata: map[string]any{task.RetryKey: task.RetryAnswer}}
	feedback := task.Message{ID: "f1", Role: task.RoleUser, Parts: []task.Part{task.TextPart("fix: say ok")},
		Metadata: map[string]any{task.RetryKey: task.RetryFeedback}}
	retry := *req
	retry.History = []task.Message{req.Message, rejected, feedback}
	retry.Message = feedback
	body, err = d.runBody(&retry, "thread", "t/f1")
	if err != nil {
		t.Fatalf("data input after feedback: %v", err)
	}
	if raw, _ := json.Marshal(body.Input); string(raw) != `{"k":1}` {
		t.Errorf("data input after feedback = %s, want the request's data", raw)
	}
	body, err = r.runBody(&retry, "thread", "t/f1")
	if err != nil {
		t.Fatal(err)
	}
	if raw, _ := json.Marshal(body.Input); string(raw) != `{"messages":[{"content":"fix: say ok","role":"user"}]}` {
		t.Errorf("messages input after feedback = %s, want the feedback as the next message", raw)
	}
}
