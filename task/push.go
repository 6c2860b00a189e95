package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// SetPushConfig stores (or replaces) a push config of an existing task; the
// audit entry (which never holds the token or credentials) commits with it.
// An authenticated caller (WithCaller) addresses only its own tasks, here
// and in PushConfig, PushConfigs and DeletePushConfig: another actor's task
// is CodeNotFound, as a task that does not exist.
func (c *Coordinator) SetPushConfig(ctx context.Context, cfg PushConfig, actor string) error {
	if cfg.TaskID == "" || cfg.ID == "" || cfg.URL == "" {
		return Errorf(CodeInvalidArgument, "push config needs a task id, an id and a url")
	}
	if err := c.checkVisible(ctx, cfg.TaskID); err != nil {
		return err
	}
	cfg.CreatedAt = c.now()
	if err := c.store.PutPushConfig(ctx, cfg, []AuditInput{pushAudit("set", cfg, actor)}); err != nil {
		return c.notFound(cfg.TaskID, err)
	}
	c.pushConfigChanged(cfg.TaskID)
	return nil
}

// pushConfigChanged tells the other nodes that a task's push configs
// changed: the node running the task may have cached them.
func (c *Coordinator) pushConfigChanged(taskID string) {
	if c.relay != nil {
		c.relay.Send(Event{Kind: EventPushConfig, TaskID: taskID, Node: c.node, At: c.now()})
	}
}

// PushConfig returns one push config of a task.
func (c *Coordinator) PushConfig(ctx context.Context, taskID, id string) (*PushConfig, error) {
	if err := c.checkVisible(ctx, taskID); err != nil {
		return nil, err
	}
	cfg, err := c.store.GetPushConfig(ctx, taskID, id)
	if errors.Is(err, ErrNotFound) {
		return nil, &Error{Code: CodeNotFound, Message: fmt.Sprintf("task %s has no push config %q", taskID, id), Err: err}
	}
	return cfg, err
}

// HasPushConfigs reports whether any task has a push config.
func (c *Coordinator) HasPushConfigs(ctx context.Context) (bool, error) {
	return c.store.HasPushConfigs(ctx)
}

// PushConfigs returns a task's push configs.
func (c *Coordinator) PushConfigs(ctx context.Context, taskID string) ([]PushConfig, error) {
	if err := c.checkVisible(ctx, taskID); err != nil {
		return nil, err
	}
	return c.store.ListPushConfigs(ctx, taskID)
}

// DeletePushConfig deletes a push config; the audit entry commits with it.
// Deleting one that does not exist is a CodeNotFound error.
func (c *Coordinator) DeletePushConfig(ctx context.Context, taskID, id, actor string) error {
	if err := c.checkVisible(ctx, taskID); err != nil {
		return err
	}
	err := c.store.DeletePushConfig(ctx, taskID, id, []AuditInput{pushAudit("delete", PushConfig{TaskID: taskID, ID: id}, actor)})
	if errors.Is(err, ErrNotFound) {
		return &Error{Code: CodeNotFound, Message: fmt.Sprintf("task %s has no push config %q", taskID, id), Err: err}
	}
	if err == nil {
		c.pushConfigChanged(taskID)
	}
	return err
}

// MarkPushParams names a push config and the task seq it has been sent.
type MarkPushParams struct {
	TaskID, ID string
	Seq        int
}

// PushBacklogParams selects a page of Store.PushBacklog.
type PushBacklogParams struct {
	// UpdatedBefore leaves out tasks updated at or after it: their
	// notifications may still be under way.
	UpdatedBefore time.Time
	// AfterTaskID and AfterID are the last item of the previous page
	// (empty for the first).
	AfterTaskID, AfterID string
	// Limit bounds the page (1 … 1000).
	Limit int
}

// PushBacklogItem is a push config that has not been sent its task's
// latest state.
type PushBacklogItem struct {
	Config PushConfig
	// DeliveredSeq is the task seq the config was last sent; TaskSeq the
	// task's seq now.
	DeliveredSeq, TaskSeq int
}

// MarkPushDelivered records that a push config has been sent its task as
// of seq (Store.MarkPushDelivered).
func (c *Coordinator) MarkPushDelivered(ctx context.Context, taskID, id string, seq int) error {
	return c.store.MarkPushDelivered(ctx, MarkPushParams{TaskID: taskID, ID: id, Seq: seq})
}

// PushBacklog returns push configs not yet sent their task's latest state
// (Store.PushBacklog).
func (c *Coordinator) PushBacklog(ctx context.Context, p PushBacklogParams) ([]PushBacklogItem, error) {
	if p.Limit < 1 || p.Limit > 1000 {
		return nil, Errorf(CodeInvalidArgument, "push backlog limit %d out of range [1, 1000]", p.Limit)
	}
	return c.store.PushBacklog(ctx, p)
}

func pushAudit(op string, cfg PushConfig, actor string) AuditInput {
	data, _ := json.Marshal(map[string]string{"op": op, "id": cfg.ID, "url": cfg.URL})
	return AuditInput{Kind: AuditPushConfig, TaskID: cfg.TaskID, Actor: actor, Data: data}
}
