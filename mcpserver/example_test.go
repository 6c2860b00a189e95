package mcpserver_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/mcpserver"
	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/task"
)

// Serve a Coordinator over MCP and call submit_task with the go-sdk client.
// Over HTTP, mount srv.Handler(mcpserver.HTTPOptions{}) at /mcp instead;
// for desktop clients, call srv.RunStdio(ctx).
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "pactum-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(dir, "pactum.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	upper := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		return &task.Result{Artifacts: []task.Artifact{{Name: "shout", Parts: []task.Part{task.TextPart(strings.ToUpper(req.Message.Text()))}}}}, nil
	})
	coord, err := task.NewCoordinator(task.Options{Store: st, Agents: []task.AgentSpec{{Name: "shout", Runner: upper}}})
	if err != nil {
		log.Fatal(err)
	}
	if err := coord.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer coord.Stop(ctx)

	srv := mcpserver.New(coord, mcpserver.Options{Version: "1.0.0"})
	serverSide, clientSide := mcp.NewInMemoryTransports()
	go srv.Run(ctx, serverSide)

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "0"}, nil).Connect(ctx, clientSide, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{
		Name:      mcpserver.ToolSubmitTask,
		Arguments: map[string]any{"agent": "shout", "text": "hello", "wait": true},
	})
	if err != nil {
		log.Fatal(err)
	}
	out := res.StructuredContent.(map[string]any)
	art := out["artifacts"].([]any)[0].(map[string]any)
	fmt.Println(out["state"], art["text"])
	// Output: succeeded HELLO
}
