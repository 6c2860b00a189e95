package postgres_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/pactum/pactum/store/postgres"
)

// Migrating once before the nodes start, then opening a store that only
// checks the schema version.
func ExampleMigrate() {
	ctx := context.Background()
	dsn := "postgres://pactum@db.internal:5432/pactum?sslmode=verify-full&pool_max_conns=20"
	opts := postgres.Options{Schema: "pactum", Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))}
	applied, err := postgres.Migrate(ctx, dsn, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("applied %d migrations; schema version %d\n", applied, postgres.SchemaVersion())

	opts.SkipMigrate = true
	opts.StatementTimeout = 10 * time.Second
	s, err := postgres.OpenWith(ctx, dsn, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
}
