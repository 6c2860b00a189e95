package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	pg := func(severity, code string) error {
		return fmt.Errorf("wrapped: %w", &pgconn.PgError{Severity: severity, Code: code})
	}
	for _, tc := range []struct {
		name        string
		err         error
		commitSent  bool
		retry, lost bool
	}{
		{"serialization failure", pg("ERROR", "40001"), false, true, false},
		{"deadlock", pg("ERROR", "40P01"), false, true, false},
		{"deadlock at commit", pg("ERROR", "40P01"), true, true, false},
		{"unique violation", pg("ERROR", "23505"), false, false, false},
		{"statement timeout", pg("ERROR", "57014"), false, false, false},
		{"admin shutdown", pg("FATAL", "57P01"), false, true, true},
		{"admin shutdown during commit", pg("FATAL", "57P01"), true, false, true},
		{"cannot connect now", pg("FATAL", "57P03"), false, true, true},
		{"connection failure", pg("FATAL", "08006"), false, true, true},
		{"bad password", pg("FATAL", "28P01"), false, false, false},
		{"no database", pg("FATAL", "3D000"), false, false, false},
		{"EOF", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), false, true, true},
		{"EOF during commit", fmt.Errorf("read: %w", io.EOF), true, false, true},
		{"reset", fmt.Errorf("write: %w", syscall.ECONNRESET), false, true, true},
		{"canceled", fmt.Errorf("x: %w", context.Canceled), false, false, false},
		{"other", errors.New("boom"), false, false, false},
	} {
		retry, lost := classify(tc.err, tc.commitSent)
		if retry != tc.retry || lost != tc.lost {
			t.Errorf("%s: classify = retry %v, lost %v; want %v, %v", tc.name, retry, lost, tc.retry, tc.lost)
		}
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	for attempt := range 20 {
		d := backoff(attempt)
		if d <= 0 || d > 1500*time.Millisecond {
			t.Errorf("backoff(%d) = %v", attempt, d)
		}
	}
}
