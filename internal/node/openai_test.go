package node_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// TestOpenAIAgent runs an openai agent on a real node: an A2A caller's
// message reaches the model server as the system prompt and the user's
// text, and the streamed answer comes back as the task's artifact with the
// token usage in its metadata.
//
// No model can run on this machine: the server below is an
// OpenAI-compatible chat completions server written for this test. It
// checks the request it receives and streams a scripted answer.
func TestOpenAIAgent(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		b, _ := io.ReadAll(r.Body)
		var req struct {
			Model    string `json:"model"`
			Stream   bool   `json:"stream"`
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(b, &req); err != nil {
			t.Errorf("request %s: %v", b, err)
		}
		got := fmt.Sprintf("%s %s %s stream=%v %+v", r.Method, r.URL.Path, req.Model, req.Stream, req.Messages)
		if want := "POST /v1/chat/completions llama3.2 stream=true [{Role:system Content:Answer briefly.} {Role:user Content:What is pactum?}]"; got != want {
			t.Errorf("request:\n got %s\nwant %s", got, want)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, piece := range []string{"A contract ", "runtime."} {
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"llama3.2\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", piece)
		}
		fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"llama3.2\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":4,\"total_tokens\":13}}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(model.Close)

	n := startNode(t, "", fmt.Sprintf("agents:\n  - name: llm\n    type: openai\n    openai:\n      base_url: %s/v1\n      model: llama3.2\n      system: Answer briefly.\n", model.URL))
	tk := sendText(t.Context(), t, a2aClient(t.Context(), t, n.base, "llm"), "What is pactum?", nil)
	if tk.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("task %s: %s", tk.Status.State, n.logs.String())
	}
	if len(tk.Artifacts) != 1 || len(tk.Artifacts[0].Parts) != 1 {
		t.Fatalf("artifacts = %+v", tk.Artifacts)
	}
	if got := tk.Artifacts[0].Parts[0].Text(); got != "A contract runtime." {
		t.Errorf("answer = %q", got)
	}
	meta, _ := json.Marshal(tk.Artifacts[0].Metadata)
	if want := `{"pactum":{"model":"llama3.2","usage":{"completion_tokens":4,"prompt_tokens":9,"total_tokens":13}}}`; string(meta) != want {
		t.Errorf("artifact metadata = %s\nwant %s", meta, want)
	}
	if c := calls.Load(); c != 1 {
		t.Errorf("%d model calls, want 1", c)
	}
}
