package postgres

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// WireCounts returns what the store sent PostgreSQL since it was opened:
// the round trips (a batch, or a statement sent alone, that the client
// sent and then waited for the answer to) and the statements they
// carried, BEGIN and COMMIT included, on every connection of its pool and
// on the relay's listening connection. They are counted where pgx sends
// them (a query tracer), so they are exact: a batch holding a statement
// its connection has not prepared yet counts the extra round trip that
// prepares it, and a pooled connection checked by a ping after sitting
// idle counts the ping's. The node serves them as
// pactum_store_round_trips_total and pactum_store_statements_total; the
// benchmarks divide them by the tasks run.
func (s *Store) WireCounts() (roundTrips, statements uint64) {
	return s.wire.roundTrips.Load(), s.wire.statements.Load()
}

// wireCounter is the pgx tracer that counts round trips and statements.
type wireCounter struct {
	roundTrips, statements atomic.Uint64
}

var (
	_ pgx.QueryTracer   = (*wireCounter)(nil)
	_ pgx.BatchTracer   = (*wireCounter)(nil)
	_ pgx.PrepareTracer = (*wireCounter)(nil)
)

// install makes cfg's connections report to w, and counts the pings the
// pool sends before handing out a connection that sat idle (pgxpool's
// default rule: idle for more than a second).
func (w *wireCounter) install(cfg *pgxpool.Config) {
	cfg.ConnConfig.Tracer = w
	cfg.ShouldPing = func(_ context.Context, p pgxpool.ShouldPingParams) bool {
		if p.IdleDuration > pingAfterIdle {
			w.roundTrips.Add(1)
			return true
		}
		return false
	}
}

// pingAfterIdle is pgxpool's default ShouldPing threshold, kept.
const pingAfterIdle = time.Second

// TraceQueryStart implements pgx.QueryTracer: a statement sent alone is
// one round trip (its preparation, if any, is counted by TracePrepareEnd).
func (w *wireCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	w.roundTrips.Add(1)
	w.statements.Add(1)
	return ctx
}

// TraceQueryEnd implements pgx.QueryTracer.
func (w *wireCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceBatchStart implements pgx.BatchTracer: a batch is one round trip,
// two when the connection must prepare some of its statements first (pgx
// sends the preparations and waits for their descriptions).
func (w *wireCounter) TraceBatchStart(ctx context.Context, conn *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	n := uint64(d.Batch.Len())
	w.statements.Add(n)
	w.roundTrips.Add(1)
	if conn.Config().DefaultQueryExecMode == pgx.QueryExecModeCacheStatement {
		seen := prepared(conn)
		fresh := false
		for _, q := range d.Batch.QueuedQueries {
			if _, ok := seen[q.SQL]; !ok {
				seen[q.SQL] = struct{}{}
				fresh = true
			}
		}
		if fresh {
			w.roundTrips.Add(1)
		}
	}
	return ctx
}

// TraceBatchQuery implements pgx.BatchTracer.
func (w *wireCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

// TraceBatchEnd implements pgx.BatchTracer.
func (w *wireCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// TracePrepareStart implements pgx.PrepareTracer.
func (w *wireCounter) TracePrepareStart(ctx context.Context, conn *pgx.Conn, d pgx.TracePrepareStartData) context.Context {
	prepared(conn)[d.SQL] = struct{}{}
	return ctx
}

// TracePrepareEnd implements pgx.PrepareTracer: a statement prepared
// before it is run alone is a round trip of its own.
func (w *wireCounter) TracePrepareEnd(_ context.Context, _ *pgx.Conn, d pgx.TracePrepareEndData) {
	if !d.AlreadyPrepared {
		w.roundTrips.Add(1)
	}
}

// prepared is the set of statements conn has prepared, as far as the
// tracer saw: pgx's statement cache (512 statements, more than the store
// runs) keeps them for the connection's life. A connection is used by one
// goroutine at a time, so the set needs no lock.
func prepared(conn *pgx.Conn) map[string]struct{} {
	data := conn.PgConn().CustomData()
	seen, _ := data[preparedKey].(map[string]struct{})
	if seen == nil {
		seen = map[string]struct{}{}
		data[preparedKey] = seen
	}
	return seen
}

const preparedKey = "pactum.prepared"
