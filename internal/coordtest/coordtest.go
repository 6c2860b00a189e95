// Package coordtest starts task Coordinators for the tests of the
// packages built on the core (contract gates, workflows, runs): one call
// instead of each test's own start, stop and close.
package coordtest

import (
	"context"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
)

// Start builds and starts a Coordinator with opts, whose Store the test
// has opened (PollInterval defaults to 20 ms, fast enough for a test),
// and registers with t.Cleanup the Coordinator's stop (5 s of drain) and
// then the store's close.
func Start(t testing.TB, opts task.Options) *task.Coordinator {
	t.Helper()
	if opts.PollInterval == 0 {
		opts.PollInterval = 20 * time.Millisecond
	}
	c, err := task.NewCoordinator(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c.Stop(ctx)
		_ = opts.Store.Close()
	})
	return c
}
