package nodeproc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// defaultPostgres is the test server when PACTUM_TEST_POSTGRES names none.
const defaultPostgres = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// PostgresDSN returns the test server's DSN (PACTUM_TEST_POSTGRES, default
// 127.0.0.1:5432 database test), or skips the test when it cannot be
// reached; with PACTUM_REQUIRE_POSTGRES=1, as in CI, it fails instead.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("PACTUM_TEST_POSTGRES")
	if dsn == "" {
		dsn = defaultPostgres
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err == nil {
		err = conn.Ping(ctx)
		_ = conn.Close(ctx)
	}
	if err != nil {
		msg := fmt.Sprintf("PostgreSQL is not reachable (set PACTUM_TEST_POSTGRES): %v", err)
		if os.Getenv("PACTUM_REQUIRE_POSTGRES") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dsn
}

// SchemaDSN creates a fresh schema, prefixed prefix, on the server dsn
// names, drops it when the test ends, and returns a DSN whose connections
// use it.
func SchemaDSN(t testing.TB, dsn, prefix string) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := prefix + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if conn, err := pgx.Connect(ctx, dsn); err == nil {
			_, _ = conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
			_ = conn.Close(ctx)
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
