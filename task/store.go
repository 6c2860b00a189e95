package task

import (
	"context"
	"time"
)

// Store is the storage driver the Coordinator consumes. Every method that
// changes a task commits the new state, one execution Record per transition
// and one audit entry per transition (plus any extra audit entries given) in
// one transaction. Drivers live in store/…; store/storetest is the
// conformance suite each of them passes.
//
// Times: callers pass UTC times truncated to the microsecond; drivers store
// and return them exactly (the audit hash covers them). Sealing an audit
// entry sets At to the operation's Now, Seq to the next global sequence and
// PrevHash to the previous entry's Hash ("" for the first), then Hash to
// AuditEntry.ComputeHash(); the chain is one linear sequence.
type Store interface {
	// CreateTask inserts a new task in StateRequested and then applies
	// p.Steps in order, all in one transaction. The returned task carries
	// its History (a new task has no artifacts) and is marked complete. When p.IdempotencyTTL is
	// positive and (actor, key) already names a live task, nothing is
	// written and the existing task is returned with an error wrapping
	// ErrDuplicate.
	CreateTask(ctx context.Context, p CreateParams) (*Task, error)
	// Transition applies one conditional state change: it succeeds only if
	// the task is in p.From (and, when p.LeaseOwner is set, still leased by
	// that owner). Otherwise it writes nothing and returns an error wrapping
	// ErrStateConflict. An illegal From → To returns ErrIllegalTransition.
	//
	// Parent and child tasks, all in the same transaction:
	//   - p.Spawn creates the children (see TransitionParams.Spawn).
	//   - To == StateWaiting when none of the task's children is unsettled
	//     (every one Terminal) goes on at once waiting → queued (a second
	//     record, NewTurn, RunAfter = Now): a parent never waits for
	//     children that have all ended.
	//   - A child entering a Terminal state wakes its parent if the parent
	//     is waiting: waiting → queued (NewTurn, RunAfter = Now) with a
	//     Reason naming the child, its step and its state (and the child's
	//     reason when it failed, dead-lettered or was canceled). A child
	//     that settles while its parent is not waiting changes nothing of
	//     the parent; no wake-up is lost when the parent moves to waiting
	//     concurrently.
	//   - A parent entering a Terminal state cancels every descendant that
	//     is not Terminal (one record and audit entry each, Reason naming
	//     the parent); canceling a child this way does not wake its parent.
	Transition(ctx context.Context, p TransitionParams) (*Task, error)
	// Claim moves up to p.Limit queued tasks whose RunAfter has passed to
	// in_progress, oldest first, incrementing Attempt and leasing each to
	// p.Owner until p.Now+p.LeaseFor. When p.TaskID is set only that task is
	// considered. Two concurrent claims never return the same task. The
	// returned tasks carry their full History and Artifacts and are marked
	// complete (Task.MarkComplete).
	Claim(ctx context.Context, p ClaimParams) ([]*Task, error)
	// RenewLease extends a lease still held by p.Owner; ErrStateConflict if
	// the lease was lost.
	RenewLease(ctx context.Context, p RenewParams) error
	// ExpiredLeases lists in_progress tasks whose lease ended before now.
	ExpiredLeases(ctx context.Context, now time.Time, limit int) ([]*Task, error)
	// NextRunAfter returns the earliest RunAfter among queued tasks, or the
	// zero time when none is queued.
	NextRunAfter(ctx context.Context) (time.Time, error)

	// GetTask returns a task with its history and artifacts; historyLength
	// < 0 means all messages (and the task is marked complete), otherwise
	// the newest historyLength.
	GetTask(ctx context.Context, id string, historyLength int) (*Task, error)
	// ListTasks lists tasks newest first, filtered, with an opaque page token.
	ListTasks(ctx context.Context, p ListParams) (*TaskPage, error)
	// Records returns a task's execution record in sequence order.
	Records(ctx context.Context, taskID string) ([]Record, error)

	// PurgeIdempotencyKeys forgets (actor, key) pairs that expired before
	// the given time and returns how many it removed. Tasks stay.
	PurgeIdempotencyKeys(ctx context.Context, before time.Time) (int, error)

	// AppendAudit seals and appends entries that belong to no transition.
	AppendAudit(ctx context.Context, entries []AuditInput) error
	// AuditEntries returns sealed entries with Seq > after, at most limit.
	AuditEntries(ctx context.Context, after int64, limit int) ([]AuditEntry, error)

	// PutPushConfig creates or replaces a push config (task id, id) and
	// seals audit in the same transaction. The task must exist
	// (ErrNotFound). The config's delivered seq (see PushBacklog) starts at
	// the task's current seq: a new config is owed the task's changes from
	// now on, not its past; with c.Owed it starts at 0, so that the task's
	// latest state is owed to it until MarkPushDelivered says it was sent.
	PutPushConfig(ctx context.Context, c PushConfig, audit []AuditInput) error
	// MarkPushDelivered records that a push config has been sent its task
	// as of p.Seq: its delivered seq becomes p.Seq unless it is higher
	// already. A config that no longer exists is not an error.
	MarkPushDelivered(ctx context.Context, p MarkPushParams) error
	// PushBacklog lists the push configs whose task changed after they were
	// last sent it (delivered seq < the task's seq) and was last updated
	// before p.UpdatedBefore, ordered by (task id, id) and starting after
	// (p.AfterTaskID, p.AfterID), at most p.Limit.
	PushBacklog(ctx context.Context, p PushBacklogParams) ([]PushBacklogItem, error)
	// GetPushConfig returns one push config (ErrNotFound if absent).
	GetPushConfig(ctx context.Context, taskID, id string) (*PushConfig, error)
	// ListPushConfigs returns a task's push configs, oldest first.
	ListPushConfigs(ctx context.Context, taskID string) ([]PushConfig, error)
	// HasPushConfigs reports whether any task has a push config. A node
	// where none has ever been set skips looking them up per event.
	HasPushConfigs(ctx context.Context) (bool, error)
	// DeletePushConfig deletes one push config and seals audit in the same
	// transaction (ErrNotFound, and nothing written, if absent).
	DeletePushConfig(ctx context.Context, taskID, id string, audit []AuditInput) error

	// Close releases the store.
	Close() error
}

