package mcpagent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/agenttest"
	"github.com/pactum/pactum/agent/internal/header"
	"github.com/pactum/pactum/task"
)

func TestSettingsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, settings, want string
	}{
		{"nothing", "", "command or url: one is required"},
		{"both", "command: node\nurl: http://localhost/mcp\ntool: t", "command and url: set one, not both"},
		{"no tool", "command: node", "tool: required"},
		{"blank tool", "command: node\ntool: ' '", "tool: required"},
		{"unknown key", "command: node\ntool: t\ncomand: x", "comand"},
		{"blank command", "command: ' '\ntool: t", "command: must not be blank"},
		{"headers with command", "command: node\ntool: t\nheaders: {A: b}", "headers: only with url"},
		{"args with url", "url: http://localhost/mcp\ntool: t\nargs: [a]", "args: only with command"},
		{"env with url", "url: http://localhost/mcp\ntool: t\nenv: {A: b}", "env: only with command"},
		{"dir with url", "url: http://localhost/mcp\ntool: t\ndir: /tmp", "dir: only with command"},
		{"inherit_env with url", "url: http://localhost/mcp\ntool: t\ninherit_env: false", "inherit_env: only with command"},
		{"scheme", "url: ftp://localhost/mcp\ntool: t", `url: scheme must be http or https, not "ftp"`},
		{"no host", "url: http:///mcp\ntool: t", "url: missing host"},
		{"credentials", "url: http://u:p@localhost/mcp\ntool: t", "url: credentials in the URL are not supported"},
		{"reserved header", "url: http://localhost/mcp\ntool: t\nheaders: {Mcp-Session-Id: x}", "headers.Mcp-Session-Id: set by the MCP transport"},
		{"bad header name", "url: http://localhost/mcp\ntool: t\nheaders: {'a b': x}", "headers.a b: not a valid header name"},
		{"unset variable", "command: node\ntool: t\nenv: {TOKEN: '${PACTUM_MCP_TEST_UNSET}'}", "env.TOKEN: environment variable PACTUM_MCP_TEST_UNSET is not set"},
		{"unset header variable", "url: http://localhost/mcp\ntool: t\nheaders: {Authorization: 'Bearer ${PACTUM_MCP_TEST_UNSET}'}", "headers.Authorization: environment variable PACTUM_MCP_TEST_UNSET is not set"},
		{"bad env name", "command: node\ntool: t\nenv: {'A=B': x}", `env: invalid variable name "A=B"`},
		{"missing dir", "command: node\ntool: t\ndir: /nonexistent/pactum-mcp", "dir: stat /nonexistent/pactum-mcp"},
		{"blank argument", "command: node\ntool: t\nargument: ' '", "argument: must not be blank"},
		{"negative backoff", "command: node\ntool: t\nrestart_backoff: -1s", "restart_backoff: must not be negative"},
		{"backoff order", "command: node\ntool: t\nrestart_backoff: 2s\nmax_restart_backoff: 1s", "max_restart_backoff: must not be less than restart_backoff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := agent.New(t.Context(), agenttest.Spec(t, Type, tt.settings))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("agent.New(%q) error = %v, want it to contain %q", tt.settings, err, tt.want)
			}
		})
	}
}

func TestSettingsDefaultsAndDir(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	if err := os.Mkdir(filepath.Join(base, "srv"), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := agenttest.Spec(t, Type, "command: ./server\ntool: t\ndir: srv\narguments: {mode: fast, n: 2}")
	spec.BaseDir = base
	a, err := agent.New(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close(a)
	r := a.(*Runtime)
	if r.s.Dir != filepath.Join(base, "srv") {
		t.Errorf("dir = %q, want it relative to the configuration's directory", r.s.Dir)
	}
	if r.s.RestartBackoff != time.Second || r.s.MaxRestartBackoff != 30*time.Second {
		t.Errorf("backoff = %s..%s, want the defaults", r.s.RestartBackoff, r.s.MaxRestartBackoff)
	}
	if r.s.Arguments["mode"] != "fast" || r.s.Arguments["n"] != 2 {
		t.Errorf("arguments = %#v", r.s.Arguments)
	}
	// Building starts nothing.
	if r.sess != nil {
		t.Error("a session was started by New")
	}
	md := agent.MetadataOf(a)
	if md.Type != "mcp" || md.Description != "Calls the MCP tool t of ./server" || !md.Streaming {
		t.Errorf("metadata = %+v", md)
	}
}

func TestHeadersAreRedacted(t *testing.T) {
	t.Parallel()
	s := Settings{URL: "http://localhost/mcp", Tool: "t", Headers: Headers{"Authorization": "Bearer hunter2"}}
	for _, out := range []string{fmt.Sprint(s), fmt.Sprintf("%+v", s), fmt.Sprintf("%#v", s)} {
		if strings.Contains(out, "hunter2") {
			t.Errorf("formatted settings reveal a header value: %s", out)
		}
	}
}

func TestExpandHeaders(t *testing.T) {
	t.Parallel()
	lookup := func(name string) (string, bool) {
		if name == "TOKEN" {
			return "s3cret", true
		}
		return "", false
	}
	h, err := header.Expand(Headers{"Authorization": "Bearer ${TOKEN}", "X-Price": "$5"}, lookup, "MCP", reservedHeaders)
	if err != nil {
		t.Fatal(err)
	}
	if h.Get("Authorization") != "Bearer s3cret" || h.Get("X-Price") != "$5" {
		t.Errorf("headers = %v", h)
	}
	_, err = header.Expand(Headers{"X-Bad": "${TOKEN}\r\nInjected: yes"}, lookup, "MCP", reservedHeaders)
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("a value with a line break: err = %v, want an error that does not quote the value", err)
	}
}

func TestCommandThatCannotStartIsPermanent(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"/nonexistent/pactum-mcp-server", "pactum-no-such-mcp-server"} {
		b := setup(t, fmt.Sprintf("command: %s\ntool: t", cmd))
		_, err := b.invoke(t, "x")
		wantPermanent(t, err, task.CodeInvalidArgument, "cannot start")
	}
}

// TestCrashLoopBacksOff: a server that dies at once fails each attempt
// retryably, quoting its exit status and standard error. The first restart
// is immediate; after that, a restart later than the attempt's deadline
// fails the attempt at once instead of starting the server again.
func TestCrashLoopBacksOff(t *testing.T) {
	t.Parallel()
	b := setup(t, "command: sh\nargs: [-c, 'echo boom >&2; exit 3']\ntool: t\nrestart_backoff: 1h")
	for i := range 2 {
		_, err := b.invoke(t, "x")
		wantRetryable(t, err, task.CodeUnavailable, "start sh", "exit status 3", "boom")
		if i == 0 && strings.Contains(err.Error(), "restart delayed") {
			t.Errorf("first restart was delayed: %v", err)
		}
	}
	_, err := b.invoke(t, "x")
	wantRetryable(t, err, task.CodeUnavailable, "restart delayed", "2 failures in a row", "boom")
	if n := strings.Count(b.logs.String(), "mcp: session started"); n != 0 {
		t.Errorf("sessions started = %d", n)
	}
}
