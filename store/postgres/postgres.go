// Package postgres is pactum's PostgreSQL task.Store, built on pgx and its
// connection pool (pgxpool). Several pactum nodes can share one database.
//
// Every operation that changes a task runs in one transaction on one pooled
// connection, sent as a few pipelines rather than one round trip per
// statement: the state change, its execution record and its audit entries
// commit together. A transition first locks the task's row (SELECT … FOR NO
// KEY UPDATE) and then updates it on the condition that it is still in the
// expected state, so two writers never both move a task. Claims lock queued
// rows with FOR NO KEY UPDATE SKIP LOCKED, so concurrent claimers, on any
// node, take different tasks without waiting for each other. Idempotency
// keys are rows under a primary key on (actor, key), taken with INSERT … ON
// CONFLICT: duplicate submits racing on several connections still create
// one task.
//
// The audit log is one hash chain whatever the number of writers, and
// writers do not wait for each other to extend it: a transaction writes its
// entries, unhashed, as one row of audit_pending_batches (sqlPend) in the
// pipeline that carries its COMMIT, and a sealer appends committed
// pending entries to the chain after the commit, in one transaction under
// an advisory lock and the head's row lock (sealPending). Each store runs
// a background sealer, woken by its own commits; readers of the chain
// (AuditEntries, AuditHead, ScanAudit) seal what is pending first. See
// docs/design.md, "Sealing the PostgreSQL audit chain after commit".
//
// A blocking submission's creation (task.CreateParams.Speculative) is
// left uncommitted for a moment (Options.SpeculativeHold) so that the
// task's next write joins its transaction and both commit at once;
// concurrent ones share that transaction, their keys in one round trip
// and their next writes with one COMMIT in another (a group, hold.go).
//
// A transaction that fails with a serialization failure or deadlock, or
// because its connection was lost before it was committed, is retried a
// few times (Options.Retries) on a fresh connection; a lost connection also
// makes the pool drop its other connections, which are likely dead too
// after a server restart. When the outcome of a commit is unknown (the
// connection broke while COMMIT was in flight) the error is returned, not
// retried.
//
// Store.Relay carries task events between the nodes that share a schema:
// NOTIFY on one channel per schema, sent in order by one goroutine per
// store, and a LISTEN on a connection of its own; events too large for a
// NOTIFY go through the event_payloads table.
//
// Importing the package registers the "postgres" and "postgresql" schemes
// with store.Open. See docs/postgres.md for the DSN, pool sizing,
// migrations and cross-node events.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/task"
)

func init() {
	d := store.Driver{
		Open: func(ctx context.Context, dsn string, opts store.Options) (task.Store, error) {
			s, err := OpenWith(ctx, dsn, Options{Logger: opts.Logger, SkipMigrate: opts.SkipMigrate, ReadOnly: opts.ReadOnly})
			if err != nil {
				return nil, err
			}
			return s, nil
		},
		Migrate: func(ctx context.Context, dsn string, opts store.Options) (int, error) {
			return Migrate(ctx, dsn, Options{Logger: opts.Logger})
		},
		Validate: ValidateDSN,
	}
	store.Register(Scheme, d)
	store.Register("postgresql", d)
}

// Scheme is the DSN scheme this driver registers: postgres://…. The
// "postgresql" scheme is registered too.
const Scheme = "postgres"

// DefaultStatementTimeout is the statement_timeout sessions get when neither
// the DSN nor Options.StatementTimeout sets one.
const DefaultStatementTimeout = 30 * time.Second

// DefaultIdleInTransactionTimeout is the idle_in_transaction_session_timeout
// sessions get when neither the DSN nor Options.IdleInTransactionTimeout
// sets one.
const DefaultIdleInTransactionTimeout = 10 * time.Second

// defaultRetries is Options.Retries' default.
const defaultRetries = 4

