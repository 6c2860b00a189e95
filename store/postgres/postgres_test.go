package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pactum/pactum/audit"
	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/store/postgres"
	"github.com/pactum/pactum/store/storetest"
	"github.com/pactum/pactum/task"
)

// The tests need a PostgreSQL server: PACTUM_TEST_POSTGRES names it
// (default below). Without one they skip, unless PACTUM_REQUIRE_POSTGRES=1
// (as in CI), which makes them fail. Each test works in a schema of its
// own, dropped when it ends.

const defaultTestDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

var (
	reachOnce sync.Once
	reachErr  error
)

// testDSN returns the server's DSN, or skips (fails, when PostgreSQL is
// required) the test if the server cannot be reached.
func testDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("PACTUM_TEST_POSTGRES")
	if dsn == "" {
		dsn = defaultTestDSN
	}
	reachOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			reachErr = err
			return
		}
		reachErr = conn.Ping(ctx)
		_ = conn.Close(ctx)
	})
	if reachErr != nil {
		msg := fmt.Sprintf("PostgreSQL is not reachable (set PACTUM_TEST_POSTGRES to a reachable server): %v", reachErr)
		if os.Getenv("PACTUM_REQUIRE_POSTGRES") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dsn
}

// withParam adds a parameter to a URL DSN unless it sets it already.
func withParam(t testing.TB, dsn, key, value string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("parse test DSN: %v", err)
	}
	q := u.Query()
	if !q.Has(key) {
		q.Set(key, value)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// admin runs one statement on a connection of its own.
func admin(t testing.TB, sql string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, testDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// newSchema creates an empty schema with a unique name and drops it, with
// everything in it, when the test ends.
func newSchema(t testing.TB) string {
	t.Helper()
	testDSN(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "pactum_test_" + hex.EncodeToString(b[:])
	admin(t, `CREATE SCHEMA `+schema)
	t.Cleanup(func() { admin(t, `DROP SCHEMA `+schema+` CASCADE`) })
	return schema
}

// storeDSN is the test DSN with a small pool: many stores run at once.
func storeDSN(t testing.TB) string {
	return withParam(t, testDSN(t), "pool_max_conns", "4")
}

// open opens a store on schema and closes it when the test ends.
func open(t testing.TB, dsn, schema string) *postgres.Store {
	t.Helper()
	s, err := postgres.OpenWith(context.Background(), dsn, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatalf("OpenWith(schema %s): %v", schema, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// conn opens a plain connection whose search_path is schema.
func conn(t testing.TB, schema string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(t.Context(), withParam(t, testDSN(t), "search_path", schema))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

func TestConformance(t *testing.T) {
	t.Parallel()
	dsn := storeDSN(t)
	storetest.Run(t, func(t *testing.T) task.Store {
		return open(t, dsn, newSchema(t))
	})
}

func TestStoreOpenRegistry(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	for _, scheme := range []string{"postgres", "postgresql"} {
		dsn := withParam(t, storeDSN(t), "search_path", schema)
		dsn = scheme + strings.TrimPrefix(dsn, dsn[:strings.Index(dsn, "://")])
		s, err := store.Open(t.Context(), dsn, nil)
		if err != nil {
			t.Fatalf("store.Open(%s://…): %v", scheme, err)
		}
		ps, ok := s.(*postgres.Store)
		if !ok {
			t.Fatalf("store.Open returned %T", s)
		}
		if ps.Schema() != schema {
			t.Errorf("Schema() = %q, want the DSN's search_path %q", ps.Schema(), schema)
		}
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	_, err := postgres.Open(ctx, "host=127.0.0.1 user=postgres", nil)
	if err == nil || !strings.Contains(err.Error(), "postgres://") {
		t.Errorf("Open of a key=value DSN: %v, want a refusal", err)
	}
	// Nothing listens on port 1; the error names the target but never
	// the password.
	_, err = postgres.Open(ctx, "postgres://alice:s3cr3t-pw@127.0.0.1:1/db?connect_timeout=2&sslmode=disable", nil)
	if err == nil {
		t.Fatal("Open of an unreachable server succeeded")
	}
	if strings.Contains(err.Error(), "s3cr3t-pw") {
		t.Errorf("error shows the password: %v", err)
	}
	_, err = postgres.Open(ctx, "postgres://alice:s3cr3t-pw@127.0.0.1:5432/db?pool_max_conns=zero", nil)
	if err == nil || strings.Contains(err.Error(), "s3cr3t-pw") {
		t.Errorf("Open with a bad pool parameter: %v, want an error without the password", err)
	}
}

// TestValidate: store.Validate refuses what Open refuses while parsing,
// without connecting (port 1 has no server: a DSN that parses is valid), and
// never shows the password.
func TestValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		dsn, err string
	}{
		{"postgres://alice:s3cr3t-pw@127.0.0.1:1/db?sslmode=disable&pool_max_conns=4&search_path=x", ""},
		{"PostgreSQL://alice@127.0.0.1:1/db", ""},
		{"postgres://alice:s3cr3t-pw@127.0.0.1:1/db?pool_max_conns=zero", "pool_max_conns"},
		{"postgres://alice:s3cr3t-pw@127.0.0.1:notaport/db", "invalid port"},
		{"postgres://alice:s3cr3t-pw@127.0.0.1/db?sslmode=sometimes", "sslmode"},
		{"postgres://alice:s3cr3t-pw@127.0.0.1/db?connect_timeout=soon", "connect_timeout"},
	} {
		err := store.Validate(tc.dsn)
		if tc.err == "" && err != nil {
			t.Errorf("Validate(%q): %v", tc.dsn, err)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("Validate(%q) = %v, want an error with %q", tc.dsn, err, tc.err)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr3t-pw") {
			t.Errorf("Validate(%q) shows the password: %v", tc.dsn, err)
		}
		if tc.err != "" {
			if _, oerr := postgres.Open(t.Context(), tc.dsn, nil); oerr == nil || !strings.Contains(oerr.Error(), tc.err) {
				t.Errorf("Open(%q) = %v, want the same refusal as Validate", tc.dsn, oerr)
			}
		}
	}
}

func TestMigrations(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dsn := storeDSN(t)
	schema := newSchema(t)
	opts := postgres.Options{Schema: schema}

	// Four nodes migrating a new schema at once: it is migrated once.
	const nodes = 4
	applied := make([]int, nodes)
	errs := make([]error, nodes)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Go(func() { applied[i], errs[i] = postgres.Migrate(ctx, dsn, opts) })
	}
	wg.Wait()
	total := 0
	for i := range nodes {
		if errs[i] != nil {
			t.Fatalf("Migrate %d: %v", i, errs[i])
		}
		total += applied[i]
	}
	if total != postgres.SchemaVersion() || postgres.SchemaVersion() < 1 {
		t.Errorf("concurrent migrations applied %d in all, want %d", total, postgres.SchemaVersion())
	}
	if n, err := postgres.Migrate(ctx, dsn, opts); err != nil || n != 0 {
		t.Errorf("Migrate when up to date = %d, %v; want 0", n, err)
	}

	// Opens at once on the same schema.
	stores := make([]*postgres.Store, nodes)
	for i := range nodes {
		wg.Go(func() { stores[i], errs[i] = postgres.OpenWith(ctx, dsn, opts) })
	}
	wg.Wait()
	for i, s := range stores {
		if errs[i] != nil {
			t.Fatalf("OpenWith %d: %v", i, errs[i])
		}
		defer s.Close()
	}

	c := conn(t, schema)
	var n, version int
	if err := c.QueryRow(ctx, `SELECT count(*), max(version) FROM schema_migrations`).Scan(&n, &version); err != nil {
		t.Fatal(err)
	}
	if n != postgres.SchemaVersion() || version != postgres.SchemaVersion() {
		t.Errorf("schema_migrations has %d rows up to version %d, want %d", n, version, postgres.SchemaVersion())
	}
	for _, table := range []string{"tasks", "task_messages", "task_artifacts", "task_records", "audit_log", "audit_head", "idempotency_keys", "push_configs"} {
		var found bool
		if err := c.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = $2)`, schema, table).Scan(&found); err != nil || !found {
			t.Errorf("table %s.%s: %v, %v", schema, table, found, err)
		}
	}
	storetest.MustCreate(t, stores[0], "t1", time.Now())
	if _, err := stores[1].GetTask(ctx, "t1", -1); err != nil {
		t.Errorf("a task written by one store, read by another: %v", err)
	}
}

func TestMigrateCreatesSchema(t *testing.T) {
	t.Parallel()
	testDSN(t)
	// Mixed case and a space: the name must be quoted wherever it is used.
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "Pactum Test " + hex.EncodeToString(b[:])
	t.Cleanup(func() { admin(t, `DROP SCHEMA IF EXISTS "`+schema+`" CASCADE`) })
	s := open(t, storeDSN(t), schema)
	if s.Schema() != schema {
		t.Errorf("Schema() = %q, want %q", s.Schema(), schema)
	}
	storetest.MustCreate(t, s, "t1", time.Now())
}

// TestMigrationTurnStart: migration 0004 gives tasks written before it the
// turn start their record shows (the last time a caller queued them again),
// and 0 to the others.
func TestMigrationTurnStart(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dsn, schema := storeDSN(t), newSchema(t)
	s := open(t, dsn, schema)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	run := func(id string, to task.State) {
		t.Helper()
		if _, err := s.Claim(ctx, task.ClaimParams{Owner: "w", Now: now, LeaseFor: time.Minute, Limit: 1, TaskID: id}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Transition(ctx, task.TransitionParams{TaskID: id, From: task.StateInProgress, To: to, LeaseOwner: "w", Now: now}); err != nil {
			t.Fatal(err)
		}
	}
	// "retried" is retried by hand as a binary before 0004 did it (no
	// NewTurn) after two attempts; "plain" never is.
	storetest.MustCreate(t, s, "retried", now)
	run("retried", task.StateQueued)
	run("retried", task.StateDeadLetter)
	if _, err := s.Transition(ctx, task.TransitionParams{TaskID: "retried", From: task.StateDeadLetter, To: task.StateQueued, Reason: "manual retry", Now: now}); err != nil {
		t.Fatal(err)
	}
	run("retried", task.StateQueued)
	storetest.MustCreate(t, s, "plain", now)
	run("plain", task.StateQueued)

	// Back to schema 3, then migrate: 0004 (and those after it) run again
	// on these rows.
	c := conn(t, schema)
	rollBack(t, c, 3)
	if _, err := postgres.Migrate(ctx, dsn, postgres.Options{Schema: schema}); err != nil {
		t.Fatal(err)
	}
	s = open(t, dsn, schema)
	for id, want := range map[string]int{"retried": 2, "plain": 0} {
		tk, err := s.GetTask(ctx, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		if tk.TurnStart != want {
			t.Errorf("%s after migration: TurnStart %d (Attempt %d), want %d", id, tk.TurnStart, tk.Attempt, want)
		}
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dsn := storeDSN(t)
	schema := newSchema(t)
	opts := postgres.Options{Schema: schema}
	if _, err := postgres.Migrate(ctx, dsn, opts); err != nil {
		t.Fatal(err)
	}
	future := postgres.SchemaVersion() + 1
	c := conn(t, schema)
	if _, err := c.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, 'future')`, future); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.OpenWith(ctx, dsn, opts); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("Open of a schema at version %d: %v, want a refusal", future, err)
	}
	if _, err := postgres.Migrate(ctx, dsn, opts); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("Migrate of a schema at version %d: %v, want a refusal", future, err)
	}
	if _, err := postgres.OpenWith(ctx, dsn, postgres.Options{Schema: schema, SkipMigrate: true}); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("Open (SkipMigrate) of a schema at version %d: %v, want a refusal", future, err)
	}
	var n int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != future {
		t.Errorf("schema_migrations after refusal: %d rows, %v; want %d", n, err, future)
	}
}

func TestSkipMigrate(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dsn := storeDSN(t)
	schema := newSchema(t)
	opts := postgres.Options{Schema: schema, SkipMigrate: true}
	if _, err := postgres.OpenWith(ctx, dsn, opts); err == nil || !strings.Contains(err.Error(), "pactum migrate") {
		t.Errorf("Open (SkipMigrate) of an empty schema: %v, want a refusal that says to migrate", err)
	}
	if _, err := postgres.Migrate(ctx, dsn, postgres.Options{Schema: schema}); err != nil {
		t.Fatal(err)
	}
	s, err := postgres.OpenWith(ctx, dsn, opts)
	if err != nil {
		t.Fatalf("Open (SkipMigrate) of a migrated schema: %v", err)
	}
	defer s.Close()
	storetest.MustCreate(t, s, "t1", time.Now())
}

// TestIdempotencyTwoNodes: duplicate submits racing on two stores (two
// pools, as two nodes would have) create one task.
func TestIdempotencyTwoNodes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dsn, schema := storeDSN(t), newSchema(t)
	nodes := []*postgres.Store{open(t, dsn, schema), open(t, dsn, schema)}
	const n = 40
	ids := make([]string, n)
	errs := make([]error, n)
	got := make([]*task.Task, n)
	now := time.Now().UTC().Truncate(time.Microsecond)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ids[i] = fmt.Sprintf("t%02d", i)
			in := storetest.EchoTask(ids[i])
			in.Envelope.IdempotencyKey = "same-key"
			got[i], errs[i] = nodes[i%2].CreateTask(ctx, task.CreateParams{
				Task: in, Steps: []task.Step{{To: task.StateValidated}, {To: task.StateQueued}}, Now: now, IdempotencyTTL: time.Hour,
			})
		})
	}
	wg.Wait()
	winner := ""
	for i := range n {
		if errs[i] == nil {
			if winner != "" {
				t.Fatalf("both %s and %s were created under one key", winner, ids[i])
			}
			winner = ids[i]
		}
	}
	if winner == "" {
		t.Fatal("no submit created a task")
	}
	for i := range n {
		if ids[i] == winner {
			continue
		}
		if !errors.Is(errs[i], task.ErrDuplicate) || got[i] == nil || got[i].ID != winner {
			t.Errorf("%s: %v, %v; want ErrDuplicate naming %s", ids[i], got[i], errs[i], winner)
		}
	}
	page, err := nodes[0].ListTasks(ctx, task.ListParams{PageSize: n})
	if err != nil || page.TotalSize != 1 {
		t.Errorf("ListTasks = %v, %v; want one task", page, err)
	}
	verifyChain(t, nodes[1], -1)
}

