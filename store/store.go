// Package store picks a task.Store driver by the scheme of a data source
// name: "sqlite://pactum.db" opens the embedded SQLite driver,
// "postgres://…" the PostgreSQL one.
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
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/pactum/pactum/task"
)

// Options are what every driver understands besides its DSN.
type Options struct {
	// Logger receives the store's logs; never nil when a driver sees it.
	Logger *slog.Logger
	// SkipMigrate makes Open check the schema instead of migrating it: a
	// database not at the binary's schema version is refused (run Migrate,
	// `pactum migrate`, first).
	SkipMigrate bool
	// ReadOnly opens the store for reading only: a missing store is an
	// error (ErrNoStore) instead of being created, no migration runs (a
	// schema older than the binary's is refused, not upgraded) and every
	// write fails with ErrReadOnly. SQLite opens the file with mode=ro (or
	// immutable=1 where a read-only directory leaves no other way), so a
	// store on a read-only file or directory can be read; PostgreSQL
	// sessions default to read-only transactions. It implies SkipMigrate.
	// Default false.
	ReadOnly bool
	// SkipIntegrityCheck opens the store without its integrity check at
	// open (SQLite's PRAGMA quick_check, which reads the whole file): for
	// callers that only glance at it and must answer at once, such as shell
	// completion. A corrupt store then fails on the reads that reach the
	// damage instead of at open. Default false: every open is checked.
	SkipIntegrityCheck bool
}

// Errors drivers return for conditions callers test.
var (
	// ErrNoStore is returned by a read-only Open when the store does not
	// exist (a read-only open never creates one).
	ErrNoStore = errors.New("no store there")
	// ErrReadOnly is returned by a write to a store opened ReadOnly.
	ErrReadOnly = errors.New("store is open read-only")
	// ErrCorrupt is returned by Open when the store fails its integrity
	// check (SQLite's PRAGMA quick_check): it is not served.
	ErrCorrupt = errors.New("store is corrupt")
)

// Driver is what a store driver registers.
type Driver struct {
	// Open opens the store dsn names (the whole data source name, scheme
	// included), migrating its schema unless opts.SkipMigrate.
	Open func(ctx context.Context, dsn string, opts Options) (task.Store, error)
	// Migrate brings the schema to the binary's version and returns how many
	// migrations it applied.
	Migrate func(ctx context.Context, dsn string, opts Options) (int, error)
	// Validate, when set, checks dsn exactly as Open parses it, without
	// opening, creating or connecting to anything (`pactum config check`).
	Validate func(dsn string) error
}

var (
	mu      sync.RWMutex
	drivers = map[string]Driver{}
)

// Register makes a driver available to Open under scheme (the part of a DSN
// before "://", matched case-insensitively). Drivers call it from an init
// function. Registering a scheme twice, an empty scheme or a driver without
// Open or Migrate panics.
func Register(scheme string, d Driver) {
	scheme = strings.ToLower(scheme)
	if scheme == "" || strings.Contains(scheme, ":") {
		panic(fmt.Sprintf("store: invalid scheme %q", scheme))
	}
	if d.Open == nil || d.Migrate == nil {
		panic(fmt.Sprintf("store: driver for scheme %q lacks Open or Migrate", scheme))
	}
	mu.Lock()
	defer mu.Unlock()
	if _, dup := drivers[scheme]; dup {
		panic(fmt.Sprintf("store: scheme %q registered twice", scheme))
	}
	drivers[scheme] = d
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

// Open opens the store that dsn names ("sqlite://pactum.db"), choosing the
// driver by its scheme and migrating the schema. A nil logger discards logs.
func Open(ctx context.Context, dsn string, logger *slog.Logger) (task.Store, error) {
	return OpenWith(ctx, dsn, Options{Logger: logger})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, dsn string, opts Options) (task.Store, error) {
	scheme, d, err := driver(dsn)
	if err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s, err := d.Open(ctx, dsn, opts)
	if err != nil {
		return nil, fmt.Errorf("store: open %s store: %w", scheme, err)
	}
	return s, nil
}

// Validate checks dsn the way Open would before it touches anything: a
// known scheme, and the driver's own parsing of the rest (an unknown SQLite
// parameter, a malformed PostgreSQL URL). It opens, creates and connects to
// nothing, so it may run where the database is out of reach. Drivers that
// register no Validate are checked for their scheme only.
func Validate(dsn string) error {
	scheme, d, err := driver(dsn)
	if err != nil {
		return err
	}
	if d.Validate == nil {
		return nil
	}
	if err := d.Validate(dsn); err != nil {
		return fmt.Errorf("store: invalid %s data source name: %w", scheme, err)
	}
	return nil
}

// Migrate brings the schema of the store dsn names to this binary's version
// and returns how many migrations it applied.
func Migrate(ctx context.Context, dsn string, logger *slog.Logger) (int, error) {
	scheme, d, err := driver(dsn)
	if err != nil {
		return 0, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	n, err := d.Migrate(ctx, dsn, Options{Logger: logger})
	if err != nil {
		return n, fmt.Errorf("store: migrate %s store: %w", scheme, err)
	}
	return n, nil
}

func driver(dsn string) (string, Driver, error) {
	scheme, _, ok := strings.Cut(dsn, "://")
	if !ok || scheme == "" {
		return "", Driver{}, fmt.Errorf("store: data source name %q has no scheme (want scheme://…; known schemes: %s)", Redact(dsn), known())
	}
	scheme = strings.ToLower(scheme)
	mu.RLock()
	d, ok := drivers[scheme]
	mu.RUnlock()
	if !ok {
		return "", Driver{}, fmt.Errorf("store: unknown scheme %q in data source name (known schemes: %s; is the driver package imported?)", scheme, known())
	}
	return scheme, d, nil
}

func known() string {
	s := Schemes()
	if len(s) == 0 {
		return "none registered"
	}
	return strings.Join(s, ", ")
}
