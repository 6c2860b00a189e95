// Package sqlite is pactum's embedded task.Store: one SQLite file, no server,
// no cgo (modernc.org/sqlite; the build tag sqlite_cgo swaps in the cgo
// driver github.com/mattn/go-sqlite3, see driver_cgo.go).
//
// The database runs in WAL mode. All writes go through one connection that
// opens every transaction with BEGIN IMMEDIATE, so writers queue in the Go
// connection pool instead of failing with SQLITE_BUSY, and a transaction's
// reads and its conditional writes see no interleaving. Reads use a separate
// pool of read-only connections and never wait for the writer. A background
// goroutine checkpoints the write-ahead log every second, so commits do not
// pay for it and, with synchronous=normal, a power loss takes at most the
// last second's commits.
//
// Importing the package registers the "sqlite" scheme with store.Open. See
// docs/storage.md for the schema and what survives a crash.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/task"
)

func init() {
	store.Register(Scheme, store.Driver{
		Open: func(ctx context.Context, dsn string, opts store.Options) (task.Store, error) {
			cfg, err := ParseDSN(dsn)
			if err != nil {
				return nil, err
			}
			cfg.Logger, cfg.SkipMigrate, cfg.ReadOnly, cfg.SkipIntegrityCheck = opts.Logger, opts.SkipMigrate, opts.ReadOnly, opts.SkipIntegrityCheck
			s, err := New(ctx, cfg)
			if err != nil {
				return nil, err
			}
			return s, nil
		},
		Migrate: func(ctx context.Context, dsn string, opts store.Options) (int, error) {
			return Migrate(ctx, dsn, opts.Logger)
		},
		Validate: ValidateDSN,
	})
}

// ValidateDSN checks dsn as Open does before it opens the file: ParseDSN,
// then the checks New makes on the Config. It touches no file.
func ValidateDSN(dsn string) error {
	cfg, err := ParseDSN(dsn)
	if err != nil {
		return err
	}
	return cfg.validate()
}

// Scheme is the DSN scheme this driver registers: sqlite://path.
const Scheme = "sqlite"

// Synchronous is SQLite's synchronous setting: how often it waits for the
// disk. See docs/storage.md for what each one keeps after a power loss.
type Synchronous string

// Synchronous settings the store accepts.
const (
	// SyncNormal syncs the WAL at checkpoints only: committed transactions
	// survive a process crash; a power loss may lose the newest ones but
	// never corrupts the database.
	SyncNormal Synchronous = "normal"
	// SyncFull syncs the WAL on every commit: every committed transaction
	// survives a power loss too, at the cost of one fsync per commit.
	SyncFull Synchronous = "full"
)

// Config configures a Store. ParseDSN builds one from a data source name.
type Config struct {
	// Path is the database file. Required; relative paths are relative to
	// the working directory (a configuration file's store: is resolved
	// against the file's directory before it gets here, see config.Load).
	// The directory must exist; the file is created unless ReadOnly.
	Path string
	// Synchronous is the durability setting. Default SyncNormal.
	Synchronous Synchronous
	// BusyTimeout is how long a connection waits for a lock held by another
	// process before failing. Default 5s.
	BusyTimeout time.Duration
	// ReadConns bounds the read pool. Default max(4, GOMAXPROCS).
	ReadConns int
	// CheckpointInterval is how often a background connection copies the
	// write-ahead log into the database file (a PASSIVE checkpoint, which
	// never blocks readers or the writer). With SyncNormal this bounds what
	// a power loss can take: the commits since the last checkpoint. Default
	// 1s; negative leaves checkpoints to SQLite, which runs them inside
	// the commit that grows the log past 1000 pages.
	CheckpointInterval time.Duration
	// SpeculativeHold is how long the writer keeps a transaction open,
	// after it created a task speculatively (task.CreateParams
	// Speculative), for that task's next write, so that both commit
	// together. Writes that arrive meanwhile join the transaction and
	// wait for its commit, so this is also the most it delays them.
	// Default 1ms; negative commits at once.
	SpeculativeHold time.Duration
	// Logger receives the store's logs. Default: logs are discarded.
	Logger *slog.Logger
	// SkipMigrate makes New refuse a database whose schema is not current
	// instead of migrating it (run Migrate, `pactum migrate`, first).
	SkipMigrate bool
	// ReadOnly opens an existing database for reading only (store.Options
	// ReadOnly): a missing file is an error wrapping store.ErrNoStore, the
	// file is opened with mode=ro, or immutable=1 when SQLite cannot open
	// it otherwise (a WAL database in a read-only directory) and no
	// write-ahead log is pending, nothing is migrated or checkpointed, and
	// writes fail with store.ErrReadOnly. Default false.
	ReadOnly bool
	// SkipIntegrityCheck leaves out PRAGMA quick_check at open
	// (store.Options SkipIntegrityCheck). Default false.
	SkipIntegrityCheck bool
	// Now is the clock used where the caller passes no time (AppendAudit).
	// Default: time.Now, in UTC, truncated to the microsecond.
	Now func() time.Time
}

