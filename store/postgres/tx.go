package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	expbackoff "github.com/pactum/pactum/internal/backoff"
	"github.com/pactum/pactum/store/internal/driver"
)

// txn is one transaction on one pooled connection. Statements are queued
// and sent together, as one pipeline, when the caller needs their results
// (flush); BEGIN travels with the first statements and COMMIT with the
// last, so a transaction costs one round trip per flush.
type txn struct {
	ctx   context.Context
	conn  *pgx.Conn
	batch *pgx.Batch
	// commitSent is set once COMMIT has been sent: from then on a lost
	// connection leaves the outcome unknown.
	commitSent bool
	// flushed is set by the first flush that sent statements: the
	// connection answered, so a failure after it is not a stale one.
	flushed bool
	// write marks a read-write transaction (inTx).
	write bool
	// audit holds the audit entries the transaction has yet to write to
	// audit_pending (sealAudit); pended is set once a statement that writes
	// some is queued.
	audit  pendBuf
	pended bool
	// fresh is a held creation whose task this transaction has yet to
	// insert (hold.go): its next write inserts the task as it leaves it.
	fresh *driver.NewTask
}

// queue adds a statement to the next flush.
func (x *txn) queue(sql string, args ...any) *pgx.QueuedQuery {
	return x.batch.Queue(sql, args...)
}

// flush sends the queued statements and runs their callbacks. The first
// error (the server's, or a callback's) is returned.
func (x *txn) flush() error {
	if x.batch.Len() == 0 {
		return nil
	}
	b := x.batch
	x.batch = &pgx.Batch{}
	x.flushed = true
	return x.conn.SendBatch(x.ctx, b).Close()
}

