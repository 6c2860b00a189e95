package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/pactum/pactum/task"
)

func TestToToolError(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.DiscardHandler)
	ctx := context.Background()
	cases := []struct {
		err  error
		code string
		msg  string
	}{
		{task.Errorf(task.CodeNotFound, "task x not found"), "not_found", "task x not found"},
		{fmt.Errorf("list tasks: %w", task.Errorf(task.CodeInvalidArgument, "bad token")), "invalid_argument", "list tasks: bad token"},
		{fmt.Errorf("get: %w", task.ErrNotFound), "not_found", "get: not found"},
		{task.Errorf(task.CodeAgentFailed, "secret detail"), "internal", "internal error (ref "},
		{errors.New("disk on fire at /var/lib/pactum.db"), "internal", "internal error (ref "},
		{context.Canceled, "unavailable", "canceled"},
		{invalidArgument("x is %d", 1), "invalid_argument", "x is 1"},
	}
	for _, c := range cases {
		te := toToolError(ctx, log, "tool", c.err)
		if te.info.Code != c.code || !strings.Contains(te.info.Message, c.msg) {
			t.Errorf("toToolError(%v) = %+v, want %s with %q", c.err, te.info, c.code, c.msg)
		}
		if c.code == "internal" && (te.info.Ref == "" || strings.Contains(te.info.Message, "detail") || strings.Contains(te.info.Message, "fire")) {
			t.Errorf("internal error %+v leaks its cause or has no reference", te.info)
		}
	}
}

func TestAgentToolName(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"echo":                   "agent_echo",
		"code-review.v2":         "agent_code-review.v2",
		"ops/tool name":          "agent_ops_tool_name",
		"résumé":                 "agent_r_sum_",
		"":                       "agent_",
		strings.Repeat("x", 200): "agent_" + strings.Repeat("x", 122),
	}
	for in, want := range cases {
		if got := AgentToolName(in); got != want {
			t.Errorf("AgentToolName(%q) = %q, want %q", in, got, want)
		}
	}
}