func (c *Config) validate() error {
	if c.Path == "" {
		return errors.New("sqlite: Config.Path is required")
	}
	if c.Path == ":memory:" || strings.HasPrefix(c.Path, "file:") || strings.Contains(c.Path, "?") {
		return fmt.Errorf("sqlite: Config.Path %q: want a plain file path (in-memory databases cannot share a write and a read pool)", c.Path)
	}
	switch c.Synchronous {
	case "":
		c.Synchronous = SyncNormal
	case SyncNormal, SyncFull:
	default:
		return fmt.Errorf("sqlite: Config.Synchronous %q: want %q or %q", c.Synchronous, SyncNormal, SyncFull)
	}
	switch {
	case c.BusyTimeout == 0:
		c.BusyTimeout = 5 * time.Second
	case c.BusyTimeout < 0:
		return fmt.Errorf("sqlite: Config.BusyTimeout %v is negative", c.BusyTimeout)
	}
	switch {
	case c.ReadConns == 0:
		c.ReadConns = max(4, runtime.GOMAXPROCS(0))
	case c.ReadConns < 0:
		return fmt.Errorf("sqlite: Config.ReadConns %d is negative", c.ReadConns)
	}
	if c.CheckpointInterval == 0 {
		c.CheckpointInterval = time.Second
	}
	if c.SpeculativeHold == 0 {
		c.SpeculativeHold = time.Millisecond
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
	}
	return nil
}

// ParseDSN parses a data source name (scheme in any case) of the form
//
//	sqlite://relative/path.db
//	sqlite:///absolute/path.db
//	sqlite://pactum.db?synchronous=full&busy_timeout=10s
//
// synchronous is "normal" (default) or "full"; busy_timeout is a Go
// duration or a number of milliseconds. The path is percent-decoded. Any
// other query parameter is an error.
func ParseDSN(dsn string) (Config, error) {
	var c Config
	// The scheme is case-insensitive, as store.Open matches it.
	scheme, rest, ok := strings.Cut(dsn, "://")
	if !ok || !strings.EqualFold(scheme, Scheme) {
		return c, fmt.Errorf("sqlite: data source name %q does not start with %s://", dsn, Scheme)
	}
	rawPath, rawQuery, _ := strings.Cut(rest, "?")
	p, err := url.PathUnescape(rawPath)
	if err != nil {
		return c, fmt.Errorf("sqlite: data source name %q: path: %w", dsn, err)
	}
	if p == "" {
		return c, fmt.Errorf("sqlite: data source name %q has no file path (want sqlite://file.db or sqlite:///abs/file.db)", dsn)
	}
	c.Path = p
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return c, fmt.Errorf("sqlite: data source name %q: query: %w", dsn, err)
	}
	for k, v := range q {
		if len(v) != 1 {
			return c, fmt.Errorf("sqlite: data source name %q: parameter %s given %d times", dsn, k, len(v))
		}
		switch val := v[0]; k {
		case "synchronous":
			s := Synchronous(strings.ToLower(val))
			if s != SyncNormal && s != SyncFull {
				return c, fmt.Errorf("sqlite: data source name %q: synchronous=%q: want normal or full", dsn, val)
			}
			c.Synchronous = s
		case "busy_timeout":
			d, err := parseTimeout(val)
			if err != nil {
				return c, fmt.Errorf("sqlite: data source name %q: busy_timeout=%q: %w", dsn, val, err)
			}
			c.BusyTimeout = d
		default:
			return c, fmt.Errorf("sqlite: data source name %q: unknown parameter %q (known: synchronous, busy_timeout)", dsn, k)
		}
	}
	return c, nil
}

func parseTimeout(v string) (time.Duration, error) {
	var d time.Duration
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
		d = time.Duration(ms) * time.Millisecond
	} else if d, err = time.ParseDuration(v); err != nil {
		return 0, errors.New("want a duration such as 5s or a number of milliseconds")
	}
	if d <= 0 {
		return 0, errors.New("must be positive")
	}
	return d, nil
}

