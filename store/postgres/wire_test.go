package postgres_test

import (
	"testing"
	"time"

	"github.com/pactum/pactum/store/postgres"
	"github.com/pactum/pactum/store/storetest"
)

// TestWireCounts: WireCounts counts exactly what is sent. A blocking
// submission whose task ends within the hold costs two round trips and
// four statements (BEGIN and the key; the task's insert, with its
// records, history, artifacts and audit entries, and COMMIT); the first
// one on a connection costs one more round trip per batch, to prepare the
// statements.
func TestWireCounts(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	s, err := postgres.OpenWith(ctx, withParam(t, testDSN(t), "pool_max_conns", "1"),
		postgres.Options{Schema: schema, SpeculativeHold: time.Minute, SealEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	run := func(id string) (roundTrips, statements uint64) {
		rt0, st0 := s.WireCounts()
		var calls storetest.CommittedCalls
		specCreate(t, s, id, &calls)
		if _, err := succeed(ctx, s, id, "w1"); err != nil {
			t.Fatal(err)
		}
		calls.Check(t, false)
		rt1, st1 := s.WireCounts()
		return rt1 - rt0, st1 - st0
	}
	if rt, st := run("w0"); rt != 4 || st != 4 {
		t.Errorf("first task on the connection: %d round trips, %d statements; want 4 and 4", rt, st)
	}
	if rt, st := run("w1"); rt != 2 || st != 4 {
		t.Errorf("second task: %d round trips, %d statements; want 2 and 4", rt, st)
	}
	verifyChain(t, s, 12)
}
