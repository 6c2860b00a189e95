package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pactum/pactum/store/internal/driver"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// SchemaVersion returns the newest schema version this binary knows.
func SchemaVersion() int { return driver.SchemaVersion(migrationFS) }

// Migrate brings the database dsn names to the newest schema this binary
// knows and returns how many migrations it applied (0 when it was up to
// date). It is what Open does unless Options.SkipMigrate is set; `pactum
// migrate` calls it so that migrations can run before the nodes start.
// opts.Schema, opts.Logger and opts.StatementTimeout apply; the other
// options are ignored.
//
// Several processes may migrate the same schema at once: an advisory lock
// makes them take turns, and the ones that come second find nothing to do.
// A database whose schema is newer than this binary is refused.
func Migrate(ctx context.Context, dsn string, opts Options) (applied int, err error) {
	opts.setDefaults()
	cfg, err := poolConfig(dsn, &opts)
	if err != nil {
		return 0, err
	}
	target := describe(cfg.ConnConfig)
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
	if err != nil {
		return 0, fmt.Errorf("postgres: migrate %s: %w", target, err)
	}
	defer func() {
		if cerr := conn.Close(context.WithoutCancel(ctx)); cerr != nil && err == nil {
			err = fmt.Errorf("postgres: migrate %s: close: %w", target, cerr)
		}
	}()
	_, applied, err = migrate(ctx, conn, opts.Schema, opts.Logger)
	if err != nil {
		return 0, fmt.Errorf("postgres: migrate %s: %w", target, err)
	}
	return applied, nil
}

// migrateLockClass is the first key of the advisory lock that serialises
// migrations; the second is the schema name's hash, so schemas migrate
// independently.
const migrateLockClass = 0x70616374 // "pact"

// migrate applies the pending migrations to schema (or, when schema is
// empty, to the connection's current schema) in one transaction under an
// advisory lock, and returns the schema and how many migrations it applied.
// PostgreSQL's DDL is transactional: a failed migration leaves the schema
// as it was.
func migrate(ctx context.Context, conn *pgx.Conn, schema string, log *slog.Logger) (string, int, error) {
	ms, err := driver.Migrations(migrationFS)
	if err != nil {
		return "", 0, err
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return "", 0, fmt.Errorf("migrate: begin: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	// Waiting for another node's migration is not a statement to time out;
	// the caller's context bounds it.
	if _, err := tx.Exec(ctx, `SET LOCAL statement_timeout = 0`); err != nil {
		return "", 0, fmt.Errorf("migrate: %w", err)
	}
	lockName := schema
	if lockName == "" {
		if err := tx.QueryRow(ctx, `SELECT coalesce(current_schema(), '')`).Scan(&lockName); err != nil {
			return "", 0, fmt.Errorf("migrate: current schema: %w", err)
		}
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, int32(migrateLockClass), lockName); err != nil {
		return "", 0, fmt.Errorf("migrate: lock: %w", err)
	}
	if schema != "" {
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, schema).Scan(&exists); err != nil {
			return "", 0, fmt.Errorf("migrate: look up schema %q: %w", schema, err)
		}
		if !exists {
			if _, err := tx.Exec(ctx, `CREATE SCHEMA `+quoteIdent(schema)); err != nil {
				return "", 0, fmt.Errorf("migrate: create schema %q: %w", schema, err)
			}
			log.Info("postgres: created schema", slog.String("schema", schema))
		}
	}
	schema, err = currentSchema(ctx, tx)
	if err != nil {
		return "", 0, err
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer     NOT NULL PRIMARY KEY,
		name       text        NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now()
	)`); err != nil {
		return "", 0, fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	var current int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return "", 0, fmt.Errorf("migrate: read schema version: %w", err)
	}
	latest := len(ms)
	if current > latest {
		return "", 0, fmt.Errorf("migrate: schema %q is at version %d, newer than this binary's %d: upgrade pactum", schema, current, latest)
	}
	for _, m := range ms[current:] {
		// No arguments: pgx sends the file with the simple protocol, which
		// runs several statements.
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return "", 0, fmt.Errorf("migrate: apply %s: %w", m.Name, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
			return "", 0, fmt.Errorf("migrate: record %s: %w", m.Name, err)
		}
		log.Info("postgres: applied migration", slog.String("schema", schema), slog.Int("version", m.Version), slog.String("name", m.Name))
	}
	if err := tx.Commit(ctx); err != nil {
		return "", 0, fmt.Errorf("migrate: commit: %w", err)
	}
	return schema, latest - current, nil
}

// currentSchema returns the schema new tables go to: the first existing
// schema of search_path.
func currentSchema(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (string, error) {
	var schema *string
	if err := q.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return "", fmt.Errorf("current schema: %w", err)
	}
	if schema == nil {
		return "", errors.New("search_path names no existing schema (set it in the DSN, or Options.Schema)")
	}
	return *schema, nil
}

// resolveSchema returns the schema the connection's tables live in: want,
// which must exist, or the connection's current schema.
func resolveSchema(ctx context.Context, conn *pgx.Conn, want string) (string, error) {
	got, err := currentSchema(ctx, conn)
	if err != nil && want != "" {
		return "", fmt.Errorf("schema %q does not exist: run pactum migrate", want)
	}
	return got, err
}

// checkVersion refuses a schema that is not at SchemaVersion.
func checkVersion(ctx context.Context, conn *pgx.Conn) error {
	var current int
	err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&current)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42P01" { // undefined_table
		current, err = 0, nil
	}
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	switch latest := SchemaVersion(); {
	case current > latest:
		return fmt.Errorf("schema version %d is newer than this binary's %d: upgrade pactum", current, latest)
	case current < latest:
		return fmt.Errorf("schema version %d is older than this binary's %d and migrations are disabled: run pactum migrate", current, latest)
	}
	return nil
}
