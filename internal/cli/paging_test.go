package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/node"
	"github.com/pactum/pactum/task"
)

// TestPageSizeEveryEdge: every edge that lists tasks (A2A JSON-RPC
// ListTasks, A2A HTTP+JSON GET /tasks, MCP list_tasks, `pactum tasks list`)
// gives task.DefaultPageSize tasks when the caller names no size, and
// refuses task.MaxPageSize+1 (and a negative size) as invalid rather than
// clamping it, as A2A 1.0 specifies.
func TestPageSizeEveryEdge(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dsn := "sqlite://" + filepath.Join(dir, "pactum.db")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(fmt.Sprintf("listen: %s\nstore: %q\nagents: [{name: echo, type: echo}]\n", ln.Addr(), dsn)), "paging.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	srv, err := node.New(ctx, cfg, dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.ServeListener(ctx, ln, 10*time.Second) }()
	defer func() {
		cancel()
		<-done
	}()
	base := "http://" + ln.Addr().String()

	// One more task than a default page holds.
	const total = task.DefaultPageSize + 1
	for i := range total {
		id := "m" + strconv.Itoa(i)
		if _, err := srv.Coordinator().Submit(ctx, task.SubmitRequest{Agent: "echo", Envelope: task.Envelope{
			Actor: "t", Action: "echo", Input: task.Message{ID: id, Role: task.RoleUser, Parts: []task.Part{task.TextPart(id)}},
		}}); err != nil {
			t.Fatal(err)
		}
	}
	tooBig := task.MaxPageSize + 1

	do := func(method, path, body string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("A2A-Version", "1.0")
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, data
	}
	type page struct {
		Tasks    []json.RawMessage `json:"tasks"`
		PageSize int               `json:"pageSize"`
		Next     string            `json:"nextPageToken"`
	}

	t.Run("A2A JSON-RPC", func(t *testing.T) {
		rpc := func(params string) (page, *struct{ Code int }) {
			_, data := do(http.MethodPost, "/", `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":`+params+`}`)
			var r struct {
				Result page
				Error  *struct{ Code int }
			}
			if err := json.Unmarshal(data, &r); err != nil {
				t.Fatalf("%s: %v", data, err)
			}
			return r.Result, r.Error
		}
		p, e := rpc(`{}`)
		if e != nil || len(p.Tasks) != task.DefaultPageSize || p.PageSize != task.DefaultPageSize || p.Next == "" {
			t.Errorf("no pageSize: %d tasks, pageSize %d, next %q, error %+v; want %d, a next page", len(p.Tasks), p.PageSize, p.Next, e, task.DefaultPageSize)
		}
		if p, e := rpc(fmt.Sprintf(`{"pageSize":%d}`, task.MaxPageSize)); e != nil || len(p.Tasks) != total {
			t.Errorf("pageSize %d: %d tasks, error %+v; want %d", task.MaxPageSize, len(p.Tasks), e, total)
		}
		for _, n := range []int{tooBig, -1} {
			if _, e := rpc(fmt.Sprintf(`{"pageSize":%d}`, n)); e == nil || e.Code != -32602 {
				t.Errorf("pageSize %d: error %+v, want -32602 invalid params", n, e)
			}
		}
	})

	t.Run("A2A HTTP+JSON", func(t *testing.T) {
		code, data := do(http.MethodGet, "/tasks", "")
		var p page
		if err := json.Unmarshal(data, &p); err != nil || code != http.StatusOK {
			t.Fatalf("GET /tasks: %d %s", code, data)
		}
		if len(p.Tasks) != task.DefaultPageSize || p.PageSize != task.DefaultPageSize || p.Next == "" {
			t.Errorf("no pageSize: %d tasks, pageSize %d, next %q; want %d, a next page", len(p.Tasks), p.PageSize, p.Next, task.DefaultPageSize)
		}
		for _, n := range []int{tooBig, -1} {
			if code, data := do(http.MethodGet, "/tasks?pageSize="+strconv.Itoa(n), ""); code != http.StatusBadRequest || !bytes.Contains(data, []byte("pageSize must be between 1 and 100")) {
				t.Errorf("pageSize %d: %d %s, want 400 naming the range", n, code, data)
			}
		}
	})

	t.Run("MCP", func(t *testing.T) {
		session, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer session.Close()
		call := func(args map[string]any) (*mcp.CallToolResult, []json.RawMessage) {
			res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "list_tasks", Arguments: args})
			if err != nil {
				t.Fatal(err)
			}
			var out struct{ Tasks []json.RawMessage }
			if !res.IsError {
				data, _ := json.Marshal(res.StructuredContent)
				if err := json.Unmarshal(data, &out); err != nil {
					t.Fatal(err)
				}
			}
			return res, out.Tasks
		}
		if res, tasks := call(map[string]any{}); res.IsError || len(tasks) != task.DefaultPageSize {
			t.Errorf("no page_size: %d tasks (error %v), want %d", len(tasks), res.IsError, task.DefaultPageSize)
		}
		for _, n := range []int{tooBig, -1} {
			if res, _ := call(map[string]any{"page_size": n}); !res.IsError {
				t.Errorf("page_size %d: accepted, want a tool error", n)
			}
		}
		// The schema's text states the same numbers.
		tools, err := session.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("1 to %d; default %d", task.MaxPageSize, task.DefaultPageSize)
		for _, tool := range tools.Tools {
			if tool.Name == "list_tasks" {
				if schema, _ := json.Marshal(tool.InputSchema); !bytes.Contains(schema, []byte(want)) {
					t.Errorf("list_tasks schema %s does not say %q", schema, want)
				}
			}
		}
	})

	t.Run("CLI", func(t *testing.T) {
		out := mustRun(t, "tasks", "list", "--store", dsn, "--json")
		var p page
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		if len(p.Tasks) != task.DefaultPageSize || p.Next == "" {
			t.Errorf("no --limit: %d tasks, next %q; want %d, a next page", len(p.Tasks), p.Next, task.DefaultPageSize)
		}
		for _, n := range []int{tooBig, -1} {
			want := fmt.Sprintf("--limit %d is out of range: want 1 to 100", n)
			if _, err := run(t, "tasks", "list", "--store", dsn, "--limit", strconv.Itoa(n)); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("--limit %d: %v, want a refusal naming --limit and the range: %q", n, err, want)
			}
		}
	})
}
