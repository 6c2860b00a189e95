package task

import (
	"context"
	"fmt"
	"time"

	"github.com/pactum/pactum/internal/backoff"
)

// RetryPolicy bounds the automatic retries of one agent.
type RetryPolicy struct {
	// MaxAttempts is the number of attempts before dead_letter (default 3).
	MaxAttempts int
	// InitialBackoff is the delay before the second attempt (default 1s).
	InitialBackoff time.Duration
	// MaxBackoff caps the exponential backoff (default 1m).
	MaxBackoff time.Duration
	// Jitter is the random fraction (0..1) taken off each delay (default 0.2).
	Jitter float64
}

// Backoff returns the delay before attempt n+1 after attempt n failed:
// InitialBackoff·2^(n-1), capped at MaxBackoff, less a random jitter.
func (r RetryPolicy) Backoff(n int) time.Duration {
	return backoff.Exponential{Initial: r.InitialBackoff, Max: r.MaxBackoff, Jitter: r.Jitter}.Delay(n)
}

func (r RetryPolicy) withDefaults() RetryPolicy {
	if r.MaxAttempts <= 0 {
		r.MaxAttempts = 3
	}
	if r.InitialBackoff <= 0 {
		r.InitialBackoff = time.Second
	}
	if r.MaxBackoff <= 0 {
		r.MaxBackoff = time.Minute
	}
	if r.Jitter < 0 || r.Jitter > 1 {
		r.Jitter = 0.2
	}
	return r
}

// failure decides where a failed attempt goes: failed for permanent errors,
// queued with backoff while the turn has attempts left, dead_letter after
// its last.
func (c *Coordinator) failure(ctx context.Context, spec *AgentSpec, t *Task, err error) TransitionParams {
	code := ErrorCode(err)
	if code == CodeInternal {
		code = CodeAgentFailed
	}
	reason := err.Error()
	if len(reason) > 4096 {
		reason = reason[len(reason)-4096:]
	}
	if IsPermanent(err) {
		return TransitionParams{To: StateFailed, ErrorCode: code, Reason: reason}
	}
	used, spent := c.turnAttempts(t)
	if !spent {
		return TransitionParams{To: StateQueued, ErrorCode: code, Reason: reason, RunAfter: c.now().Add(spec.Retry.Backoff(used))}
	}
	return TransitionParams{To: StateDeadLetter, ErrorCode: code, Reason: fmt.Sprintf("attempt %d of %d failed: %s", used, t.MaxAttempts, reason)}
}

// turnAttempts returns how many attempts t's current turn has used and
// whether that is all of them. A turn starts when the task is submitted
// and again each time the caller answers it (input_required → queued) or
// retries it by hand (failed or dead_letter → queued): every turn gets
// MaxAttempts attempts, so a long conversation does not use up its retries
// and a manual retry is more than one try.
func (c *Coordinator) turnAttempts(t *Task) (used int, spent bool) {
	used = t.TurnAttempt()
	return used, used >= t.MaxAttempts
}
