package mcpserver

import (
	"context"
	"log/slog"
)

// sdkLogger returns the logger handed to the go-sdk: l with the SDK's
// INFO records lowered to DEBUG. The SDK logs the life of every session
// at INFO ("server connecting", "server session connected", "server
// session disconnected"): in stateless HTTP mode that is three lines per
// tool call, which would drown a node's own INFO lines (a task settled,
// the node serving). Its warnings and errors keep their level.
func sdkLogger(l *slog.Logger) *slog.Logger {
	return slog.New(demoteInfo{l.Handler()})
}

// demoteInfo is a slog.Handler that passes INFO records on as DEBUG.
type demoteInfo struct{ h slog.Handler }

func (d demoteInfo) level(l slog.Level) slog.Level {
	if l == slog.LevelInfo {
		return slog.LevelDebug
	}
	return l
}

func (d demoteInfo) Enabled(ctx context.Context, l slog.Level) bool {
	return d.h.Enabled(ctx, d.level(l))
}

func (d demoteInfo) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelInfo {
		r.Level = slog.LevelDebug
		if !d.h.Enabled(ctx, r.Level) {
			return nil
		}
	}
	return d.h.Handle(ctx, r)
}

func (d demoteInfo) WithAttrs(attrs []slog.Attr) slog.Handler {
	return demoteInfo{d.h.WithAttrs(attrs)}
}

func (d demoteInfo) WithGroup(name string) slog.Handler {
	return demoteInfo{d.h.WithGroup(name)}
}
