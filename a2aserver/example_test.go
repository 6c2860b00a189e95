package a2aserver_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/pactum/pactum/a2aserver"
	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/task"
)

// ExampleNew serves one Go function as an A2A agent: a Coordinator over a
// SQLite file, and a Server in front of it. Mount srv on any http.Server.
func ExampleNew() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "pactum-example")
	defer os.RemoveAll(dir)
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(dir, "pactum.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()

	shout := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		return &task.Result{Artifacts: []task.Artifact{{Parts: []task.Part{task.TextPart(req.Message.Text() + "!")}}}}, nil
	})
	coord, err := task.NewCoordinator(task.Options{Store: st, Agents: []task.AgentSpec{{Name: "shout", Runner: shout}}})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := a2aserver.New(a2aserver.Options{
		Coordinator: coord,
		Agents:      []a2aserver.AgentInfo{{Name: "shout", Description: "Shouts back."}},
		BaseURL:     "https://agents.example.com",
	})
	if err != nil {
		log.Fatal(err)
	}
	card, _ := srv.Card("shout", "")
	for _, i := range card.SupportedInterfaces {
		fmt.Println(i.ProtocolBinding, i.ProtocolVersion, i.URL)
	}
	// Output:
	// JSONRPC 1.0 https://agents.example.com/agents/shout
	// HTTP+JSON 1.0 https://agents.example.com/agents/shout
	// JSONRPC 0.3 https://agents.example.com/agents/shout
	// HTTP+JSON 0.3 https://agents.example.com/agents/shout
}
