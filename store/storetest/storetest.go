// Package storetest is the conformance suite every task.Store driver
// passes. A driver's tests call Run with a function that opens a fresh,
// empty store:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) task.Store {
//			s, err := sqlite.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "db"), nil)
//			...
//			return s
//		})
//	}
//
// The suite tests behaviour through the task.Store interface only, never a
// driver's storage, so SQLite and PostgreSQL run the same tests. Where the
// interface's doc leaves a choice open, the suite pins the one pactum relies
// on, and says so next to the test.
package storetest

import (
	"testing"

	"github.com/pactum/pactum/task"
)

// Run runs the conformance suite. newStore must return a new, empty store
// each time it is called; Run closes it when the subtest ends (drivers must
// tolerate a second Close). Subtests run in parallel.
func Run(t *testing.T, newStore func(t *testing.T) task.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, b *bundle)
	}{
		{"CreateTask/Steps", testCreateSteps},
		{"CreateTask/NoSteps", testCreateNoSteps},
		{"CreateTask/IllegalStep", testCreateIllegalStep},
		{"CreateTask/Rejected", testCreateRejected},
		{"CreateTask/RoundTrip", testCreateRoundTrip},
		{"CreateTask/DuplicateID", testCreateDuplicateID},
		{"CreateTask/Claim", testCreateClaim},
		{"CreateTask/FirstFault", testCreateFirstFault},
		{"Transition/Table", testTransitionTable},
		{"Transition/Conflict", testTransitionConflict},
		{"Transition/LeaseExpiredBefore", testTransitionLeaseExpiredBefore},
		{"Transition/NotFound", testTransitionNotFound},
		{"Transition/Effects", testTransitionEffects},
		{"Transition/LargeRows", testTransitionLargeRows},
		{"Transition/ExtraAudit", testTransitionExtraAudit},
		{"Transition/Evidence", testTransitionEvidence},
		{"Children/Spawn", testChildrenSpawn},
		{"Children/DuplicateStep", testChildrenDuplicateStep},
		{"Children/SpawnRefused", testChildrenSpawnRefused},
		{"Children/WaitNoChild", testChildrenWaitNoChild},
		{"Children/Wake", testChildrenWake},
		{"Children/ParentBusy", testChildrenParentBusy},
		{"Children/Cascade", testChildrenCascade},
		{"Children/WaitRace", testChildrenWaitRace},
		{"Children/CancelRace", testChildrenCancelRace},
		{"Claim/Order", testClaimOrder},
		{"Claim/RunAfter", testClaimRunAfter},
		{"Claim/TaskID", testClaimTaskID},
		{"Claim/Agents", testClaimAgents},
		{"Claim/Attempts", testClaimAttempts},
		{"Transition/NewTurn", testTransitionNewTurn},
		{"Claim/Concurrent", testClaimConcurrent},
		{"Idempotency/Concurrent", testIdempotencyConcurrent},
		{"Idempotency/Expiry", testIdempotencyExpiry},
		{"Idempotency/Scope", testIdempotencyScope},
		{"Idempotency/Purge", testIdempotencyPurge},
		{"RenewLease", testRenewLease},
		{"ExpiredLeases", testExpiredLeases},
		{"NextRunAfter", testNextRunAfter},
		{"GetTask/History", testGetTaskHistory},
		{"GetTask/NotFound", testGetTaskNotFound},
		{"ListTasks/Filters", testListFilters},
		{"ListTasks/Rejected", testListRejected},
		{"ListTasks/Pagination", testListPagination},
		{"ListTasks/HistoryAndArtifacts", testListHistoryArtifacts},
		{"ListTasks/BadPageToken", testListBadToken},
		{"Records", testRecords},
		{"Audit/AppendAndPage", testAuditAppend},
		{"Audit/ConcurrentChain", testAuditConcurrent},
		{"Audit/InvalidData", testAuditInvalidData},
		{"Audit/HeadAndScan", testAuditHeadAndScan},
		{"Audit/ScanSnapshot", testAuditScanSnapshot},
		{"PushConfig", testPushConfig},
		{"PushConfig/Backlog", testPushBacklog},
		{"Times", testTimes},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tc.fn(t, &bundle{t: t, s: s, ctx: t.Context()})
		})
	}
}
