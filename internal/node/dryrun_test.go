package node_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/node"
	"github.com/pactum/pactum/internal/syncbuf"
)

// TestSensitiveSimulationByDefault: a sensitive agent whose action no
// approval covers runs as a simulation unless it sets dry_run: false; with
// an approval covering it, it runs for real. The agent is an exec runtime
// that creates a file, so "did it run" is whether the file exists.
func TestSensitiveSimulationByDefault(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		dryRun  string // the agent's dry_run line, if any
		policy  string
		refs    bool // the call cites policy 1 and approval APR-1
		state   string
		code    string
		reason  string // a substring of the answer's reason
		ran     bool
		warning bool
	}{
		{name: "no policy: simulation", state: "succeeded", reason: "simulation (dry run)", warning: true},
		{name: "no policy, refs cited: simulation", refs: true, state: "succeeded", reason: "simulation (dry run)", warning: true},
		{name: "approval for another action: simulation", policy: "policy: {approvals: [{id: APR-9, actions: [other]}]}",
			state: "succeeded", reason: "simulation (dry run)", warning: true},
		{name: "dry_run false, no policy: refused", dryRun: "dry_run: false", state: "failed", code: "approval_required"},
		{name: "dry_run false, no policy, refs cited: refused", dryRun: "dry_run: false", refs: true, state: "failed", code: "policy_denied"},
		{name: "approval covers it: runs", policy: "policy: {approvals: [{id: APR-1, actions: [deploy]}]}", refs: true, state: "succeeded", ran: true},
		{name: "approval covers it, no refs: refused", policy: "policy: {approvals: [{id: APR-1, actions: [deploy]}]}", state: "failed", code: "approval_required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			marker := filepath.Join(dir, "deployed")
			yaml := fmt.Sprintf(`agents:
  - name: deploy
    type: exec
    sensitive: true
    %s
    exec:
      command: [touch, %q]
      input: none
  - {name: other, type: echo, sensitive: true, dry_run: false}
%s
`, tc.dryRun, marker, tc.policy)
			logs := &syncbuf.Buffer{}
			base := startLogged(t, dir, yaml, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})))

			args := map[string]any{"agent": "deploy", "text": "ship it", "wait": true}
			if tc.refs {
				args["policy_ref"], args["approval_ref"] = "1", "APR-1"
			}
			out := callSubmit(t, base, args)
			state, _ := out["state"].(string)
			code, _ := out["error_code"].(string)
			reason, _ := out["reason"].(string)
			if state != tc.state || code != tc.code || !strings.Contains(reason, tc.reason) {
				t.Errorf("answer: state %q, error_code %q, reason %q; want %q, %q, a reason with %q", state, code, reason, tc.state, tc.code, tc.reason)
			}
			if tc.reason != "" {
				if text := fmt.Sprint(out["artifacts"]); !strings.Contains(text, `simulation (dry run): action "deploy" was not performed`) {
					t.Errorf("the simulation's artifacts do not say so: %s", text)
				}
			}
			_, err := os.Stat(marker)
			if ran := err == nil; ran != tc.ran {
				t.Errorf("the agent ran: %v, want %v (stat: %v)", ran, tc.ran, err)
			} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Fatal(err)
			}
			warned := strings.Contains(logs.String(), "sensitive agent runs as a simulation") &&
				strings.Contains(logs.String(), "agent=deploy") && strings.Contains(logs.String(), "dry_run: false")
			if warned != tc.warning {
				t.Errorf("start-up warning naming deploy and dry_run: false: %v, want %v; log:\n%s", warned, tc.warning, logs.String())
			}
			if strings.Contains(logs.String(), "agent=other") {
				t.Errorf("a warning names agent other, whose dry_run: false is explicit:\n%s", logs.String())
			}
		})
	}
}

// startLogged is startServer with the node's log going to log.
func startLogged(t *testing.T, dir, yaml string, log *slog.Logger) string {
	t.Helper()
	base, _ := startIn(t, dir, "dry.yaml", yaml, log)
	return base
}

// startIn serves yaml (after a listen: on a free loopback port and a
// store: in dir) as a node whose relative paths resolve in dir, until the
// test ends; name is the configuration's file name in its errors. It
// returns the node's base URL and the node.
func startIn(t *testing.T, dir, name, yaml string, log *slog.Logger) (string, *node.Server) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf("listen: %s\nstore: %q\n%s", ln.Addr(), "sqlite://"+filepath.Join(dir, "pactum.db"), yaml)
	cfg, err := config.Parse([]byte(src), name)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := node.New(ctx, cfg, dir, nil, log)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.ServeListener(ctx, ln, 10*time.Second) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return "http://" + ln.Addr().String(), srv
}

// callSubmit calls MCP submit_task and returns its structured answer.
func callSubmit(t *testing.T, base string, args map[string]any) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer session.Close()
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "submit_task", Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("submit_task: %v %+v", err, res)
	}
	out, ok := res.StructuredContent.(map[string]any)
	if !ok {
		t.Fatalf("submit_task answered %T", res.StructuredContent)
	}
	return out
}
