package mcpserver

import "time"

// The tool inputs and outputs below are the MCP wire format: the SDK derives
// each tool's input and output JSON schema from them (a field without
// omitempty is required; a `jsonschema` tag is the property's description)
// and validates arguments against the input schema before a handler runs.
// Field names are snake_case, as MCP tool arguments usually are.

// MessageInput is the input message of a new task and the envelope fields a
// caller may set. The envelope fields are the same as A2A's metadata.pactum
// and default the same way: actor to the authenticated caller or
// "anonymous", idempotency_key to message_id, message_id to a fresh id,
// context_id to a new context, correlation_id to the task id.
type MessageInput struct {
	Text string `json:"text,omitempty" jsonschema:"the input as text; give text, data or both"`
	// Data is a JSON object sent as a structured-data part after the text.
	Data map[string]any `json:"data,omitempty" jsonschema:"the input as a JSON object (a structured-data part, after the text part if both are given)"`

	MessageID      string `json:"message_id,omitempty" jsonschema:"id of the input message; default a fresh id. Without idempotency_key it is also the idempotency key"`
	IdempotencyKey string `json:"idempotency_key,omitempty" jsonschema:"resending the same key (per actor) with the same payload returns the existing task instead of running a new one; the same key with another payload is a conflict"`
	Actor          string `json:"actor,omitempty" jsonschema:"who asks; default the authenticated caller, else anonymous"`
	Matter         string `json:"matter,omitempty" jsonschema:"on whose behalf (a case, customer or project reference)"`
	Resource       string `json:"resource,omitempty" jsonschema:"what the task acts on"`
	PolicyRef      string `json:"policy_ref,omitempty" jsonschema:"policy version the caller cites (required with approval_ref for sensitive actions)"`
	ApprovalRef    string `json:"approval_ref,omitempty" jsonschema:"approval the caller cites (required with policy_ref for sensitive actions)"`
	CorrelationID  string `json:"correlation_id,omitempty" jsonschema:"caller's id to correlate the task with; default the task id"`
	ContextID      string `json:"context_id,omitempty" jsonschema:"conversation context to submit in; default a new context"`
	Negotiation    string `json:"negotiation,omitempty" jsonschema:"id of a negotiation accepted with this agent (negotiate_contract): the task is checked against exactly the contract it accepted, as A2A request metadata pactum.negotiation does"`
}

// WaitInput says how long a tool waits for the task to finish.
type WaitInput struct {
	WaitTimeoutSeconds float64 `json:"wait_timeout_seconds,omitempty" jsonschema:"how long to wait for the task to finish, in seconds; default the server's wait timeout (5 minutes unless configured). When it passes, the answer is the task as it is then, with wait_timed_out set"`
}

// SubmitTaskInput is the input of submit_task.
type SubmitTaskInput struct {
	Agent  string `json:"agent,omitempty" jsonschema:"name of the agent to run the task (see list_agents); give agent, action or both"`
	Action string `json:"action,omitempty" jsonschema:"capability to call; the agent serving it runs the task"`
	MessageInput
	Wait bool `json:"wait,omitempty" jsonschema:"wait until the task is finished or waits for input, sending progress notifications on each state change when the request carries a progress token"`
	WaitInput
}

// AgentTaskInput is the input of a per-agent tool (Options.PerAgentTools):
// submit_task's, without the agent (the tool names it) and always waiting.
type AgentTaskInput struct {
	MessageInput
	WaitInput
}

// ContinueTaskInput is the input of continue_task: the caller's answer to
// a task waiting in input_required.
type ContinueTaskInput struct {
	TaskID    string         `json:"task_id" jsonschema:"id of a task in input_required"`
	Text      string         `json:"text,omitempty" jsonschema:"the answer as text; give text, data or both"`
	Data      map[string]any `json:"data,omitempty" jsonschema:"the answer as a JSON object (a structured-data part, after the text part if both are given)"`
	MessageID string         `json:"message_id,omitempty" jsonschema:"id of the answer message; default a fresh id"`
	Wait      bool           `json:"wait,omitempty" jsonschema:"wait until the task is finished or asks for input again, sending progress notifications on each state change when the request carries a progress token"`
	WaitInput
}

// ContinueTaskOutput is the answer of continue_task.
type ContinueTaskOutput struct {
	TaskInfo
	// WaitTimedOut is true when the wait ended before the task was final.
	WaitTimedOut bool `json:"wait_timed_out,omitempty" jsonschema:"the wait ended before the task was final; follow it with get_task"`
}

// GetTaskInput is the input of get_task.
type GetTaskInput struct {
	TaskID        string `json:"task_id" jsonschema:"the task id"`
	HistoryLength *int   `json:"history_length,omitempty" jsonschema:"how many of the newest messages to return in history; default all, 0 none"`
}

