// Package store picks a task.Store driver by the scheme of a data source
// name: "sqlite://pactum.db" opens the embedded SQLite driver,
// "postgres://…" the PostgreSQL one once it exists.
//
// Drivers live in subpackages (store/sqlite, store/postgres) and register
// their scheme from an init function, the way database/sql drivers do, so a
// program links only the drivers it imports:
//
//	import (
//		"github.com/pactum/pactum/store"
//		_ "github.com/pactum/pactum/store/sqlite"
//	)
//
//	s, err := store.Open(ctx, "sqlite://pactum.db", logger)
//
// store/storetest is the conformance suite every driver passes.
package store

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/pactum/pactum/task"
)

// OpenFunc opens a driver's store for dsn (the whole data source name,
// scheme included). logger is never nil.
type OpenFunc func(ctx context.Context, dsn string, logger *slog.Logger) (task.Store, error)

var (
	mu      sync.RWMutex
	drivers = map[string]OpenFunc{}
)

// Register makes a driver available to Open under scheme (the part of a DSN
// before "://", matched case-insensitively). Drivers call it from an init
// function. Registering a scheme twice, an empty scheme or a nil OpenFunc
// panics.
func Register(scheme string, open OpenFunc) {
	scheme = strings.ToLower(scheme)
	if scheme == "" || strings.Contains(scheme, ":") {
		panic(fmt.Sprintf("store: invalid scheme %q", scheme))
	}
	if open == nil {
		panic(fmt.Sprintf("store: nil OpenFunc for scheme %q", scheme))
	}
	mu.Lock()
	defer mu.Unlock()
	if _, dup := drivers[scheme]; dup {
		panic(fmt.Sprintf("store: scheme %q registered twice", scheme))
	}
	drivers[scheme] = open
}

// Schemes returns the registered schemes, sorted.
func Schemes() []string {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]string, 0, len(drivers))
	for k := range drivers {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Open opens the store that dsn names, choosing the driver by its scheme
// ("sqlite://pactum.db"). A nil logger discards logs.
func Open(ctx context.Context, dsn string, logger *slog.Logger) (task.Store, error) {
	scheme, _, ok := strings.Cut(dsn, "://")
	if !ok || scheme == "" {
		return nil, fmt.Errorf("store: data source name %q has no scheme (want scheme://…; known schemes: %s)", redact(dsn), known())
	}
	scheme = strings.ToLower(scheme)
	mu.RLock()
	open, ok := drivers[scheme]
	mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("store: unknown scheme %q in data source name (known schemes: %s; is the driver package imported?)", scheme, known())
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s, err := open(ctx, dsn, logger)
	if err != nil {
		return nil, fmt.Errorf("store: open %s store: %w", scheme, err)
	}
	return s, nil
}

func known() string {
	s := Schemes()
	if len(s) == 0 {
		return "none registered"
	}
	return strings.Join(s, ", ")
}

// redact hides a password in a DSN such as postgres://user:secret@host/db
// before it goes into an error message.
func redact(dsn string) string {
	at := strings.LastIndex(dsn, "@")
	if at < 0 {
		return dsn
	}
	userinfo := dsn[:at]
	if i := strings.Index(userinfo, "://"); i >= 0 {
		userinfo = userinfo[i+3:]
	}
	if _, _, hasPass := strings.Cut(userinfo, ":"); !hasPass {
		return dsn
	}
	user, _, _ := strings.Cut(userinfo, ":")
	prefix := dsn[:at-len(userinfo)]
	return prefix + user + ":xxxxx" + dsn[at:]
}
