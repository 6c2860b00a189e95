package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/store/internal/driver"
)

// quickCheckLimit bounds how many problems PRAGMA quick_check reports: the
// first few say enough to know the file is damaged and where.
const quickCheckLimit = 5

// quickCheck runs PRAGMA quick_check on db and returns an error wrapping
// store.ErrCorrupt unless it answers "ok". quick_check reads every page of
// the file (it skips only the index-content cross-check integrity_check
// makes), so it costs about one sequential read of the database: see
// docs/benchmarks.md.
func (s *Store) quickCheck(ctx context.Context, db *sql.DB) error {
	if s.cfg.SkipIntegrityCheck {
		return nil
	}
	rows, err := db.QueryContext(ctx, fmt.Sprintf("PRAGMA quick_check(%d)", quickCheckLimit))
	if err != nil {
		return fmt.Errorf("%w: PRAGMA quick_check failed: %w", store.ErrCorrupt, err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return fmt.Errorf("%w: PRAGMA quick_check: %w", store.ErrCorrupt, err)
		}
		problems = append(problems, line)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%w: PRAGMA quick_check failed: %w", store.ErrCorrupt, err)
	}
	if len(problems) == 1 && problems[0] == "ok" {
		return nil
	}
	return fmt.Errorf("%w: PRAGMA quick_check found: %s (restore the file from a backup; see docs/storage.md)",
		store.ErrCorrupt, strings.Join(problems, "; "))
}

// openReadOnly opens s.read on an existing file without writing to it:
// mode=ro first; if SQLite cannot read the file that way (a WAL database
// in a directory where it cannot create the shared-memory file) and no
// write-ahead log is pending, immutable=1, which takes no locks and needs
// no side files. It then checks the file's integrity and that its schema
// is this binary's, and prepares the read statements. Writes are refused
// (inWriteTx, RenewLease) with store.ErrReadOnly.
func (s *Store) openReadOnly(ctx context.Context, common url.Values) error {
	path := s.cfg.Path
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		abs, aerr := filepath.Abs(path)
		if aerr != nil {
			abs = path
		}
		return fmt.Errorf("%w: %s does not exist (read-only commands never create a store)", store.ErrNoStore, abs)
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%s is a directory, not a database file", path)
	}
	q := url.Values{}
	for k, v := range common {
		q[k] = append([]string(nil), v...)
	}
	q.Add("_pragma", "query_only(1)")
	q.Set("mode", "ro")
	roErr := s.openRead(ctx, path, q)
	if roErr == nil {
		return s.finishReadOnly(ctx)
	}
	if errors.Is(roErr, store.ErrCorrupt) || walPending(path) {
		return roErr
	}
	q.Del("mode")
	q.Set("immutable", "1")
	if err := s.openRead(ctx, path, q); err != nil {
		return fmt.Errorf("%w (and with immutable=1: %w)", roErr, err)
	}
	s.log.Debug("sqlite: opened immutable (mode=ro could not read the file)", "path", path, "err", roErr)
	return s.finishReadOnly(ctx)
}

// openRead opens s.read on the file: URI for path with query q and reads
// the schema once, so an unreadable file fails here.
func (s *Store) openRead(ctx context.Context, path string, q url.Values) error {
	if s.read != nil {
		_ = s.read.Close()
		s.read = nil
	}
	db, err := openDB("file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode())
	if err != nil {
		return err
	}
	s.read = db
	db.SetMaxOpenConns(s.cfg.ReadConns)
	db.SetMaxIdleConns(s.cfg.ReadConns)
	db.SetConnMaxLifetime(0)
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master`).Scan(&n); err != nil {
		if isCorrupt(err) {
			return fmt.Errorf("%w: %w", store.ErrCorrupt, err)
		}
		return err
	}
	return nil
}

// finishReadOnly checks the integrity and schema of the file s.read has
// open and prepares the read statements.
func (s *Store) finishReadOnly(ctx context.Context) error {
	if err := s.quickCheck(ctx, s.read); err != nil {
		return err
	}
	if err := checkSchema(ctx, s.read); err != nil {
		return err
	}
	return s.r.prepare(ctx, s.read)
}

// checkSchema returns an error unless db holds pactum's schema at exactly
// this binary's version. It writes nothing.
func checkSchema(ctx context.Context, db *sql.DB) error {
	var tables int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).Scan(&tables); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if tables == 0 {
		return errors.New("not a pactum store (it has no schema_migrations table)")
	}
	var current int
	if err := db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	latest := driver.SchemaVersion(migrationFS)
	switch {
	case current > latest:
		return fmt.Errorf("database schema version %d is newer than this binary's %d: upgrade pactum", current, latest)
	case current < latest:
		return fmt.Errorf("database schema version %d is older than this binary's %d, and a read-only open does not migrate: run `pactum migrate` (or `pactum serve`) on it first", current, latest)
	}
	return nil
}

// walPending reports whether path has a non-empty write-ahead log beside
// it: commits that immutable=1 would not see.
func walPending(path string) bool {
	fi, err := os.Stat(path + "-wal")
	return err == nil && fi.Size() > 0
}

// isCorrupt reports whether err is SQLite's "database disk image is
// malformed" or "file is not a database".
func isCorrupt(err error) bool {
	m := err.Error()
	return strings.Contains(m, "malformed") || strings.Contains(m, "not a database")
}

// errReadOnly is what writes to a read-only store return.
var errReadOnly = fmt.Errorf("sqlite: %w", store.ErrReadOnly)