// Store is the SQLite task.Store. It is safe for concurrent use.
type Store struct {
	cfg   Config
	log   *slog.Logger
	now   func() time.Time
	write *sql.DB // one connection, wconn
	// wconn is write's connection, taken from the pool for the store's
	// life: the writer's (batch.go), which begins (BEGIN IMMEDIATE) and ends every
	// write transaction on it itself, with the driver's own statements
	// (conn.go).
	wconn *sql.Conn
	read  *sql.DB // read-only connections
	// applied counts the migrations New applied.
	applied int
	w       stmts // prepared on wconn's driver connection
	r       stmts // prepared on read
	closed  sync.Once
	cerr    error
	// stop ends the background checkpointer (done is closed when it has).
	stop chan struct{}
	done chan struct{}
	// wr is the single writer (batch.go).
	wr writer
	// commits counts the write transactions committed (tests read it).
	commits atomic.Int64
	// ckptWake wakes the checkpointer early: the writer sends (without
	// waiting) after every checkpointEvery write operations it committed,
	// so a busy writer's log is copied before SQLite's own automatic
	// checkpoint would run it inside a commit.
	ckptWake chan struct{}
	// sinceCkpt counts the write operations committed since the last wake
	// (the writer's alone).
	sinceCkpt int
}

var _ task.Store = (*Store)(nil)

// Open opens (creating if needed) the database a sqlite:// data source name
// names, migrates it to the newest schema and returns the store.
func Open(ctx context.Context, dsn string, logger *slog.Logger) (*Store, error) {
	cfg, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	cfg.Logger = logger
	return New(ctx, cfg)
}

// New opens the store cfg describes, migrating the database to the newest
// schema this binary knows. It refuses a database written by a newer binary.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Store{cfg: cfg, log: cfg.Logger, now: cfg.Now}
	ok := false
	defer func() {
		if !ok {
			s.closeDBs()
		}
	}()

	common := commonParams(cfg)
	if cfg.ReadOnly {
		if err := s.openReadOnly(ctx, common); err != nil {
			return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
		}
		ok = true
		s.log.Debug("sqlite store opened read-only", slog.String("path", cfg.Path))
		return s, nil
	}

	wq := url.Values{}
	for k, v := range common {
		wq[k] = append([]string(nil), v...)
	}
	wq.Add("_pragma", "journal_mode(wal)")
	wq.Add("_pragma", "synchronous("+string(cfg.Synchronous)+")")
	wq.Set("_txlock", "immediate")
	if walVFSName != "" {
		// The writer's commits write the log with one call (walbuf_modernc.go).
		if err := registerWALVFS(); err != nil {
			return nil, err
		}
		wq.Set("vfs", walVFSName)
	}
	if cfg.CheckpointInterval > 0 {
		// The checkpointer does the work off the commit path; SQLite's own
		// automatic checkpoint stays as a backstop if it falls behind.
		wq.Add("_pragma", "wal_autocheckpoint(10000)")
	}
	var err error
	if s.write, err = openDB(cfg.Path + "?" + wq.Encode()); err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}
	// One writer: database/sql queues writers for it, so SQLite never sees
	// two of them. The connection is kept forever so prepared statements
	// stay prepared.
	s.write.SetMaxOpenConns(1)
	s.write.SetMaxIdleConns(1)
	s.write.SetConnMaxLifetime(0)
	s.write.SetConnMaxIdleTime(0)

	var mode string
	if err := s.write.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		return nil, fmt.Errorf("sqlite: open %s: journal mode is %q, WAL could not be enabled (is the file on a network file system?)", cfg.Path, mode)
	}
	if err := s.quickCheck(ctx, s.write); err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}
	if s.applied, err = s.migrate(ctx, !cfg.SkipMigrate); err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}

	rq := common
	rq.Add("_pragma", "query_only(1)")
	if s.read, err = openDB(cfg.Path + "?" + rq.Encode()); err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}
	s.read.SetMaxOpenConns(cfg.ReadConns)
	s.read.SetMaxIdleConns(cfg.ReadConns)
	s.read.SetConnMaxLifetime(0)

	// Statements run on a connection of their own with a context that is
	// never done start no goroutines (database/sql's and the driver's
	// watchers of a transaction's and a query's context).
	if s.wconn, err = s.write.Conn(ctx); err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}
	if err := s.w.prepareDriver(ctx, s.wconn); err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}
	if err := s.r.prepare(ctx, s.read); err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}
	s.stop = make(chan struct{})
	s.wr.idle = sync.NewCond(&s.wr.mu)
	if cfg.CheckpointInterval > 0 {
		s.done, s.ckptWake = make(chan struct{}), make(chan struct{}, 1)
		go s.checkpoints(cfg.CheckpointInterval)
	}
	ok = true
	s.log.Debug("sqlite store opened", slog.String("path", cfg.Path), slog.String("synchronous", string(cfg.Synchronous)), slog.String("driver", driverName))
	return s, nil
}

