package sqlite

import (
	"context"
	"embed"
	"fmt"
	"log/slog"

	"github.com/pactum/pactum/store/internal/driver"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// SchemaVersion returns the newest schema version this binary knows.
func SchemaVersion() int { return driver.SchemaVersion(migrationFS) }

// Migrate opens the database dsn names, brings it to the newest schema and
// closes it, returning how many migrations it applied (`pactum migrate`).
func Migrate(ctx context.Context, dsn string, logger *slog.Logger) (int, error) {
	s, err := Open(ctx, dsn, logger)
	if err != nil {
		return 0, err
	}
	n := s.applied
	if err := s.Close(); err != nil {
		return n, err
	}
	return n, nil
}

// migrate brings the database to the newest schema and returns how many
// migrations it applied: the pending migrations run in order in one
// immediate transaction, so two processes opening the same new file cannot
// both apply them, and a failure leaves the schema untouched. With apply
// false it only checks that the schema is current.
func (s *Store) migrate(ctx context.Context, apply bool) (applied int, err error) {
	ms, err := driver.Migrations(migrationFS)
	if err != nil {
		return 0, err
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("migrate: begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER NOT NULL PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at INTEGER NOT NULL
	) STRICT`); err != nil {
		return 0, fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	var current int
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return 0, fmt.Errorf("migrate: read schema version: %w", err)
	}
	latest := len(ms)
	if current > latest {
		return 0, fmt.Errorf("migrate: database schema version %d is newer than this binary's %d: upgrade pactum", current, latest)
	}
	if !apply && current != latest {
		return 0, fmt.Errorf("migrate: database schema version %d, this binary needs %d, and migrations are off: run `pactum migrate` first", current, latest)
	}
	now := s.now().UnixMicro()
	for _, m := range ms[current:] {
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return applied, fmt.Errorf("migrate: apply %s: %w", m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`, m.Version, m.Name, now); err != nil {
			return applied, fmt.Errorf("migrate: record %s: %w", m.Name, err)
		}
		applied++
		s.log.Info("sqlite: applied migration", slog.String("path", s.cfg.Path), slog.Int("version", m.Version), slog.String("name", m.Name))
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("migrate: commit: %w", err)
	}
	return applied, nil
}
