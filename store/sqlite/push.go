package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pactum/pactum/store/internal/driver"
	"github.com/pactum/pactum/task"
)

// PutPushConfig implements task.Store. The task must exist (ErrNotFound).
func (s *Store) PutPushConfig(ctx context.Context, c task.PushConfig, audit []task.AuditInput) error {
	if c.TaskID == "" || c.ID == "" {
		return task.Errorf(task.CodeInvalidArgument, "sqlite: put push config: TaskID and ID are required")
	}
	if err := driver.CheckAudit(audit); err != nil {
		return fmt.Errorf("sqlite: put push config %q of task %q: %w", c.ID, c.TaskID, err)
	}
	var auth any
	if len(c.Auth) > 0 {
		auth = []byte(c.Auth)
	}
	err := s.inWriteTx(ctx, func(x *txn) error {
		var one int
		if err := x.queryRow(x.st.taskExists, c.TaskID).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("task %q: %w", c.TaskID, task.ErrNotFound)
		} else if err != nil {
			return fmt.Errorf("task %q: %w", c.TaskID, err)
		}
		if _, err := x.exec(x.st.putPush, c.TaskID, c.ID, c.URL, c.Token, auth, driver.Norm(c.CreatedAt).UnixMicro(), c.Owed); err != nil {
			return err
		}
		return x.seal(driver.Norm(c.CreatedAt), audit)
	})
	if err != nil {
		return fmt.Errorf("sqlite: put push config %q of task %q: %w", c.ID, c.TaskID, err)
	}
	return nil
}

// GetPushConfig implements task.Store.
func (s *Store) GetPushConfig(ctx context.Context, taskID, id string) (*task.PushConfig, error) {
	c, err := scanPush(s.r.getPush.db.QueryRowContext(ctx, taskID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sqlite: push config %q of task %q: %w", id, taskID, task.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: push config %q of task %q: %w", id, taskID, err)
	}
	return c, nil
}

// ListPushConfigs implements task.Store: the task's configs ordered by
// CreatedAt, then ID. A task that does not exist is ErrNotFound.
func (s *Store) ListPushConfigs(ctx context.Context, taskID string) ([]task.PushConfig, error) {
	var out []task.PushConfig
	err := s.inReadTx(ctx, func(x *txn) error {
		var one int
		if err := x.queryRow(x.st.taskExists, taskID).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("task %q: %w", taskID, task.ErrNotFound)
		} else if err != nil {
			return fmt.Errorf("task %q: %w", taskID, err)
		}
		rows, err := x.query(x.st.listPush, taskID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			c, err := scanPush(rows)
			if err != nil {
				return err
			}
			out = append(out, *c)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: list push configs of task %q: %w", taskID, err)
	}
	return out, nil
}

// HasPushConfigs implements task.Store.
func (s *Store) HasPushConfigs(ctx context.Context) (bool, error) {
	var has bool
	if err := s.r.anyPush.db.QueryRowContext(ctx).Scan(&has); err != nil {
		return false, fmt.Errorf("sqlite: any push configs: %w", err)
	}
	return has, nil
}

// DeletePushConfig implements task.Store; deleting a config that does not
// exist is ErrNotFound and writes nothing.
func (s *Store) DeletePushConfig(ctx context.Context, taskID, id string, audit []task.AuditInput) error {
	if err := driver.CheckAudit(audit); err != nil {
		return fmt.Errorf("sqlite: delete push config %q of task %q: %w", id, taskID, err)
	}
	now := driver.Norm(s.now())
	err := s.inWriteTx(ctx, func(x *txn) error {
		n, err := x.exec(x.st.deletePush, taskID, id)
		if err != nil {
			return err
		}
		if n == 0 {
			return task.ErrNotFound
		}
		return x.seal(now, audit)
	})
	if err != nil {
		return fmt.Errorf("sqlite: delete push config %q of task %q: %w", id, taskID, err)
	}
	return nil
}

func scanPush(sc scanner) (*task.PushConfig, error) {
	var c task.PushConfig
	var auth []byte
	var created int64
	if err := sc.Scan(&c.TaskID, &c.ID, &c.URL, &c.Token, &auth, &created); err != nil {
		return nil, err
	}
	if len(auth) > 0 {
		c.Auth = json.RawMessage(auth)
	}
	c.CreatedAt = driver.FromMicros(created)
	return &c, nil
}

// MarkPushDelivered implements task.Store.
func (s *Store) MarkPushDelivered(ctx context.Context, p task.MarkPushParams) error {
	err := s.inWriteTx(ctx, func(x *txn) error {
		_, err := x.exec(x.st.markPush, p.Seq, p.TaskID, p.ID, p.Seq)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: mark push config %q of task %q delivered: %w", p.ID, p.TaskID, err)
	}
	return nil
}

// PushBacklog implements task.Store.
func (s *Store) PushBacklog(ctx context.Context, p task.PushBacklogParams) ([]task.PushBacklogItem, error) {
	rows, err := s.r.pushBacklog.db.QueryContext(ctx, driver.Norm(p.UpdatedBefore).UnixMicro(), p.AfterTaskID, p.AfterID, p.Limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: push backlog: %w", err)
	}
	defer rows.Close()
	var out []task.PushBacklogItem
	for rows.Next() {
		var it task.PushBacklogItem
		var auth []byte
		var created int64
		if err := rows.Scan(&it.Config.TaskID, &it.Config.ID, &it.Config.URL, &it.Config.Token, &auth, &created, &it.DeliveredSeq, &it.TaskSeq); err != nil {
			return nil, fmt.Errorf("sqlite: push backlog: %w", err)
		}
		if len(auth) > 0 {
			it.Config.Auth = json.RawMessage(auth)
		}
		it.Config.CreatedAt = driver.FromMicros(created)
		out = append(out, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: push backlog: %w", err)
	}
	return out, nil
}