// Step is one transition applied inside CreateTask.
type Step struct {
	To            State
	Reason        string
	ErrorCode     Code
	PolicyVersion string
	// Rejected marks the task as refused before it ran (only with To ==
	// StateFailed).
	Rejected bool
	// Audit holds extra entries sealed just before this step's own.
	Audit []AuditInput
}

// CreateParams describes a new task.
type CreateParams struct {
	Task *Task // ID, ContextID, Agent, Envelope, PayloadHash, MaxAttempts, RunAfter
	// Steps are applied after the requested state, in order.
	Steps []Step
	// Audit entries are sealed before the steps (the submission itself).
	Audit []AuditInput
	Node  string
	Now   time.Time
	// IdempotencyTTL is how long (actor, key) keeps naming this task; zero
	// disables idempotency for the submit.
	IdempotencyTTL time.Duration
	// Claim, when set and the steps leave the task queued, also claims it
	// in the same transaction as Store.Claim would (queued → in_progress,
	// attempt 1, leased to Claim.Owner until Now+Claim.LeaseFor; Claim.Now
	// and Limit are ignored). A node with a free worker uses it to run a new
	// task at once without a second transaction.
	Claim *ClaimParams
	// Speculative lets CreateTask return before the transaction that
	// creates the task commits. Everything is checked and written as
	// usual (ErrDuplicate and every refusal are still returned), but the
	// store may keep the transaction open for a moment, so that the
	// task's next writes commit with it: a task that ends at once is
	// created, run and settled in one commit. Until that commit the task
	// is seen only by the store's own later writes and a crash loses it;
	// a later write of the task returns only once the creation is
	// committed with it or before it. Only a caller that tells no one
	// of the task before one of its later writes has returned may set it
	// (a blocking submission, whose answer is the task's final state).
	// A store may ignore it and commit before returning; see
	// docs/storage.md.
	Speculative bool
	// Committed, with Speculative, is called once CreateTask returned the
	// task: with nil when the creation committed, or with the error that
	// rolled it back (the task then does not exist). A store that
	// committed before returning calls it with nil before it returns. It
	// may run on the store's writer: it must not block.
	Committed func(error)
}

