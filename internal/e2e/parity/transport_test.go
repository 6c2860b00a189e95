package parity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/a2aserver"
	"github.com/pactum/pactum/mcpserver"
	"github.com/pactum/pactum/task"
)

// driver maps the trace operations onto one transport. Each call answers
// the task as the transport showed it, in pactum's terms, or a *callError
// when the transport answered a domain error; any other error means the
// transport itself failed.
type driver interface {
	submit(ctx context.Context, s Step) (answer, error)
	get(ctx context.Context, id, agent string) (answer, error)
	cancel(ctx context.Context, id, agent, reason string) (answer, error)
	retry(ctx context.Context, id, agent string) (answer, error)
	// continueTask answers the task, which waits in input_required, with
	// the step's message (text, data, message_id, wait).
	continueTask(ctx context.Context, id, agent string, s Step) (answer, error)
	close()
}

// answer is a transport's answer about a task, reduced to what both
// transports say in the same terms.
type answer struct {
	TaskID    string
	State     string
	Rejected  bool
	ErrorCode string
	Reason    string
	// Attempt is the attempt within the current turn; AttemptsTotal
	// counts every attempt the task has had.
	Attempt       int
	AttemptsTotal int
}

// callError is a domain error a transport answered.
type callError struct {
	Code    string
	Message string
}

func (e *callError) Error() string { return e.Code + ": " + e.Message }

// a2aDriver speaks A2A JSON-RPC with the official a2a-go client, one client
// per agent (A2A addresses an agent by its URL; a task is visible only at
// its agent's). A2A has no retry operation: retry calls
// Coordinator.Retry, as `pactum tasks retry` does.
type a2aDriver struct {
	base    string
	coord   *task.Coordinator
	http    *http.Client
	clients map[string]*a2aclient.Client
}

func newA2ADriver(n *testNode) *a2aDriver {
	return &a2aDriver{base: n.url, coord: n.srv.Coordinator(), http: newHTTPClient(), clients: map[string]*a2aclient.Client{}}
}

// newHTTPClient returns an HTTP client of its own for one run, so that the
// run can close its connections before its node stops: the node's graceful
// shutdown waits up to 5 s for a connection that was opened and never sent
// a request.
func newHTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{}, Timeout: runTimeout}
}

func closeHTTPClient(c *http.Client) {
	c.Transport.(*http.Transport).CloseIdleConnections()
}

func (d *a2aDriver) client(ctx context.Context, agent string) (*a2aclient.Client, error) {
	if c, ok := d.clients[agent]; ok {
		return c, nil
	}
	card, err := agentcard.NewResolver(d.http).Resolve(ctx, d.base+"/agents/"+agent)
	if err != nil {
		return nil, fmt.Errorf("resolve the card of %s: %w", agent, err)
	}
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(d.http), a2aclient.WithConfig(a2aclient.Config{
		PreferredTransports: []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC},
	}))
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", agent, err)
	}
	d.clients[agent] = c
	return c, nil
}

func (d *a2aDriver) close() {
	for _, c := range d.clients {
		_ = c.Destroy()
	}
	closeHTTPClient(d.http)
}

// submit sends the step's message with the envelope fields under the
// request's metadata.pactum.
func (d *a2aDriver) submit(ctx context.Context, s Step) (answer, error) {
	c, err := d.client(ctx, s.Agent)
	if err != nil {
		return answer{}, err
	}
	env := map[string]any{}
	for k, v := range map[string]string{
		"actor": s.Actor, "matter": s.Matter, "resource": s.Resource, "policyRef": s.PolicyRef,
		"approvalRef": s.ApprovalRef, "idempotencyKey": s.IdempotencyKey, "correlationId": s.CorrelationID,
	} {
		if v != "" {
			env[k] = v
		}
	}
	parts, err := a2aParts(s)
	if err != nil {
		return answer{}, err
	}
	req := &a2a.SendMessageRequest{
		Message:  &a2a.Message{ID: s.MessageID, Role: a2a.MessageRoleUser, ContextID: s.ContextID, Parts: parts},
		Metadata: map[string]any{a2aserver.MetadataKey: env},
	}
	if !s.Wait {
		req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
	}
	res, err := c.SendMessage(ctx, req)
	if err != nil {
		return answer{}, a2aErr(err)
	}
	t, ok := res.(*a2a.Task)
	if !ok {
		return answer{}, fmt.Errorf("SendMessage answered a %T, want a task", res)
	}
	return a2aAnswer(t)
}

func (d *a2aDriver) get(ctx context.Context, id, agent string) (answer, error) {
	c, err := d.client(ctx, agent)
	if err != nil {
		return answer{}, err
	}
	none := 0
	t, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(id), HistoryLength: &none})
	if err != nil {
		return answer{}, a2aErr(err)
	}
	return a2aAnswer(t)
}

