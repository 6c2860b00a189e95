// Command webhook-server is the endpoint examples/webhook.yaml talks to: it
// answers every POST /webhook with {"output": "..."}, the input in capitals.
// The input is the "input" field of a JSON body, or the whole body.
//
//	go run ./examples/webhook-server [-addr 127.0.0.1:9100]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9100", "listen address")
	flag.Parse()

	mux := http.NewServeMux()
	mux.HandleFunc("POST /webhook", handle)
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Printf("webhook-server listening on http://%s/webhook", *addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

// handle answers {"output": INPUT in capitals}.
func handle(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	input := string(body)
	var req struct {
		Input *string `json:"input"`
	}
	if json.Unmarshal(body, &req) == nil && req.Input != nil {
		input = *req.Input
	}
	log.Printf("%s %s: %q", r.Method, r.URL.Path, input)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"output": strings.ToUpper(input)})
}