// commit sends what is queued, then the pending audit entries and COMMIT. A write
// transaction that has not heard from the server yet flushes first: a
// connection the server dropped while it sat idle in the pool then fails
// before COMMIT is sent, and the transaction is retried, instead of leaving
// its outcome unknown. The audit entries travel with COMMIT: their batch
// number (sqlPend) is taken as late as it can be.
func (x *txn) commit() error {
	if x.write && !x.flushed {
		if err := x.flush(); err != nil {
			return err
		}
	}
	if x.audit.len() > 0 {
		x.queue(sqlPend, x.takeAudit()...)
	}
	x.queue("COMMIT").Exec(func(ct pgconn.CommandTag) error {
		// COMMIT of a failed transaction answers ROLLBACK, without error.
		if ct.String() != "COMMIT" {
			return errRolledBack
		}
		return nil
	})
	x.commitSent = true
	if err := x.flush(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

var errRolledBack = errors.New("transaction was rolled back")

// errCommitUnknown marks a failure while COMMIT was in flight: the
// transaction may or may not have committed.
var errCommitUnknown = errors.New("connection lost during commit: the outcome is unknown")

// inTx runs fn in a read-write transaction and commits it, retrying the
// whole transaction when it failed in a way that left nothing committed
// and may pass on a second try (see retryable). fn must queue its
// statements on x and may flush as often as it needs results; it must not
// queue COMMIT. An error from fn rolls the transaction back and is returned
// as is.
func (s *Store) inTx(ctx context.Context, fn func(x *txn) error) error {
	return s.retry(ctx, func() (bool, error) {
		conn, err := s.pool.Acquire(ctx)
		if err != nil {
			return false, err
		}
		x := &txn{ctx: ctx, conn: conn.Conn(), batch: &pgx.Batch{}, write: true}
		defer func() {
			s.endTx(x)
			conn.Release()
		}()
		x.queue("BEGIN")
		if err := fn(x); err != nil {
			return false, err
		}
		err = x.commit()
		if err == nil && x.pended {
			s.wakeSealer()
		}
		return x.commitSent, err
	})
}

// inReadTx runs fn in a read-only REPEATABLE READ transaction (one snapshot
// for all its statements); fn's last flush may be left to inReadTx, which
// sends what is queued with the COMMIT.
func (s *Store) inReadTx(ctx context.Context, fn func(x *txn) error) error {
	return s.retry(ctx, func() (bool, error) {
		conn, err := s.pool.Acquire(ctx)
		if err != nil {
			return false, err
		}
		x := &txn{ctx: ctx, conn: conn.Conn(), batch: &pgx.Batch{}}
		defer func() {
			s.endTx(x)
			conn.Release()
		}()
		x.queue("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
		if err := fn(x); err != nil {
			return false, err
		}
		// Nothing to lose if the outcome of a read-only commit is unknown.
		return false, x.commit()
	})
}

// endTx rolls back a transaction that did not end, so the connection goes
// back to the pool clean. A connection that cannot be rolled back is closed
// and the pool drops it.
func (s *Store) endTx(x *txn) {
	if x.conn.IsClosed() || x.conn.PgConn().TxStatus() == 'I' {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(x.ctx), 5*time.Second)
	defer cancel()
	if _, err := x.conn.Exec(ctx, "ROLLBACK"); err != nil {
		s.log.Warn("postgres: rollback failed; dropping the connection", slog.Any("err", err))
		_ = x.conn.Close(ctx)
	}
}

// retry runs op until it succeeds, fails in a way that retrying cannot fix,
// or s.retries further attempts failed too. op reports whether it sent
// COMMIT before failing: a lost connection is retried only before.
func (s *Store) retry(ctx context.Context, op func() (commitSent bool, err error)) error {
	for attempt := 0; ; attempt++ {
		commitSent, err := op()
		if err == nil {
			return nil
		}
		retry, lost := classify(err, commitSent)
		if lost {
			// After a server restart every pooled connection is dead; drop
			// them all rather than meeting them one failure at a time.
			s.pool.Reset()
			if commitSent {
				err = fmt.Errorf("%w: %w", errCommitUnknown, err)
			}
		}
		if !retry || attempt >= s.retries || ctx.Err() != nil {
			return err
		}
		pause := backoff(attempt)
		s.log.Warn("postgres: transaction failed; retrying", slog.Int("attempt", attempt+1),
			slog.Duration("pause", pause), slog.Any("err", err))
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// backoff is the pause before retry attempt+1: 20ms, 40ms, 80ms, … up to
// 1s, each with up to half again of random jitter so that nodes that
// collided do not collide again. The shared arithmetic takes its jitter
// off the top, so it runs from 1.5 times those (30ms … 1.5s) less up to a
// third: the same range, [d, 1.5d].
func backoff(attempt int) time.Duration {
	return txBackoff.Delay(attempt + 1)
}

var txBackoff = expbackoff.Exponential{Initial: 30 * time.Millisecond, Max: 1500 * time.Millisecond, Jitter: 1.0 / 3}

// classify says whether err, from a transaction that sent COMMIT or not,
// is worth retrying, and whether it means the connection was lost.
//
// An ERROR from the server aborted the transaction and left the session
// usable: it is retried when it is a serialization failure or a deadlock.
// A lost connection (a FATAL from a server shutting down, a network error)
// is retried unless COMMIT had been sent, since the transaction may then
// have committed.
func classify(err error, commitSent bool) (retry, lost bool) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false, false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Severity == "ERROR" {
		switch pe.Code {
		case "40001", "40P01": // serialization_failure, deadlock_detected
			return true, false
		}
		return false, false
	}
	if !connectionLost(err) {
		return false, false
	}
	return !commitSent, true
}

// connectionLost reports whether err means the connection to the server
// was lost or could not be made.
func connectionLost(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03": // admin_shutdown, crash_shutdown, cannot_connect_now
			return true
		case strings.HasPrefix(pe.Code, "08"): // connection_exception
			return true
		case strings.HasPrefix(pe.Code, "28"), pe.Code == "3D000": // bad credentials, no such database
			// A FATAL at connection time that a new connection would meet
			// again.
			return false
		}
		return pe.Severity == "FATAL" || pe.Severity == "PANIC"
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	switch {
	case pgconn.SafeToRetry(err), errors.As(err, &ce), errors.As(err, &ne),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EPIPE):
		return true
	}
	return false
}
