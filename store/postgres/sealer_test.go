package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pactum/pactum/store/postgres"
	"github.com/pactum/pactum/store/storetest"
	"github.com/pactum/pactum/task"
)

// openWith opens a store on schema with opts and closes it when the test
// ends.
func openWith(t *testing.T, schema string, opts postgres.Options) *postgres.Store {
	t.Helper()
	opts.Schema = schema
	s, err := postgres.OpenWith(t.Context(), storeDSN(t), opts)
	if err != nil {
		t.Fatalf("OpenWith(schema %s): %v", schema, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// count returns the number of rows of table in schema.
func count(t *testing.T, schema, table string) int {
	t.Helper()
	var n int
	if err := conn(t, schema).QueryRow(t.Context(), `SELECT count(*) FROM `+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// pending returns the number of audit entries pending in schema, in both
// tables: one per audit_pending row, one per element of an
// audit_pending_batches row.
func pending(t *testing.T, schema string) int {
	t.Helper()
	var n int
	if err := conn(t, schema).QueryRow(t.Context(), `SELECT (SELECT count(*) FROM audit_pending)
		+ (SELECT coalesce(sum(cardinality(kind)), 0) FROM audit_pending_batches)`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSealerTakeover: a node whose entries are still pending stops (its
// sealer never ran), and a sealer that had taken them dies mid-seal; a
// read-only verifier meanwhile sees a consistent, shorter chain; another
// node's background sealer then seals every entry, in each task's order,
// and the chain verifies.
func TestSealerTakeover(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	const tasks = 20
	a := openWith(t, schema, postgres.Options{SealEvery: -1}) // no background sealer
	now := time.Now().UTC().Truncate(time.Microsecond)
	for i := range tasks {
		id := fmt.Sprintf("t%02d", i)
		if _, err := a.CreateTask(ctx, task.CreateParams{
			Task: storetest.EchoTask(id), Steps: []task.Step{{To: task.StateValidated}, {To: task.StateQueued}},
			Audit: []task.AuditInput{{Kind: task.AuditSubmitted, TaskID: id}}, Now: now,
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Claim(ctx, task.ClaimParams{Owner: "w", Now: now, LeaseFor: time.Minute, Limit: 1, TaskID: id}); err != nil {
			t.Fatal(err)
		}
	}
	const want = tasks * 4
	if n, p := count(t, schema, "audit_log"), pending(t, schema); n != 0 || p != want {
		t.Fatalf("before any seal: %d sealed, %d pending; want 0, %d", n, p, want)
	}

	// A read-only verifier cannot seal: it sees the sealed chain (empty)
	// and leaves out the records whose entries are pending.
	ro, err := postgres.OpenWith(ctx, storeDSN(t), postgres.Options{Schema: schema, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	verifyChain(t, ro, 0)

	// A sealer takes the pending rows and the head, then dies before it
	// commits: its transaction rolls back and the rows are pending again.
	c := conn(t, schema)
	var pid int
	if err := c.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`SELECT pg_advisory_xact_lock(1936023916, hashtext(current_schema()))`, // sealLockClass
		`SELECT 1 FROM audit_head FOR UPDATE`,
		`DELETE FROM audit_pending_batches`,
		`INSERT INTO audit_log (seq, at, kind, prev_hash, hash) VALUES (1, now(), 'half-sealed', '', 'x')`,
	} {
		if _, err := tx.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	admin(t, `SELECT pg_terminate_backend($1)`, pid)
	if n, p := count(t, schema, "audit_log"), pending(t, schema); n != 0 || p != want {
		t.Fatalf("after the sealer died: %d sealed, %d pending; want 0, %d", n, p, want)
	}

	// The writing node stops; another node's background sealer finds the
	// entries on its tick and seals them all.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b := openWith(t, schema, postgres.Options{SealEvery: 10 * time.Millisecond})
	// A bound on the wait, so that a sealer that never comes fails the
	// test instead of hanging it.
	wait, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for pending(t, schema) > 0 {
		select {
		case <-wait.Done():
			t.Fatalf("the other node's sealer left %d entries pending", pending(t, schema))
		case <-time.After(10 * time.Millisecond):
		}
	}
	if n := count(t, schema, "audit_log"); n != want {
		t.Fatalf("sealed %d entries, want %d", n, want)
	}
	verifyChain(t, b, want)
	verifyChain(t, ro, want)
	checkTaskOrder(t, b, tasks)
}

// checkTaskOrder checks that each task's transition entries are in the
// chain in the order of its records, and that every task has its
// submission entry before its first transition.
func checkTaskOrder(t *testing.T, s task.Store, tasks int) {
	t.Helper()
	log := readAll(t, s)
	last := map[string]int{} // task id -> last record seq seen
	for _, e := range log {
		switch e.Kind {
		case task.AuditSubmitted:
			if _, seen := last[e.TaskID]; seen {
				t.Errorf("entry %d: submission of %s after its transitions", e.Seq, e.TaskID)
			}
			last[e.TaskID] = 0
		case task.AuditTransition:
			var r task.Record
			if err := json.Unmarshal(e.Data, &r); err != nil {
				t.Fatalf("entry %d: %v", e.Seq, err)
			}
			prev, seen := last[e.TaskID]
			if !seen || r.Seq != prev+1 {
				t.Errorf("entry %d: record %d of %s follows record %d (seen %v)", e.Seq, r.Seq, e.TaskID, prev, seen)
			}
			last[e.TaskID] = r.Seq
		}
	}
	if len(last) != tasks {
		t.Errorf("the chain has entries of %d tasks, want %d", len(last), tasks)
	}
}

// readAll reads the whole chain through AuditEntries.
func readAll(t *testing.T, s task.Store) []task.AuditEntry {
	t.Helper()
	var out []task.AuditEntry
	for {
		var after int64
		if len(out) > 0 {
			after = out[len(out)-1].Seq
		}
		page, err := s.AuditEntries(t.Context(), after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			return out
		}
		out = append(out, page...)
	}
}

// TestAuditChainThreeNodes: many writers on three nodes at once, their
// sealers sealing as they go, build one linear chain that verifies, with
// every entry exactly once and each task's entries in its order.
func TestAuditChainThreeNodes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	nodes := []*postgres.Store{openWith(t, schema, postgres.Options{}), openWith(t, schema, postgres.Options{}), openWith(t, schema, postgres.Options{})}
	const writersPerNode, rounds = 6, 15
	now := time.Now().UTC().Truncate(time.Microsecond)
	var wg sync.WaitGroup
	errs := make(chan error, len(nodes)*writersPerNode*rounds)
	for n, s := range nodes {
		for w := range writersPerNode {
			wg.Go(func() {
				for r := range rounds {
					id := fmt.Sprintf("n%d-w%d-r%02d", n, w, r)
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
						if r%5 == 0 {
							if err := s.AppendAudit(ctx, []task.AuditInput{{Kind: "note", TaskID: id}}); err != nil { // 1
								return err
							}
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
	tasks := len(nodes) * writersPerNode * rounds
	want := tasks*5 + len(nodes)*writersPerNode*(rounds/5)
	verifyChain(t, nodes[2], want)
	log := readAll(t, nodes[0])
	if len(log) != want {
		t.Fatalf("AuditEntries read %d entries, want %d", len(log), want)
	}
	perTask := map[string]map[string]int{}
	for _, e := range log {
		if perTask[e.TaskID] == nil {
			perTask[e.TaskID] = map[string]int{}
		}
		key := string(e.Kind)
		if e.Kind == task.AuditTransition {
			key += string(e.Data)
		}
		perTask[e.TaskID][key]++
	}
	for id, kinds := range perTask {
		for k, n := range kinds {
			if n != 1 {
				t.Errorf("task %s: entry %s sealed %d times", id, k, n)
			}
		}
	}
	checkTaskOrder(t, nodes[1], tasks)
	if p := pending(t, schema); p != 0 {
		t.Errorf("%d entries still pending after the chain was read", p)
	}
}

// TestMigrationAuditPending: a database at schema 6 whose chain was sealed
// by the previous binary (pactum_seal in the writers' transactions) is
// migrated in place; the sealer continues the chain from its head.
func TestMigrationAuditPending(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dsn, schema := storeDSN(t), newSchema(t)
	now := time.Now().UTC().Truncate(time.Microsecond)
	c := sealedAt(t, schema, now, 6)
	// The previous binary's writers sealed in their own transactions.
	if _, err := c.Exec(ctx, `SELECT pactum_seal($1, $2, ARRAY['old','old'], ARRAY['before',''], ARRAY['ops',''], ARRAY[NULL, '{"a":1}'::bytea])`,
		now, now.Format(time.RFC3339Nano)); err != nil {
		t.Fatal(err)
	}
	sealed := count(t, schema, "audit_log")
	if _, err := postgres.Migrate(ctx, dsn, postgres.Options{Schema: schema}); err != nil {
		t.Fatal(err)
	}
	s := openWith(t, schema, postgres.Options{})
	storetest.MustCreate(t, s, "after", now)
	if sealed != 4 {
		t.Fatalf("%d entries sealed before the migration, want 4", sealed)
	}
	verifyChain(t, s, sealed+2) // MustCreate: two transitions

}

// sealedAt returns a connection to schema holding one task created and
// sealed at now by this binary, the schema then rolled back to migration
// version (as the previous binary left it; rollBack says what that undoes).
func sealedAt(t *testing.T, schema string, now time.Time, version int) *pgx.Conn {
	t.Helper()
	s := openWith(t, schema, postgres.Options{SealEvery: -1})
	storetest.MustCreate(t, s, "before", now)
	if _, err := s.Seal(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	c := conn(t, schema)
	rollBack(t, c, version)
	return c
}
