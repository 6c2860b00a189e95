package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pactum/pactum/store/internal/driver"
	"github.com/pactum/pactum/task"
)

// PutPushConfig implements task.Store. The task must exist (ErrNotFound).
// The audit entries are sealed at c.CreatedAt.
func (s *Store) PutPushConfig(ctx context.Context, c task.PushConfig, audit []task.AuditInput) error {
	if c.TaskID == "" || c.ID == "" {
		return task.Errorf(task.CodeInvalidArgument, "postgres: put push config: TaskID and ID are required")
	}
	s.settleHeld(c.TaskID)
	if err := driver.CheckAudit(audit); err != nil {
		return fmt.Errorf("postgres: put push config %q of task %q: %w", c.ID, c.TaskID, err)
	}
	var auth []byte
	if len(c.Auth) > 0 {
		auth = []byte(c.Auth)
	}
	created := driver.Norm(c.CreatedAt)
	err := s.inTx(ctx, func(x *txn) error {
		var exists bool
		x.queue(sqlTaskExists, c.TaskID).QueryRow(func(r pgx.Row) error { return r.Scan(&exists) })
		if err := x.flush(); err != nil {
			return err
		}
		if !exists {
			return fmt.Errorf("task %q: %w", c.TaskID, task.ErrNotFound)
		}
		x.queue(sqlPutPush, c.TaskID, c.ID, c.URL, c.Token, auth, created, c.Owed)
		x.sealAudit(created, audit)
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: put push config %q of task %q: %w", c.ID, c.TaskID, err)
	}
	return nil
}

// GetPushConfig implements task.Store.
func (s *Store) GetPushConfig(ctx context.Context, taskID, id string) (*task.PushConfig, error) {
	var c *task.PushConfig
	err := s.retry(ctx, func() (bool, error) {
		var err error
		c, err = scanPush(s.pool.QueryRow(ctx, sqlGetPush, taskID, id))
		return false, err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres: push config %q of task %q: %w", id, taskID, task.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: push config %q of task %q: %w", id, taskID, err)
	}
	return c, nil
}

// HasPushConfigs implements task.Store.
func (s *Store) HasPushConfigs(ctx context.Context) (bool, error) {
	var has bool
	err := s.retry(ctx, func() (bool, error) {
		return false, s.pool.QueryRow(ctx, sqlAnyPush).Scan(&has)
	})
	if err != nil {
		return false, fmt.Errorf("postgres: any push configs: %w", err)
	}
	return has, nil
}

// ListPushConfigs implements task.Store: the task's configs ordered by
// CreatedAt, then ID. A task that does not exist is ErrNotFound.
func (s *Store) ListPushConfigs(ctx context.Context, taskID string) ([]task.PushConfig, error) {
	var out []task.PushConfig
	var exists bool
	err := s.inReadTx(ctx, func(x *txn) error {
		out = nil
		x.queue(sqlTaskExists, taskID).QueryRow(func(r pgx.Row) error { return r.Scan(&exists) })
		x.queue(sqlListPush, taskID).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				c, err := scanPush(rows)
				if err != nil {
					return err
				}
				out = append(out, *c)
			}
			return rows.Err()
		})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: list push configs of task %q: %w", taskID, err)
	}
	if !exists {
		return nil, fmt.Errorf("postgres: list push configs: task %q: %w", taskID, task.ErrNotFound)
	}
	return out, nil
}

// DeletePushConfig implements task.Store; deleting a config that does not
// exist is ErrNotFound and writes nothing. The audit entries are sealed at
// the store's clock (Options.Now).
func (s *Store) DeletePushConfig(ctx context.Context, taskID, id string, audit []task.AuditInput) error {
	if err := driver.CheckAudit(audit); err != nil {
		return fmt.Errorf("postgres: delete push config %q of task %q: %w", id, taskID, err)
	}
	s.settleHeld(taskID)
	now := driver.Norm(s.now())
	err := s.inTx(ctx, func(x *txn) error {
		var deleted bool
		x.queue(sqlDeletePush, taskID, id).Exec(func(ct pgconn.CommandTag) error {
			deleted = ct.RowsAffected() > 0
			return nil
		})
		if err := x.flush(); err != nil {
			return err
		}
		if !deleted {
			return task.ErrNotFound
		}
		x.sealAudit(now, audit)
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: delete push config %q of task %q: %w", id, taskID, err)
	}
	return nil
}

func scanPush(sc scanner) (*task.PushConfig, error) {
	var c task.PushConfig
	var auth []byte
	var created time.Time
	if err := sc.Scan(&c.TaskID, &c.ID, &c.URL, &c.Token, &auth, &created); err != nil {
		return nil, err
	}
	if len(auth) > 0 {
		c.Auth = json.RawMessage(auth)
	}
	c.CreatedAt = created.UTC()
	return &c, nil
}

// MarkPushDelivered implements task.Store. The update only ever raises the
// delivered seq, so retrying it is safe.
func (s *Store) MarkPushDelivered(ctx context.Context, p task.MarkPushParams) error {
	s.settleHeld(p.TaskID)
	err := s.retry(ctx, func() (bool, error) {
		_, err := s.pool.Exec(ctx, sqlMarkPush, p.TaskID, p.ID, p.Seq)
		return false, err
	})
	if err != nil {
		return fmt.Errorf("postgres: mark push config %q of task %q delivered: %w", p.ID, p.TaskID, err)
	}
	return nil
}

// PushBacklog implements task.Store.
func (s *Store) PushBacklog(ctx context.Context, p task.PushBacklogParams) ([]task.PushBacklogItem, error) {
	var out []task.PushBacklogItem
	err := s.retry(ctx, func() (bool, error) {
		out = nil
		rows, err := s.pool.Query(ctx, sqlPushBacklog, driver.Norm(p.UpdatedBefore), p.AfterTaskID, p.AfterID, p.Limit)
		if err != nil {
			return false, err
		}
		defer rows.Close()
		for rows.Next() {
			var it task.PushBacklogItem
			var auth []byte
			var created time.Time
			if err := rows.Scan(&it.Config.TaskID, &it.Config.ID, &it.Config.URL, &it.Config.Token, &auth, &created, &it.DeliveredSeq, &it.TaskSeq); err != nil {
				return false, err
			}
			if len(auth) > 0 {
				it.Config.Auth = json.RawMessage(auth)
			}
			it.Config.CreatedAt = created.UTC()
			out = append(out, it)
		}
		return false, rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: push backlog: %w", err)
	}
	return out, nil
}