// ListTasksInput is the input of list_tasks.
type ListTasksInput struct {
	ContextID        string   `json:"context_id,omitempty" jsonschema:"only tasks of this context"`
	Agent            string   `json:"agent,omitempty" jsonschema:"only tasks of this agent"`
	ParentTaskID     string   `json:"parent_task_id,omitempty" jsonschema:"only the children of this parent task (the steps it spawned), oldest first"`
	States           []string `json:"states,omitempty" jsonschema:"only tasks in one of these states: requested, validated, queued, in_progress, input_required, waiting, succeeded, failed, canceled, dead_letter"`
	Rejected         *bool    `json:"rejected,omitempty" jsonschema:"true: only tasks refused before they ran (by permissions or policy); false: only tasks that were not"`
	UpdatedAfter     string   `json:"updated_after,omitempty" jsonschema:"only tasks updated at or after this time (RFC 3339)"`
	PageSize         int      `json:"page_size,omitempty" jsonschema:"tasks per page, 1 to 100; default 50"`
	PageToken        string   `json:"page_token,omitempty" jsonschema:"next_page_token of the previous page"`
	HistoryLength    *int     `json:"history_length,omitempty" jsonschema:"how many of each task's newest messages to return; default 0"`
	IncludeArtifacts bool     `json:"include_artifacts,omitempty" jsonschema:"return each task's artifacts"`
}

// CancelTaskInput is the input of cancel_task.
type CancelTaskInput struct {
	TaskID string `json:"task_id" jsonschema:"the task id"`
	Reason string `json:"reason,omitempty" jsonschema:"why, recorded on the task; default \"canceled by request\""`
}

// RetryTaskInput is the input of retry_task.
type RetryTaskInput struct {
	TaskID string `json:"task_id" jsonschema:"id of a failed or dead_letter task"`
}

// ListAgentsInput is the (empty) input of list_agents.
type ListAgentsInput struct{}

