package a2aserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/push"
	"github.com/pactum/pactum/task"
)

// pushConfigFromA2A validates a caller's push configuration and converts it
// for the store. The task id is left as given.
func (h *Handler) pushConfigFromA2A(c *a2a.PushConfig) (*task.PushConfig, error) {
	if _, err := push.ValidateURL(c.URL, h.allowPrivate); err != nil {
		return nil, invalidParams(err.Error())
	}
	out := &task.PushConfig{TaskID: string(c.TaskID), ID: c.ID, URL: c.URL, Token: c.Token}
	if out.ID == "" {
		out.ID = task.NewID()
	}
	if len(out.ID) > 512 || len(out.Token) > 4096 {
		return nil, invalidParams("push notification config id or token is too long")
	}
	if c.Auth != nil {
		if c.Auth.Scheme == "" {
			return nil, invalidParams("push notification authentication.scheme is required when authentication is given")
		}
		raw, err := json.Marshal(c.Auth)
		if err != nil {
			return nil, invalidParams(fmt.Sprintf("push notification authentication: %v", err))
		}
		out.Auth = raw
	}
	return out, nil
}

// pushConfigToA2A converts a stored push configuration for the wire.
func pushConfigToA2A(c task.PushConfig) *a2a.PushConfig {
	out := &a2a.PushConfig{TaskID: a2a.TaskID(c.TaskID), ID: c.ID, URL: c.URL, Token: c.Token}
	if len(c.Auth) > 0 {
		var auth a2a.PushAuthInfo
		if json.Unmarshal(c.Auth, &auth) == nil {
			out.Auth = &auth
		}
	}
	return out
}

// putPushConfig stores c, records it in the audit trail and tells the
// Pusher.
func (h *Handler) putPushConfig(ctx context.Context, op string, c task.PushConfig, actor string) error {
	if err := h.coord.SetPushConfig(ctx, c, actor); err != nil {
		return h.wireErr(ctx, op, fmt.Errorf("store push config: %w", err))
	}
	if h.pusher != nil {
		h.pusher.Invalidate(c.TaskID)
	}
	return nil
}

// CreateTaskPushConfig implements a2asrv.RequestHandler. The configuration
// is stored durably; a configuration with the id of an existing one
// replaces it.
func (h *Handler) CreateTaskPushConfig(ctx context.Context, req *a2a.PushConfig) (*a2a.PushConfig, error) {
	ctx = withCaller(ctx)
	if err := h.extensions(ctx); err != nil {
		return nil, err
	}
	if req == nil {
		return nil, invalidParams("push notification config is required")
	}
	id := string(req.TaskID)
	t, err := h.owned(ctx, "CreateTaskPushConfig", id, 0)
	if err != nil {
		return nil, err
	}
	c, err := h.pushConfigFromA2A(req)
	if err != nil {
		return nil, err
	}
	c.TaskID = id
	if err := h.putPushConfig(ctx, "CreateTaskPushConfig", *c, t.Envelope.Actor); err != nil {
		return nil, err
	}
	return pushConfigToA2A(*c), nil
}

// GetTaskPushConfig implements a2asrv.RequestHandler.
func (h *Handler) GetTaskPushConfig(ctx context.Context, req *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	ctx = withCaller(ctx)
	if err := h.extensions(ctx); err != nil {
		return nil, err
	}
	if req == nil {
		return nil, invalidParams("task id is required")
	}
	id := string(req.TaskID)
	if _, err := h.owned(ctx, "GetTaskPushConfig", id, 0); err != nil {
		return nil, err
	}
	if req.ID == "" {
		return nil, invalidParams("push notification config id is required")
	}
	c, err := h.coord.PushConfig(ctx, id, req.ID)
	if err != nil {
		if errors.Is(err, task.ErrNotFound) {
			return nil, a2a.NewError(a2a.ErrTaskNotFound, fmt.Sprintf("task %s has no push notification config %q", id, req.ID))
		}
		return nil, h.wireErr(ctx, "GetTaskPushConfig", err)
	}
	return pushConfigToA2A(*c), nil
}

// ListTaskPushConfigs implements a2asrv.RequestHandler. All of the task's
// configurations are returned on one page.
func (h *Handler) ListTaskPushConfigs(ctx context.Context, req *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	ctx = withCaller(ctx)
	if err := h.extensions(ctx); err != nil {
		return nil, err
	}
	if req == nil {
		return nil, invalidParams("task id is required")
	}
	id := string(req.TaskID)
	if _, err := h.owned(ctx, "ListTaskPushConfigs", id, 0); err != nil {
		return nil, err
	}
	cs, err := h.coord.PushConfigs(ctx, id)
	if err != nil {
		return nil, h.wireErr(ctx, "ListTaskPushConfigs", err)
	}
	out := &a2a.ListTaskPushConfigResponse{Configs: make([]*a2a.PushConfig, 0, len(cs))}
	for _, c := range cs {
		out.Configs = append(out.Configs, pushConfigToA2A(c))
	}
	return out, nil
}

// DeleteTaskPushConfig implements a2asrv.RequestHandler. Deleting a
// configuration that does not exist succeeds (the operation is idempotent);
// the task must exist.
func (h *Handler) DeleteTaskPushConfig(ctx context.Context, req *a2a.DeleteTaskPushConfigRequest) error {
	ctx = withCaller(ctx)
	if err := h.extensions(ctx); err != nil {
		return err
	}
	if req == nil {
		return invalidParams("task id is required")
	}
	id := string(req.TaskID)
	t, err := h.owned(ctx, "DeleteTaskPushConfig", id, 0)
	if err != nil {
		return err
	}
	if req.ID == "" {
		return invalidParams("push notification config id is required")
	}
	err = h.coord.DeletePushConfig(ctx, id, req.ID, t.Envelope.Actor)
	if err != nil && !errors.Is(err, task.ErrNotFound) {
		return h.wireErr(ctx, "DeleteTaskPushConfig", err)
	}
	if h.pusher != nil {
		h.pusher.Invalidate(id)
	}
	return nil
}