// pageCacheKiB is each connection's page cache size in KiB.
const pageCacheKiB = 2000

// commonParams are the connection parameters of every connection.
func commonParams(cfg Config) url.Values {
	busy := strconv.FormatInt(cfg.BusyTimeout.Milliseconds(), 10)
	common := url.Values{}
	common.Add("_pragma", "busy_timeout("+busy+")")
	common.Add("_pragma", "foreign_keys(1)")
	// Savepoints (group commit) and sorts keep their temporary pages in
	// memory instead of a temp file. (No mmap: a growing file makes SQLite
	// unmap and remap at the start of read transactions, which measured
	// slower.)
	common.Add("_pragma", "temp_store(memory)")
	// Each connection (the writer and ReadConns readers) has a page cache
	// of its own, outside the Go heap, that fills as the file grows; at
	// 32 MB each it held ~50 MB more after 10,000 tasks than after 1,000
	// (docs/benchmarks.md, "Memory after 100,000 tasks"), with no measured
	// gain in throughput. 2 MB (SQLite's default) bounds the node's page
	// caches at (ReadConns+1) × 2 MB; pages missed are read from the
	// operating system's file cache.
	common.Add("_pragma", "cache_size(-"+strconv.Itoa(pageCacheKiB)+")")
	return common
}

// Close closes the store's connections. Closing twice is safe.
func (s *Store) Close() error {
	s.closed.Do(func() {
		if s.stop != nil {
			close(s.stop)
			s.stopWriter()
			if s.done != nil {
				<-s.done
			}
		}
		if s.wconn != nil {
			// Let SQLite refresh the query planner's statistics, as its
			// documentation advises before closing a connection.
			if _, err := s.wconn.ExecContext(context.Background(), "PRAGMA optimize"); err != nil {
				s.log.Warn("sqlite: PRAGMA optimize failed", slog.Any("err", err))
			}
		}
		s.cerr = s.closeDBs()
	})
	return s.cerr
}

// checkpointEvery is how many committed write operations wake the
// checkpointer before its interval ends. A blocking request is two
// operations that append some 20 to 25 pages to the log at one client
// (fewer each in a group commit), so this stays well below the automatic
// checkpoint's 10,000 pages.
const checkpointEvery = 512

// committed counts n more committed write operations and wakes the
// checkpointer after every checkpointEvery.
// Commits returns how many write transactions the store committed since
// it was opened (a group commit of many writes is one): the metric
// pactum_store_commits_total.
func (s *Store) Commits() uint64 { return uint64(s.commits.Load()) }

func (s *Store) committed(n int) {
	if s.ckptWake == nil {
		return
	}
	if s.sinceCkpt += n; s.sinceCkpt < checkpointEvery {
		return
	}
	s.sinceCkpt = 0
	select {
	case s.ckptWake <- struct{}{}:
	default:
	}
}

// checkpoints runs a PASSIVE checkpoint every interval, and whenever the
// writer says the log grew by checkpointEvery operations, on a read-pool
// connection (a checkpoint writes the database file, not its content, so
// query_only does not stop it) until Close. Off the writer, the copy and
// its fsyncs do not stall every request queued behind a commit.
func (s *Store) checkpoints(every time.Duration) {
	defer close(s.done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
		case <-s.ckptWake:
		}
		var busy, logFrames, done int
		if err := s.read.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &logFrames, &done); err != nil {
			s.log.Warn("sqlite: checkpoint failed", slog.String("path", s.cfg.Path), slog.Any("err", err))
			continue
		}
		if busy != 0 || done < logFrames {
			s.log.Debug("sqlite: checkpoint incomplete", slog.String("path", s.cfg.Path),
				slog.Int("wal_frames", logFrames), slog.Int("checkpointed", done), slog.Bool("busy", busy != 0))
		}
	}
}

func (s *Store) closeDBs() error {
	var errs []error
	s.r.close()
	if s.wconn != nil {
		s.w.closeDriver(s.wconn)
		errs = append(errs, s.wconn.Close())
	}
	if s.read != nil {
		errs = append(errs, s.read.Close())
	}
	if s.write != nil {
		errs = append(errs, s.write.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlite: close %s: %w", s.cfg.Path, err)
	}
	return nil
}

// Path returns the database file's path.
func (s *Store) Path() string { return s.cfg.Path }
