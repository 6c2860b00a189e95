package mcpserver_test

import (
	"bufio"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/pactum/pactum/internal/syncbuf"
)

// TestSDKSessionLogsAreDebug: an MCP call over HTTP logs the go-sdk's
// session life (connecting, connected, disconnected) at DEBUG, not INFO:
// a node at the default level logs nothing per call.
func TestSDKSessionLogsAreDebug(t *testing.T) {
	t.Parallel()
	var logs syncbuf.Buffer
	b := setup(t, func(c *setupConfig) {
		c.opts.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	for range 2 {
		if code, body := post(t, b.url, "", ""); code != 200 {
			t.Fatalf("initialize: %d %s", code, body)
		}
	}
	cs := b.connect(t, nil)
	if _, err := cs.ListTools(testCtx(t), nil); err != nil {
		t.Fatal(err)
	}
	_ = cs.Close()

	session := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(logs.String()))
	for sc.Scan() {
		var rec struct{ Level, Msg string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q", sc.Text())
		}
		if rec.Level == "INFO" {
			t.Errorf("an MCP call logged at INFO: %s", sc.Text())
		}
		if strings.HasPrefix(rec.Msg, "server ") && rec.Level == "DEBUG" {
			session[rec.Msg] = true
		}
	}
	for _, msg := range []string{"server connecting", "server session connected", "server session disconnected"} {
		if !session[msg] {
			t.Errorf("no DEBUG record %q; logs:\n%s", msg, logs.String())
		}
	}

	// At INFO, the level a node logs at by default, the calls log nothing.
	var quiet syncbuf.Buffer
	b = setup(t, func(c *setupConfig) {
		c.opts.Logger = slog.New(slog.NewTextHandler(&quiet, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	if code, body := post(t, b.url, "", ""); code != 200 {
		t.Fatalf("initialize: %d %s", code, body)
	}
	if quiet.String() != "" {
		t.Errorf("an MCP call at level INFO logged:\n%s", quiet.String())
	}
}