func (d *a2aDriver) cancel(ctx context.Context, id, agent, reason string) (answer, error) {
	c, err := d.client(ctx, agent)
	if err != nil {
		return answer{}, err
	}
	req := &a2a.CancelTaskRequest{ID: a2a.TaskID(id)}
	if reason != "" {
		req.Metadata = map[string]any{a2aserver.MetadataKey: map[string]any{"reason": reason}}
	}
	t, err := c.CancelTask(ctx, req)
	if err != nil {
		return answer{}, a2aErr(err)
	}
	return a2aAnswer(t)
}

func (d *a2aDriver) retry(ctx context.Context, id, _ string) (answer, error) {
	t, err := d.coord.Retry(ctx, id)
	if err != nil {
		if code := task.ErrorCode(err); code != task.CodeInternal {
			return answer{}, &callError{Code: string(code), Message: err.Error()}
		}
		return answer{}, err
	}
	return answer{TaskID: t.ID, State: string(t.State), Rejected: t.Rejected, ErrorCode: string(t.ErrorCode), Reason: t.Reason,
		Attempt: t.TurnAttempt(), AttemptsTotal: t.Attempt}, nil
}

// continueTask sends the step's message naming the task to the task's
// agent: A2A answers a task in input_required with SendMessage, the
// message's taskId naming the task.
func (d *a2aDriver) continueTask(ctx context.Context, id, agent string, s Step) (answer, error) {
	c, err := d.client(ctx, agent)
	if err != nil {
		return answer{}, err
	}
	parts, err := a2aParts(s)
	if err != nil {
		return answer{}, err
	}
	req := &a2a.SendMessageRequest{
		Message: &a2a.Message{ID: s.MessageID, TaskID: a2a.TaskID(id), Role: a2a.MessageRoleUser, Parts: parts},
	}
	if !s.Wait {
		req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
	}
	res, err := c.SendMessage(ctx, req)
	if err != nil {
		return answer{}, a2aErr(err)
	}
	t, ok := res.(*a2a.Task)
	if !ok {
		return answer{}, fmt.Errorf("SendMessage answered a %T, want a task", res)
	}
	return a2aAnswer(t)
}

// a2aParts returns the parts of the step's message: its text, then its
// data as a data part.
func a2aParts(s Step) (a2a.ContentParts, error) {
	parts := a2a.ContentParts{a2a.NewTextPart(s.Text)}
	if s.Data != nil {
		data, err := s.dataObject()
		if err != nil {
			return nil, err
		}
		parts = append(parts, a2a.NewDataPart(data))
	}
	return parts, nil
}

// a2aAnswer reads a task as A2A shows it: the id, TASK_STATE_REJECTED for
// a rejection, and the pactum state, attempt, error code and reason that
// a2aserver puts under metadata.pactum, whose audit.ref must name the
// task's audit entries.
func a2aAnswer(t *a2a.Task) (answer, error) {
	md, ok := t.Metadata[a2aserver.MetadataKey].(map[string]any)
	if !ok {
		return answer{}, fmt.Errorf("task %s has no metadata.%s: %v", t.ID, a2aserver.MetadataKey, t.Metadata)
	}
	str := func(k string) string { s, _ := md[k].(string); return s }
	// Every answer is attributable: it names the task's audit entries,
	// as MCP's answers do.
	audit, _ := md["audit"].(map[string]any)
	if ref, _ := audit["ref"].(string); ref != task.AuditRef(string(t.ID)) {
		return answer{}, fmt.Errorf("task %s: metadata.%s.audit.ref is %v, want %q", t.ID, a2aserver.MetadataKey, audit["ref"], task.AuditRef(string(t.ID)))
	}
	a := answer{
		TaskID: string(t.ID), State: str("state"), Rejected: t.Status.State == a2a.TaskStateRejected,
		ErrorCode: str("errorCode"), Reason: str("reason"),
	}
	for key, dst := range map[string]*int{"attempt": &a.Attempt, "attemptsTotal": &a.AttemptsTotal} {
		switch n := md[key].(type) {
		case float64:
			*dst = int(n)
		case json.Number:
			i, _ := n.Int64()
			*dst = int(i)
		case int:
			*dst = n
		default:
			return answer{}, fmt.Errorf("task %s: metadata.%s.%s is %T", t.ID, a2aserver.MetadataKey, key, md[key])
		}
	}
	return a, nil
}

// a2aErr turns an A2A error that carries pactum's domain code (ErrorInfo
// metadata pactumCode) into a *callError.
func a2aErr(err error) error {
	var e *a2a.Error
	if !errors.As(err, &e) {
		return err
	}
	code := ""
	if info := e.ErrorInfo(); info != nil {
		switch md := info.Value["metadata"].(type) {
		case map[string]any: // decoded from the wire
			code, _ = md["pactumCode"].(string)
		case map[string]string:
			code = md["pactumCode"]
		}
	}
	if code == "" {
		return err
	}
	return &callError{Code: code, Message: e.Message}
}

