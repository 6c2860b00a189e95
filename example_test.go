package pactum_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/pactum/pactum"
)

// ExampleFunc serves a Go function as an A2A agent and calls it with the
// official A2A Go client, which discovers the agent from its card.
func ExampleFunc() {
	dir, err := os.MkdirTemp("", "pactum-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}

	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- pactum.Serve(ctx,
			pactum.Func("greeter", func(ctx context.Context, name string) (string, error) {
				return "hello, " + name, nil
			}),
			pactum.Listener(ln),
			pactum.Store("sqlite://"+filepath.Join(dir, "pactum.db")),
		)
	}()

	// Any A2A client: resolve the card, then send a message.
	card, err := agentcard.DefaultResolver.Resolve(ctx, "http://"+ln.Addr().String()+"/agents/greeter")
	if err != nil {
		log.Fatal(err)
	}
	client, err := a2aclient.NewFromCard(ctx, card)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Destroy()
	res, err := client.SendMessage(ctx, &a2a.SendMessageRequest{
		Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("world")),
	})
	if err != nil {
		log.Fatal(err)
	}
	tk := res.(*a2a.Task)
	fmt.Println(tk.Status.State)
	fmt.Println(tk.Artifacts[0].Parts[0].Text())

	stop() // Serve drains and returns
	if err := <-served; err != nil {
		log.Fatal(err)
	}
	// Output:
	// TASK_STATE_COMPLETED
	// hello, world
}

// ExampleHandler mounts pactum in an existing HTTP server next to the
// program's own routes. Cards advertise the address each request came to.
func ExampleHandler() {
	dir, err := os.MkdirTemp("", "pactum-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx, stop := context.WithCancel(context.Background())
	defer stop() // ends task execution and closes the store

	agents, err := pactum.Handler(ctx,
		pactum.Func("shout", func(ctx context.Context, in string) (string, error) {
			return strings.ToUpper(in) + "!", nil
		}),
		pactum.Store("sqlite://"+filepath.Join(dir, "pactum.db")),
	)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "the program's own route") })
	mux.Handle("/agents/", agents)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())

	card, err := agentcard.DefaultResolver.Resolve(ctx, "http://"+ln.Addr().String()+"/agents/shout")
	if err != nil {
		log.Fatal(err)
	}
	client, err := a2aclient.NewFromCard(ctx, card)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Destroy()
	res, err := client.SendMessage(ctx, &a2a.SendMessageRequest{
		Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello")),
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.(*a2a.Task).Artifacts[0].Parts[0].Text())
	// Output:
	// HELLO!
}

// ExampleAgentOption_Skills sets what an agent's card says from Go: its
// version, skills and media types. Any A2A client reads them from the
// card.
func ExampleAgentOption_Skills() {
	dir, err := os.MkdirTemp("", "pactum-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()

	agents, err := pactum.Handler(ctx,
		pactum.Func("greeter", func(ctx context.Context, in string) (string, error) {
			return "hello, " + in, nil
		}).
			Describe("Greets whoever it is given.").
			Version("1.4.0").
			Skills(pactum.Skill{ID: "greet", Name: "Greet", Examples: []string{"world"}}).
			InputModes("text/plain", "application/json"),
		pactum.Store("sqlite://"+filepath.Join(dir, "pactum.db")),
	)
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: agents}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())

	card, err := agentcard.DefaultResolver.Resolve(ctx, "http://"+ln.Addr().String()+"/agents/greeter")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(card.Name, card.Version)
	for _, s := range card.Skills {
		fmt.Printf("%s (%s): %s\n", s.ID, s.Name, s.Description)
	}
	fmt.Println(card.DefaultInputModes, card.DefaultOutputModes)
	// Output:
	// greeter 1.4.0
	// greet (Greet): Greets whoever it is given.
	// [text/plain application/json] [text/plain]
}
