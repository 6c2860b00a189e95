package audit_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pactum/pactum/audit"
	"github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
)

// failingScan is a real SQLite store whose chain walk fails after a few
// entries, as a read of a corrupt page or a lost connection would.
type failingScan struct {
	*sqlite.Store
	after int
}

var errRead = errors.New("database disk image is malformed")

func (f failingScan) ScanAudit(ctx context.Context, head func(int64, string, bool) error,
	entry func(*task.AuditEntry) error, record func(*task.Record) error) error {
	n := 0
	return f.Store.ScanAudit(ctx, head, func(e *task.AuditEntry) error {
		if n == f.after {
			return errRead
		}
		n++
		return entry(e)
	}, record)
}

// pagedOnly hides ScanAudit, so Verify pages through AuditEntries, whose
// second page fails.
type pagedOnly struct {
	task.Store
	calls *int
}

func (p pagedOnly) AuditEntries(ctx context.Context, after int64, limit int) ([]task.AuditEntry, error) {
	*p.calls++
	if *p.calls > 1 {
		return nil, errRead
	}
	return p.Store.AuditEntries(ctx, after, 5)
}

// TestVerifyPartialReadIsNotOK: a walk that cannot read the whole chain
// is an error saying so, and no report, never an OK one.
func TestVerifyPartialReadIsNotOK(t *testing.T) {
	t.Parallel()
	path, _ := chain(t)
	s, err := sqlite.Open(t.Context(), "sqlite://"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var calls int
	for name, st := range map[string]task.Store{"scan": failingScan{Store: s, after: 7}, "pages": pagedOnly{Store: s, calls: &calls}} {
		rep, err := audit.Verify(t.Context(), st)
		if !errors.Is(err, errRead) || !strings.Contains(err.Error(), "could not read the whole chain") || rep != nil {
			t.Errorf("%s: Verify after a failed read: report %+v, err %v; want no report and an error saying the chain was not read whole", name, rep, err)
		}
	}
}