// TestClaimTwoNodes: workers on two stores drain 200 tasks; each task is
// claimed exactly once.
func TestClaimTwoNodes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dsn, schema := storeDSN(t), newSchema(t)
	nodes := []*postgres.Store{open(t, dsn, schema), open(t, dsn, schema)}
	const tasks, workersPerNode = 200, 4
	now := time.Now().UTC().Truncate(time.Microsecond)
	for i := range tasks {
		storetest.MustCreate(t, nodes[i%2], fmt.Sprintf("t%03d", i), now.Add(time.Duration(i)*time.Microsecond))
	}
	claimed := storetest.ClaimAll(t, []task.Store{nodes[0], nodes[1]}, workersPerNode, tasks, func(n, w, i int) task.ClaimParams {
		return task.ClaimParams{Owner: fmt.Sprintf("node%d/worker%d", n, w), Node: fmt.Sprint(n), Now: now.Add(time.Hour), LeaseFor: time.Minute, Limit: 1 + (w+i)%3}
	})
	for id, owner := range claimed {
		tk, err := nodes[0].GetTask(ctx, id, 0)
		if err != nil || tk.Attempt != 1 || tk.LeaseOwner != owner || tk.State != task.StateInProgress {
			t.Errorf("%s: %+v, %v; want attempt 1 leased to %s", id, tk, err, owner)
		}
	}
	verifyChain(t, nodes[0], tasks*3)
}

