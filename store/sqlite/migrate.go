package sqlite

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"slices"
	"strconv"
	"strings"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migration is one embedded schema change, named NNNN_what.sql.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in version order. Versions
// must be 1, 2, 3, … without gaps.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	var out []migration
	for _, n := range names {
		base := path.Base(n)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must be NNNN_description.sql", base)
		}
		b, err := migrationFS.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("migration %s: %w", base, err)
		}
		out = append(out, migration{version: v, name: strings.TrimSuffix(base, ".sql"), sql: string(b)})
	}
	slices.SortFunc(out, func(a, b migration) int { return a.version - b.version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: expected version %d", m.name, i+1)
		}
	}
	return out, nil
}

// SchemaVersion returns the newest schema version this binary knows.
func SchemaVersion() int {
	ms, err := migrations()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

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
	ms, err := migrations()
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
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return applied, fmt.Errorf("migrate: apply %s: %w", m.name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`, m.version, m.name, now); err != nil {
			return applied, fmt.Errorf("migrate: record %s: %w", m.name, err)
		}
		applied++
		s.log.Info("sqlite: applied migration", slog.String("path", s.cfg.Path), slog.Int("version", m.version), slog.String("name", m.name))
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("migrate: commit: %w", err)
	}
	return applied, nil
}