// TaskInfo is a task as every tool answers it.
type TaskInfo struct {
	TaskID    string `json:"task_id" jsonschema:"the canonical task id"`
	ContextID string `json:"context_id" jsonschema:"the conversation context"`
	State     string `json:"state" jsonschema:"lifecycle state: requested, validated, queued, in_progress, input_required, waiting (a parent whose children run), succeeded, failed, canceled or dead_letter"`
	Rejected  bool   `json:"rejected,omitempty" jsonschema:"the task was refused before it ran (permissions or policy); state is failed"`
	// Final is true when nothing moves the task on without the caller: a
	// terminal state or input_required.
	Final bool `json:"final" jsonschema:"the task is terminal or waits for input: it will not change without the caller"`
	// Attempt is the attempt within the current turn, which MaxAttempts
	// bounds; AttemptsTotal counts every attempt the task has had.
	Attempt       int    `json:"attempt" jsonschema:"the attempt within the current turn, 1 to max_attempts (0 until a worker takes it); a turn starts at submit, at each answer to input_required and at each manual retry"`
	MaxAttempts   int    `json:"max_attempts" jsonschema:"attempts each turn has before the task is dead-lettered"`
	AttemptsTotal int    `json:"attempts_total" jsonschema:"attempts over the task's whole life, all turns together"`
	Agent         string `json:"agent" jsonschema:"the agent that runs the task"`
	Action        string `json:"action" jsonschema:"the capability called"`
	Actor         string `json:"actor" jsonschema:"who asked"`
	Matter        string `json:"matter,omitempty"`
	Resource      string `json:"resource,omitempty"`
	// ParentTaskID and Step are set on a child task: a step of a
	// multi-step run that its parent task spawned.
	ParentTaskID string `json:"parent_task_id,omitempty" jsonschema:"the parent task that spawned this task as one step of a multi-step run"`
	Step         string `json:"step,omitempty" jsonschema:"the parent's name for the step this task performs"`
	// Children counts the child tasks a parent has spawned.
	Children int `json:"children,omitempty" jsonschema:"how many child tasks this task has spawned; list them with list_tasks parent_task_id"`
	// CorrelationID defaults to the task id.
	CorrelationID  string    `json:"correlation_id" jsonschema:"the caller's correlation id (default the task id)"`
	IdempotencyKey string    `json:"idempotency_key" jsonschema:"the idempotency key the task is known under"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
	// RunAfter is when a queued retry may start.
	RunAfter      time.Time `json:"run_after,omitzero" jsonschema:"when a queued task may start (retry backoff)"`
	StatusMessage string    `json:"status_message,omitempty" jsonschema:"text of the agent's last status message (its answer, or its question when input_required)"`
	ErrorCode     string    `json:"error_code,omitempty" jsonschema:"code of the last failure or refusal (see the error codes)"`
	Reason        string    `json:"reason,omitempty" jsonschema:"why the task failed, was refused or was canceled"`
	// Artifacts are omitted by list_tasks unless include_artifacts is set.
	Artifacts []ArtifactInfo `json:"artifacts" jsonschema:"what the agent produced"`
	History   []MessageInfo  `json:"history,omitempty" jsonschema:"the conversation, oldest first (get_task and list_tasks only)"`
	Audit     AuditInfo      `json:"audit" jsonschema:"where the task's execution record and audit entries are"`
	// VerifiedResult is the verified result of the task's newest checked
	// attempt, for an agent with a contract (docs/contracts.md): whether
	// it ran, the pre- and post-gate's results with the failed assertions
	// and their reasons, the resources created and the timings.
	VerifiedResult any `json:"verified_result,omitempty" jsonschema:"for an agent with a contract: the verified result of the newest checked attempt (executed, verification.passed, preGate, postGate with results and failedAssertions, resourcesCreated, timing); get_task, and submit_task and continue_task when they waited for the final state"`
}

// AuditInfo points at a task's execution record and audit entries.
type AuditInfo struct {
	// RecordSeq is the sequence number of the task's newest execution
	// record: its records are 1..RecordSeq (pactum tasks timeline), one per
	// transition. Two answers with the same RecordSeq saw the same task.
	RecordSeq int `json:"record_seq" jsonschema:"sequence number of the task's newest execution record (records are numbered 1..record_seq, one per transition)"`
	// Ref names the task's entries in the hash-chained audit log: every
	// entry whose taskId is the task's id (the submission, each policy
	// decision, one per transition).
	Ref string `json:"ref" jsonschema:"audit:task/<task_id>: the task's entries in the hash-chained audit log"`
}

// ArtifactInfo is something an agent produced.
type ArtifactInfo struct {
	ArtifactID  string `json:"artifact_id"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	// Text joins the artifact's text parts with newlines.
	Text     string         `json:"text,omitempty" jsonschema:"the artifact's text parts joined by newlines"`
	Parts    []PartInfo     `json:"parts"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// MessageInfo is one turn of a task's conversation.
type MessageInfo struct {
	MessageID string     `json:"message_id"`
	Role      string     `json:"role" jsonschema:"user or agent"`
	Text      string     `json:"text,omitempty" jsonschema:"the message's text parts joined by newlines"`
	Parts     []PartInfo `json:"parts"`
}

// PartInfo is one part of an artifact or message.
type PartInfo struct {
	Kind string `json:"kind" jsonschema:"text, data, raw (inline bytes) or url"`
	Text string `json:"text,omitempty"`
	// Data is the part's JSON value, numbers kept exactly as stored.
	Data any `json:"data,omitempty"`
	// RawBase64 holds inline file bytes, standard base64.
	RawBase64 string `json:"raw_base64,omitempty"`
	URL       string `json:"url,omitempty"`
	Filename  string `json:"filename,omitempty"`
	MediaType string `json:"media_type,omitempty"`
}

// SubmitTaskOutput is the answer of submit_task and of the per-agent tools.
type SubmitTaskOutput struct {
	TaskInfo
	// Duplicate is true when the idempotency key named an existing task with
	// the same payload: nothing new was run.
	Duplicate bool `json:"duplicate,omitempty" jsonschema:"the idempotency key named an existing task with the same payload; nothing new was run"`
	// WaitTimedOut is true when the wait ended before the task was final.
	WaitTimedOut bool `json:"wait_timed_out,omitempty" jsonschema:"the wait ended before the task was final; follow it with get_task"`
}

// ListTasksOutput is the answer of list_tasks.
type ListTasksOutput struct {
	Tasks         []TaskInfo `json:"tasks"`
	NextPageToken string     `json:"next_page_token,omitempty" jsonschema:"pass as page_token for the next page; absent on the last page"`
	TotalSize     int        `json:"total_size" jsonschema:"number of tasks that match the filter"`
}

// AgentInfo describes one agent.
type AgentInfo struct {
	Name           string  `json:"name"`
	Action         string  `json:"action" jsonschema:"the capability the agent serves"`
	Description    string  `json:"description,omitempty"`
	Sensitive      bool    `json:"sensitive,omitempty" jsonschema:"tasks need policy_ref and approval_ref"`
	DryRun         bool    `json:"dry_run,omitempty" jsonschema:"tasks record the policy decision and succeed without calling the agent"`
	MaxAttempts    int     `json:"max_attempts"`
	TimeoutSeconds float64 `json:"timeout_seconds" jsonschema:"bound on one attempt"`
	// Tool is the agent's own tool when Options.PerAgentTools is set.
	Tool string `json:"tool,omitempty" jsonschema:"the agent's own tool, when the server offers one per agent"`
}

// ListAgentsOutput is the answer of list_agents.
type ListAgentsOutput struct {
	Agents []AgentInfo `json:"agents"`
}

// ErrorInfo is the structured content of a tool error result.
type ErrorInfo struct {
	// Code is a task.Code ("not_found", "conflict", …).
	Code    string `json:"code"`
	Message string `json:"message"`
	// Ref identifies an internal error in the server's log.
	Ref string `json:"ref,omitempty"`
}