// TestAuditChainTwoNodes: writers of every kind on two stores build one
// linear chain.
func TestAuditChainTwoNodes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dsn, schema := storeDSN(t), newSchema(t)
	nodes := []*postgres.Store{open(t, dsn, schema), open(t, dsn, schema)}
	const writersPerNode, rounds = 4, 10
	now := time.Now().UTC().Truncate(time.Microsecond)
	var wg sync.WaitGroup
	errs := make(chan error, 2*writersPerNode*rounds)
	for n, s := range nodes {
		for w := range writersPerNode {
			wg.Go(func() {
				for r := range rounds {
					id := fmt.Sprintf("n%d-w%d-r%d", n, w, r)
					err := func() error {
						if _, err := s.CreateTask(ctx, task.CreateParams{
							Task: storetest.EchoTask(id), Steps: []task.Step{{To: task.StateValidated}, {To: task.StateQueued}},
							Audit: []task.AuditInput{{Kind: task.AuditSubmitted, TaskID: id}}, Now: now,
						}); err != nil { // 3 entries
							return err
						}
						if _, err := s.Claim(ctx, task.ClaimParams{Owner: id, Now: now, LeaseFor: time.Minute, Limit: 1, TaskID: id}); err != nil { // 1
							return err
						}
						if err := s.AppendAudit(ctx, []task.AuditInput{{Kind: "a", TaskID: id}, {Kind: "b", TaskID: id}}); err != nil { // 2
							return err
						}
						_, err := s.Transition(ctx, task.TransitionParams{TaskID: id, From: task.StateInProgress, To: task.StateSucceeded, LeaseOwner: id, Now: now}) // 1
						return err
					}()
					if err != nil {
						errs <- fmt.Errorf("%s: %w", id, err)
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	verifyChain(t, nodes[1], 2*writersPerNode*rounds*7)
}

// verifyChain checks the audit log with audit.Verify and, unless want < 0,
// its length.
func verifyChain(t *testing.T, s task.Store, want int) {
	t.Helper()
	r, err := audit.Verify(t.Context(), s)
	if err != nil {
		t.Fatalf("audit.Verify: %v", err)
	}
	if !r.OK {
		t.Fatalf("audit chain broken at %d: %s", r.FirstBad, r.Problem)
	}
	if want >= 0 && r.Entries != want {
		t.Errorf("audit log has %d entries, want %d", r.Entries, want)
	}
}

func TestStatementTimeout(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	showSetting := func(s *postgres.Store, name string) string {
		t.Helper()
		var v string
		if err := s.Pool().QueryRow(ctx, `SELECT current_setting($1)`, name).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	show := func(s *postgres.Store) string { return showSetting(s, "statement_timeout") }
	s := open(t, storeDSN(t), schema)
	if got := show(s); got != "30s" {
		t.Errorf("default statement_timeout = %q, want 30s", got)
	}
	if got := showSetting(s, "idle_in_transaction_session_timeout"); got != "10s" {
		t.Errorf("default idle_in_transaction_session_timeout = %q, want 10s", got)
	}
	s = open(t, withParam(t, storeDSN(t), "idle_in_transaction_session_timeout", "1min"), schema)
	if got := showSetting(s, "idle_in_transaction_session_timeout"); got != "1min" {
		t.Errorf("idle_in_transaction_session_timeout with 1min in the DSN = %q", got)
	}
	s2, err := postgres.OpenWith(ctx, storeDSN(t), postgres.Options{Schema: schema, StatementTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if got := show(s2); got != "2s" {
		t.Errorf("statement_timeout with Options.StatementTimeout 2s = %q", got)
	}
	s = open(t, withParam(t, storeDSN(t), "statement_timeout", "150ms"), schema)
	if got := show(s); got != "150ms" {
		t.Errorf("statement_timeout with statement_timeout=150ms in the DSN = %q", got)
	}

	// Another session holds the audit chain's head: the sealing statement
	// gives up after 150ms.
	c := conn(t, schema)
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck
	if _, err := tx.Exec(ctx, `SELECT 1 FROM audit_head FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = s.AppendAudit(ctx, []task.AuditInput{{Kind: "k"}})
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" { // query_canceled
		t.Fatalf("AppendAudit while the head is locked elsewhere: %v, want a statement timeout", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("statement timeout took %v", d)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendAudit(ctx, []task.AuditInput{{Kind: "k"}}); err != nil {
		t.Errorf("AppendAudit once the head is free: %v", err)
	}
	verifyChain(t, s, 1)
}

// TestTerminatedConnections: the server ends every connection of the store
// (as a restart does); the next operations reconnect and succeed.
func TestTerminatedConnections(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	app := "pactum-test-" + schema
	s := open(t, withParam(t, storeDSN(t), "application_name", app), schema)
	now := time.Now().UTC().Truncate(time.Microsecond)
	// Fill the pool with idle connections.
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() { storetest.MustCreate(t, s, fmt.Sprintf("a%d", i), now) })
	}
	wg.Wait()
	for round := range 3 {
		admin(t, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, app)
		id := fmt.Sprintf("b%d", round)
		storetest.MustCreate(t, s, id, now)
		if _, err := s.Claim(ctx, task.ClaimParams{Owner: "w", Now: now, LeaseFor: time.Minute, Limit: 1, TaskID: id}); err != nil {
			t.Fatalf("Claim after the connections were terminated: %v", err)
		}
		if _, err := s.GetTask(ctx, id, -1); err != nil {
			t.Fatalf("GetTask after the connections were terminated: %v", err)
		}
	}
	verifyChain(t, s, 4*2+3*3)
}

// TestOutage puts a proxy between the store and the server and cuts it, as
// a server restart would: operations fail with an error while it is down
// and succeed again once it is back.
func TestOutage(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dsn := storeDSN(t)
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		t.Skipf("the outage test needs a URL DSN with a host: %v", err)
	}
	p := startProxy(t, u.Host)
	u.Host = p.addr
	schema := newSchema(t)
	s, err := postgres.OpenWith(ctx, u.String(), postgres.Options{Schema: schema, Retries: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now().UTC().Truncate(time.Microsecond)
	storetest.MustCreate(t, s, "before", now)

	p.down()
	if _, err := s.GetTask(ctx, "before", -1); err == nil || !strings.HasPrefix(err.Error(), "postgres: ") {
		t.Errorf("GetTask during the outage: %v, want a postgres error", err)
	}
	_, err = s.CreateTask(ctx, task.CreateParams{Task: storetest.EchoTask("during"), Now: now, Steps: []task.Step{{To: task.StateValidated}}})
	if err == nil {
		t.Error("CreateTask during the outage succeeded")
	}
	if err := s.AppendAudit(ctx, []task.AuditInput{{Kind: "k"}}); err == nil {
		t.Error("AppendAudit during the outage succeeded")
	}

	p.up(t)
	storetest.MustCreate(t, s, "after", now)
	if _, err := s.GetTask(ctx, "before", -1); err != nil {
		t.Errorf("GetTask after the outage: %v", err)
	}
	if _, err := s.GetTask(ctx, "during", -1); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("GetTask of the task refused during the outage: %v, want ErrNotFound", err)
	}
	verifyChain(t, s, 4)
}

// proxy forwards TCP connections to a server until it is taken down.
type proxy struct {
	target, addr string
	mu           sync.Mutex
	ln           net.Listener
	conns        map[net.Conn]bool
}

func startProxy(t *testing.T, target string) *proxy {
	p := &proxy{target: target, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(p.down)
	return p
}

func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.pipe(c)
		}
	}()
}

func (p *proxy) pipe(c net.Conn) {
	u, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[u] = true, true
	p.mu.Unlock()
	go func() { _, _ = io.Copy(u, c); u.Close() }()
	_, _ = io.Copy(c, u)
	c.Close()
}

// down closes the listener and every connection.
func (p *proxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// up listens again on the same address.
func (p *proxy) up(t *testing.T) {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatalf("proxy: listen again on %s: %v", p.addr, err)
	}
	p.serve(ln)
}

// TestAppendOnly: the database itself refuses to rewrite history.
func TestAppendOnly(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	s := open(t, storeDSN(t), schema)
	storetest.MustCreate(t, s, "t1", time.Now())
	c := conn(t, schema)
	for _, q := range []string{
		`UPDATE task_records SET reason = 'x'`,
		`DELETE FROM task_records`,
		`TRUNCATE task_records CASCADE`,
		`UPDATE audit_log SET actor = 'x'`,
		`DELETE FROM audit_log`,
		`TRUNCATE audit_log`,
	} {
		if _, err := c.Exec(ctx, q); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v, want refusal", q, err)
		}
	}
}

func TestInvalidArguments(t *testing.T) {
	t.Parallel()
	s := open(t, storeDSN(t), newSchema(t))
	storetest.InvalidArguments(t, s)
}

func TestUseAfterCloseIsAnError(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, err := postgres.OpenWith(ctx, storeDSN(t), postgres.Options{Schema: newSchema(t)})
	if err != nil {
		t.Fatal(err)
	}
	storetest.UseAfterClose(t, s)
}

// BenchmarkLifecycle measures one task's whole path through the store, as
// store/sqlite's benchmark of the same name does: CreateTask (requested →
// validated → queued), Claim, Transition to succeeded: 3 transactions, 4
// records and 5 audit entries per task.
func BenchmarkLifecycle(b *testing.B) {
	for _, parallel := range []bool{false, true} {
		name := "serial"
		if parallel {
			name = "parallel"
		}
		b.Run(name, func(b *testing.B) {
			s := open(b, testDSN(b), newSchema(b))
			storetest.BenchLifecycle(b, s, parallel)
		})
	}
}

// undo reverts each migration after 0003 (the ones a test rolls back to
// watch them run on rows written by today's code).
var undo = map[int][]string{
	4: {`ALTER TABLE tasks DROP COLUMN turn_start`},
	5: {`ALTER TABLE push_configs DROP COLUMN delivered_seq`},
	6: {
		`DROP INDEX tasks_parent`, `DROP INDEX tasks_parent_step`,
		`ALTER TABLE tasks DROP COLUMN parent_task_id, DROP COLUMN step, DROP COLUMN children`,
		`ALTER TABLE task_records DROP COLUMN evidence`,
	},
	7: {
		`DROP TRIGGER audit_log_append_only_statement ON audit_log`,
		`DROP FUNCTION pactum_pend_new_task`, `DROP FUNCTION pactum_pend`,
		`DROP TABLE audit_pending`, `DROP SEQUENCE audit_pending_batch`,
	},
	8: {
		`DROP TRIGGER audit_pending_wait ON audit_pending`, `DROP FUNCTION pactum_pending_wait`,
		`DROP TABLE audit_pending_batches`,
	},
}

// rollBack reverts the schema's migrations newer than version, newest first.
func rollBack(t *testing.T, c *pgx.Conn, version int) {
	t.Helper()
	for v := postgres.SchemaVersion(); v > version; v-- {
		qs, ok := undo[v]
		if !ok {
			t.Fatalf("migration %d has no undo statements: add them to undo", v)
		}
		for _, q := range qs {
			if _, err := c.Exec(t.Context(), q); err != nil {
				t.Fatalf("undo migration %d: %s: %v", v, q, err)
			}
		}
	}
	if _, err := c.Exec(t.Context(), `DELETE FROM schema_migrations WHERE version > $1`, version); err != nil {
		t.Fatal(err)
	}
}