// mcpDriver speaks MCP with the official go-sdk client over streamable
// HTTP at /mcp. mutate, when set, may alter a tool call's arguments before
// they are sent (the runner's own test breaks the mapping with it).
type mcpDriver struct {
	session *mcp.ClientSession
	http    *http.Client
	mutate  func(tool string, args map[string]any)
}

func newMCPDriver(ctx context.Context, n *testNode, mutate func(string, map[string]any)) (*mcpDriver, error) {
	hc := newHTTPClient()
	client := mcp.NewClient(&mcp.Implementation{Name: "pactum-parity", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: n.url + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		closeHTTPClient(hc)
		return nil, fmt.Errorf("connect to %s/mcp: %w", n.url, err)
	}
	return &mcpDriver{session: session, http: hc, mutate: mutate}, nil
}

func (d *mcpDriver) close() {
	_ = d.session.Close()
	closeHTTPClient(d.http)
}

func (d *mcpDriver) submit(ctx context.Context, s Step) (answer, error) {
	args := map[string]any{"agent": s.Agent, "text": s.Text, "message_id": s.MessageID}
	for k, v := range map[string]string{
		"actor": s.Actor, "matter": s.Matter, "resource": s.Resource, "policy_ref": s.PolicyRef,
		"approval_ref": s.ApprovalRef, "idempotency_key": s.IdempotencyKey, "correlation_id": s.CorrelationID,
		"context_id": s.ContextID,
	} {
		if v != "" {
			args[k] = v
		}
	}
	if s.Data != nil {
		data, err := s.dataObject()
		if err != nil {
			return answer{}, err
		}
		args["data"] = data
	}
	if s.Wait {
		args["wait"] = true
	}
	return d.call(ctx, mcpserver.ToolSubmitTask, args)
}

func (d *mcpDriver) get(ctx context.Context, id, _ string) (answer, error) {
	return d.call(ctx, mcpserver.ToolGetTask, map[string]any{"task_id": id, "history_length": 0})
}

func (d *mcpDriver) cancel(ctx context.Context, id, _, reason string) (answer, error) {
	args := map[string]any{"task_id": id}
	if reason != "" {
		args["reason"] = reason
	}
	return d.call(ctx, mcpserver.ToolCancelTask, args)
}

func (d *mcpDriver) retry(ctx context.Context, id, _ string) (answer, error) {
	return d.call(ctx, mcpserver.ToolRetryTask, map[string]any{"task_id": id})
}

// continueTask calls continue_task; its answer embeds TaskInfo, which call
// reads.
func (d *mcpDriver) continueTask(ctx context.Context, id, _ string, s Step) (answer, error) {
	args := map[string]any{"task_id": id, "text": s.Text, "message_id": s.MessageID}
	if s.Data != nil {
		data, err := s.dataObject()
		if err != nil {
			return answer{}, err
		}
		args["data"] = data
	}
	if s.Wait {
		args["wait"] = true
	}
	return d.call(ctx, mcpserver.ToolContinueTask, args)
}

// call calls tool and reads its structured answer: a task, or a tool error
// whose code becomes a *callError.
func (d *mcpDriver) call(ctx context.Context, tool string, args map[string]any) (answer, error) {
	if d.mutate != nil {
		d.mutate(tool, args)
	}
	res, err := d.session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return answer{}, fmt.Errorf("%s: %w", tool, err)
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return answer{}, err
	}
	if res.IsError {
		var info mcpserver.ErrorInfo
		if err := json.Unmarshal(raw, &info); err != nil || info.Code == "" {
			return answer{}, fmt.Errorf("%s: tool error without a code: %s", tool, raw)
		}
		return answer{}, &callError{Code: info.Code, Message: info.Message}
	}
	var ti mcpserver.TaskInfo
	if err := json.Unmarshal(raw, &ti); err != nil {
		return answer{}, fmt.Errorf("%s: decode the answer %s: %w", tool, raw, err)
	}
	if ti.Audit.Ref != task.AuditRef(ti.TaskID) {
		return answer{}, fmt.Errorf("%s: task %s answered with audit.ref %q, want %q", tool, ti.TaskID, ti.Audit.Ref, task.AuditRef(ti.TaskID))
	}
	return answer{TaskID: ti.TaskID, State: ti.State, Rejected: ti.Rejected, ErrorCode: ti.ErrorCode, Reason: ti.Reason,
		Attempt: ti.Attempt, AttemptsTotal: ti.AttemptsTotal}, nil
}