// TransitionParams describes a conditional state change.
type TransitionParams struct {
	TaskID string
	From   State
	To     State
	// LeaseOwner, when set, must match the task's current lease owner.
	LeaseOwner string
	// RunAfter is stored when To is StateQueued.
	RunAfter time.Time
	// NewTurn starts a new turn: the task's TurnStart becomes its current
	// Attempt, so the next claim is attempt 1 of the turn. The Coordinator
	// sets it when a caller answers input_required or retries a task.
	NewTurn       bool
	Reason        string
	ErrorCode     Code
	PolicyVersion string
	Node          string
	Now           time.Time
	// StatusMessage replaces the task's status message (nil clears it).
	StatusMessage *Message
	// Messages are appended to the task's history.
	Messages []Message
	// Artifacts are stored on the task; an artifact whose ID is already
	// stored replaces it.
	Artifacts []Artifact
	// LeaseExpiredBefore, when non-zero, additionally requires the task's
	// lease to have ended before this time (the lease reaper uses it so a
	// lease renewed meanwhile is left alone).
	LeaseExpiredBefore time.Time
	// Audit holds extra entries sealed before the transition's own.
	Audit []AuditInput
	// Evidence is stored on this transition's record (Record.Evidence).
	Evidence []Evidence
	// Envelope, when set, is the task's envelope as the caller holds it
	// (it never changes once stored): the returned task carries it, and
	// a store may skip decoding its own copy.
	Envelope *Envelope
	// Spawn creates child tasks in the same transaction (only with From ==
	// StateInProgress). Each Task's Envelope.ParentTaskID must be p.TaskID
	// and its Envelope.Step unique among the parent's children (a step
	// already used fails the whole transition with an error wrapping
	// ErrDuplicate); each child is created as CreateTask would, without
	// idempotency or claim, and the parent's Children grows by len(Spawn).
	Spawn []CreateParams
}

// ClaimParams selects queued tasks to run.
type ClaimParams struct {
	Owner    string
	Node     string
	Now      time.Time
	LeaseFor time.Duration
	Limit    int
	TaskID   string
	// Agents, when not nil, claims only tasks of these agents (a worker
	// pool's); Except skips tasks of these agents (the other pools', for
	// the default pool, which claims everything else: agents this node
	// does not know included). Both apply when both are set.
	Agents []string
	Except []string
}

// RenewParams extends a lease.
type RenewParams struct {
	TaskID   string
	Owner    string
	Now      time.Time
	LeaseFor time.Duration
}

// ListParams filters ListTasks.
type ListParams struct {
	ContextID string
	Agent     string
	Actor     string
	// ParentTaskID keeps the children of one parent task. Children are
	// listed oldest first (creation order), not newest first.
	ParentTaskID string
	States       []State
	// Rejected, when set, keeps only tasks whose Rejected flag equals it.
	Rejected *bool
	// UpdatedAfter keeps tasks updated at or after this time when non-zero.
	UpdatedAfter  time.Time
	PageSize      int
	PageToken     string
	HistoryLength int
	// IncludeArtifacts loads artifacts for each listed task.
	IncludeArtifacts bool
}

// TaskPage is one page of ListTasks.
type TaskPage struct {
	Tasks         []*Task `json:"tasks"`
	NextPageToken string  `json:"nextPageToken,omitempty"`
	TotalSize     int     `json:"totalSize"`
}