// Options configures a Store beyond its DSN.
type Options struct {
	// Logger receives the store's logs. Default: logs are discarded.
	Logger *slog.Logger
	// Schema is the schema that holds pactum's tables; every connection
	// uses it as its search_path, whatever the DSN says. Default: the DSN's
	// search_path, and without one the server's default (normally public);
	// the tables then live in its first existing schema. A schema named
	// here that does not exist is created by the migration.
	Schema string
	// SkipMigrate, when set, makes Open check the schema version instead of
	// migrating: a database that is not exactly at SchemaVersion is refused
	// (run Migrate, or `pactum migrate`, first). Default false: Open applies
	// the pending migrations.
	SkipMigrate bool
	// ReadOnly opens the store for reading: it implies SkipMigrate, and
	// every session defaults to read-only transactions
	// (default_transaction_read_only), so a write fails in PostgreSQL.
	// Default false.
	ReadOnly bool
	// StatementTimeout is the sessions' statement_timeout when the DSN sets
	// none (a statement_timeout parameter in the DSN wins). Default
	// DefaultStatementTimeout (30s); negative leaves the server's setting.
	StatementTimeout time.Duration
	// IdleInTransactionTimeout is the sessions'
	// idle_in_transaction_session_timeout when the DSN sets none: how long
	// the server lets a transaction wait for its client before ending the
	// session. pactum's transactions never wait on anything but the network,
	// and one that seals audit entries holds the chain's head, which every
	// writer on every node needs, so a client that hangs mid-transaction
	// (frozen, or cut off without the connection being reset) must not keep
	// it long. Default DefaultIdleInTransactionTimeout (10s); negative
	// leaves the server's setting.
	IdleInTransactionTimeout time.Duration
	// Retries is how many times a transaction is run again after a
	// serialization failure, a deadlock or a connection lost before
	// commit, with a short growing pause. Default 4; negative: never.
	Retries int
	// SealEvery is how often the store's background sealer looks for audit
	// entries left pending by transactions of other stores (nodes) that
	// did not get to seal them; it seals its own store's entries as soon as
	// they commit. Default DefaultSealEvery (50ms); negative: no background
	// sealer (the entries are sealed by other stores' sealers and by
	// readers, see Store.Seal). A ReadOnly store has none.
	SealEvery time.Duration
	// SpeculativeHold is how long a speculative creation's transaction
	// (task.CreateParams.Speculative, a blocking submission's) is left
	// open for the task's next write, so that both commit together: an
	// agent that answers within it costs one commit instead of two.
	// Concurrent speculative creations share one transaction (a group),
	// which commits when all their tasks' next writes arrived, or a hold
	// after its creations were answered or its last write, and at the
	// latest five holds after they were answered; a creation nothing
	// wrote by then is committed as created. Each open group keeps one
	// pooled connection. Default DefaultSpeculativeHold (1ms); negative:
	// every creation commits before CreateTask returns.
	SpeculativeHold time.Duration
	// Now is the clock used where the caller passes no time (AppendAudit,
	// DeletePushConfig). Default: time.Now, in UTC, truncated to the
	// microsecond.
	Now func() time.Time
}

func (o *Options) setDefaults() {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.StatementTimeout == 0 {
		o.StatementTimeout = DefaultStatementTimeout
	}
	if o.IdleInTransactionTimeout == 0 {
		o.IdleInTransactionTimeout = DefaultIdleInTransactionTimeout
	}
	switch {
	case o.Retries == 0:
		o.Retries = defaultRetries
	case o.Retries < 0:
		o.Retries = 0
	}
	if o.SealEvery == 0 {
		o.SealEvery = DefaultSealEvery
	}
	if o.SpeculativeHold == 0 {
		o.SpeculativeHold = DefaultSpeculativeHold
	}
	if o.Now == nil {
		o.Now = func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
	}
}

// Store is the PostgreSQL task.Store. It is safe for concurrent use, also
// by several processes sharing one database.
type Store struct {
	pool    *pgxpool.Pool
	log     *slog.Logger
	now     func() time.Time
	schema  string
	retries int
	// readOnly: the store cannot seal (Options.ReadOnly).
	readOnly bool
	// sealer is the background sealer (sealer.go), nil when there is none.
	sealer *sealer
	// hold is Options.SpeculativeHold (not positive: no holds). heldMu
	// guards held and byKey, the speculative creations whose transaction
	// is open (or being begun, in a group), by task ID and by idempotency
	// key; forming, the group whose keys are not sent yet; keying, set
	// while a group's keys are being sent; and holdClosed, set by Close
	// (hold.go). collisions counts the creations that waited for an open
	// one with their task ID or key.
	hold       time.Duration
	heldMu     sync.Mutex
	held       map[string]*held
	byKey      map[heldKey]*held
	forming    *group
	keying     bool
	holdClosed bool
	collisions atomic.Int64

	closeOnce sync.Once
	// relayMu guards relay, made by the first Relay call, and closed, set
	// by Close (relay.go).
	relayMu sync.Mutex
	relay   *relay
	closed  bool
	// wire counts the round trips and statements sent (WireStats).
	wire *wireCounter
}

var _ task.Store = (*Store)(nil)

