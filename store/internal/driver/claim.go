package driver

import (
	"time"

	"github.com/pactum/pactum/task"
)

// CheckClaim refuses ClaimParams without an Owner, a positive LeaseFor or
// a Now. Errors start with "claim"; the driver prefixes its name.
func CheckClaim(p task.ClaimParams) error {
	switch {
	case p.Owner == "":
		return task.Errorf(task.CodeInvalidArgument, "claim: ClaimParams.Owner is required")
	case p.LeaseFor <= 0:
		return task.Errorf(task.CodeInvalidArgument, "claim: ClaimParams.LeaseFor must be positive")
	case p.Now.IsZero():
		return task.Errorf(task.CodeInvalidArgument, "claim: ClaimParams.Now is zero")
	}
	return nil
}

// CheckRenew refuses RenewParams without an Owner, a positive LeaseFor or
// a Now. Errors start with "renew lease"; the driver prefixes its name.
func CheckRenew(p task.RenewParams) error {
	if p.Owner == "" || p.LeaseFor <= 0 || p.Now.IsZero() {
		return task.Errorf(task.CodeInvalidArgument, "renew lease of task %q: Owner, a positive LeaseFor and Now are required", p.TaskID)
	}
	return nil
}

// LeaseUntil returns when a lease taken at now for d ends, as stored.
func LeaseUntil(now time.Time, d time.Duration) time.Time { return Norm(Norm(now).Add(d)) }

// Claim starts an attempt on t in memory, as Store.Claim and a claiming
// CreateTask do: queued → in_progress, Attempt+1, leased to owner (on
// node) from now for d. now must be stored form (Norm).
func Claim(t *task.Task, owner, node string, now time.Time, d time.Duration) (task.Record, error) {
	return Advance(t, Change{
		To: task.StateInProgress, Node: node, Now: now,
		Claim: true, Owner: owner, LeaseUntil: LeaseUntil(now, d),
	})
}
