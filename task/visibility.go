package task

import "context"

// Who may see a task is decided here, once, for every caller of the
// Coordinator: A2A, MCP, the CLI, library code and whatever comes next.

// visible reports whether the caller ctx carries (WithCaller) may see t. A
// request without a caller (no authentication configured, the CLI, a
// library call) sees every task; an authenticated caller sees only the
// tasks submitted under its name (Envelope.Actor).
func visible(ctx context.Context, t *Task) bool {
	c := Caller(ctx)
	return c == "" || t.Envelope.Actor == c
}

// read returns the task id as the caller in ctx may see it: a task it may
// not see is answered exactly as a task that does not exist, so that the
// answer does not even tell that it exists. historyLength < 0 reads the
// whole history.
func (c *Coordinator) read(ctx context.Context, id string, historyLength int) (*Task, error) {
	t, err := c.store.GetTask(ctx, id, historyLength)
	if err != nil {
		return nil, c.notFound(id, err)
	}
	if !visible(ctx, t) {
		return nil, c.notFound(id, ErrNotFound)
	}
	return t, nil
}

// checkVisible answers, for an operation that does not otherwise read the
// task, whether the caller in ctx may address task id: nil, or the error of
// a task that does not exist. Without a caller it reads nothing.
func (c *Coordinator) checkVisible(ctx context.Context, id string) error {
	if Caller(ctx) == "" {
		return nil
	}
	_, err := c.read(ctx, id, 0)
	return err
}