// Open connects to the database a postgres:// (or postgresql://) data
// source name names, migrates it to the newest schema and returns the
// store. The DSN is pgx's: libpq's parameters plus the pool's
// (pool_max_conns, pool_min_conns, pool_max_conn_lifetime, …); any other
// parameter, such as search_path or statement_timeout, is sent to the server
// as a session setting. A nil logger discards logs.
func Open(ctx context.Context, dsn string, logger *slog.Logger) (*Store, error) {
	return OpenWith(ctx, dsn, Options{Logger: logger})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, dsn string, opts Options) (*Store, error) {
	opts.setDefaults()
	if opts.ReadOnly {
		opts.SkipMigrate = true
	}
	cfg, err := poolConfig(dsn, &opts)
	if err != nil {
		return nil, err
	}
	target := describe(cfg.ConnConfig)
	wire := &wireCounter{}
	wire.install(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open %s: %w", target, err)
	}
	s := &Store{pool: pool, wire: wire, log: opts.Logger, now: opts.Now, retries: opts.Retries, readOnly: opts.ReadOnly,
		hold: opts.SpeculativeHold, held: map[string]*held{}, byKey: map[heldKey]*held{}}
	ok := false
	defer func() {
		if !ok {
			pool.Close()
		}
	}()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: open %s: %w", target, err)
	}
	if opts.SkipMigrate {
		s.schema, err = resolveSchema(ctx, conn.Conn(), opts.Schema)
		if err == nil {
			err = checkVersion(ctx, conn.Conn())
		}
	} else {
		s.schema, _, err = migrate(ctx, conn.Conn(), opts.Schema, opts.Logger)
	}
	conn.Release()
	if err != nil {
		return nil, fmt.Errorf("postgres: open %s: %w", target, err)
	}
	ok = true
	if !opts.ReadOnly && opts.SealEvery > 0 {
		s.startSealer(opts.SealEvery)
	}
	s.log.Info("postgres store opened", slog.String("target", target), slog.String("schema", s.schema),
		slog.Int("max_conns", int(cfg.MaxConns)), slog.String("statement_timeout", cfg.ConnConfig.RuntimeParams["statement_timeout"]))
	return s, nil
}

// Close commits the speculative creations still held open, stops the
// event relay, if one was started, and the background sealer, and closes
// the pool, waiting for connections in use to be released. Audit entries
// not sealed yet stay pending for the sealer of another store, or of this
// database's next one. Closing twice is safe.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.commitAllHeld()
		s.closeRelay()
		s.stopSealer()
		s.pool.Close()
	})
	return nil
}

// Pool returns the store's connection pool, for health checks and for
// features that need their own connection (LISTEN). Do not write pactum's
// tables through it.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Schema returns the schema that holds the store's tables.
func (s *Store) Schema() string { return s.schema }

// ValidateDSN checks dsn as Open parses it (poolConfig, with the default
// options) without connecting: a postgres:// or postgresql:// URL that pgx
// accepts. Errors never repeat the password.
func ValidateDSN(dsn string) error {
	var opts Options
	opts.setDefaults()
	_, err := poolConfig(dsn, &opts)
	return err
}

// poolConfig parses dsn and applies opts: the search_path of opts.Schema,
// the default timeouts and application_name.
func poolConfig(dsn string, opts *Options) (*pgxpool.Config, error) {
	scheme, _, _ := strings.Cut(dsn, "://")
	switch strings.ToLower(scheme) {
	case "postgres", "postgresql":
	default:
		// pgx also takes key=value strings; pactum wants a URL, whose scheme
		// picks the driver.
		return nil, errors.New("postgres: data source name must start with postgres:// or postgresql://")
	}
	// pgx wants the scheme in lower case; pactum's DSNs take it in any case.
	dsn = strings.ToLower(scheme) + dsn[len(scheme):]
	// pgx redacts the password from its parse errors.
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	rp := cfg.ConnConfig.RuntimeParams
	if opts.Schema != "" {
		rp["search_path"] = quoteIdent(opts.Schema)
	}
	setDuration := func(param string, d time.Duration) {
		if _, set := rp[param]; !set && d > 0 {
			rp[param] = fmt.Sprintf("%dms", max(1, d.Milliseconds()))
		}
	}
	setDuration("statement_timeout", opts.StatementTimeout)
	setDuration("idle_in_transaction_session_timeout", opts.IdleInTransactionTimeout)
	if _, set := rp["application_name"]; !set {
		rp["application_name"] = "pactum"
	}
	if opts.ReadOnly {
		rp["default_transaction_read_only"] = "on"
	}
	return cfg, nil
}

// describe names a connection target for logs and errors, without the
// password.
func describe(c *pgx.ConnConfig) string {
	return fmt.Sprintf("%s@%s:%d/%s", c.User, c.Host, c.Port, c.Database)
}

// quoteIdent quotes an SQL identifier.
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
