package ledger

import (
	"errors"
	"fmt"
	"testing"

	"keep/storage"
)

// TestMutationMachine: every (from, event) pair of the ledger, written out
// here independently of mutationMoves, goes where DESIGN.md §7.3 says or is
// refused.
func TestMutationMachine(t *testing.T) {
	t.Parallel()
	statuses := []storage.MutationStatus{"", storage.MutationAwaitingApproval, storage.MutationApproved, storage.MutationInFlight, storage.MutationApplied,
		storage.MutationFailed, storage.MutationNeedsReconcile, storage.MutationIndeterminate, storage.MutationSkipped}
	events := []MutationEvent{MAsk, MSend, MApprove, MApplied, MFailed, MUncertain, MRetryLater, MCheckLater, MGiveUp, MTryAgain, MSkip, MResend}
	want := map[storage.MutationStatus]map[MutationEvent]storage.MutationStatus{
		"":                               {MAsk: storage.MutationAwaitingApproval, MSend: storage.MutationInFlight},
		storage.MutationAwaitingApproval: {MApprove: storage.MutationApproved, MSkip: storage.MutationSkipped},
		storage.MutationApproved:         {MSend: storage.MutationInFlight, MSkip: storage.MutationSkipped},
		storage.MutationInFlight: {MApplied: storage.MutationApplied, MFailed: storage.MutationFailed, MUncertain: storage.MutationNeedsReconcile,
			MRetryLater: storage.MutationInFlight, MSend: storage.MutationInFlight},
		storage.MutationNeedsReconcile: {MApplied: storage.MutationApplied, MFailed: storage.MutationFailed, MCheckLater: storage.MutationNeedsReconcile,
			MGiveUp: storage.MutationIndeterminate, MTryAgain: storage.MutationNeedsReconcile, MSkip: storage.MutationSkipped, MResend: storage.MutationInFlight},
		// it did not happen, says the user: the same call again, same key
		storage.MutationIndeterminate: {MApplied: storage.MutationApplied, MFailed: storage.MutationFailed, MTryAgain: storage.MutationNeedsReconcile, MSkip: storage.MutationSkipped,
			MResend: storage.MutationInFlight},
		storage.MutationFailed: {MSkip: storage.MutationSkipped},
	}
	for _, from := range statuses {
		for _, ev := range events {
			t.Run(fmt.Sprintf("%s/%s", orNew(string(from)), ev), func(t *testing.T) {
				got, err := NextMutation(from, ev)
				exp, ok := want[from][ev]
				switch {
				case ok && (err != nil || got != exp):
					t.Fatalf("got %q, %v; want %q", got, err, exp)
				case !ok && !errors.Is(err, ErrRefused):
					t.Fatalf("got %q, %v; want a refusal", got, err)
				}
			})
		}
	}
	if MutationStatesKnown() != len(statuses) {
		t.Fatalf("the table has %d statuses, the test knows %d", MutationStatesKnown(), len(statuses))
	}
}

// TestRunMachine: every pair of run statuses and every pair of phases.
func TestRunMachine(t *testing.T) {
	t.Parallel()
	statuses := []storage.RunStatus{storage.RunActive, storage.RunPausedTransient, storage.RunPausedApproval, storage.RunPausedReconciliation, storage.RunFailedLogic,
		storage.RunFailedInternal, storage.RunCommitted, storage.RunCrashed}
	leaves := map[storage.RunStatus][]storage.RunStatus{
		storage.RunActive: {storage.RunPausedTransient, storage.RunPausedApproval, storage.RunPausedReconciliation, storage.RunFailedLogic, storage.RunFailedInternal,
			storage.RunCommitted, storage.RunCrashed},
		storage.RunPausedTransient: {storage.RunActive},
		// answered, or ended when a new run takes the work over
		storage.RunPausedApproval:       {storage.RunActive, storage.RunPausedTransient},
		storage.RunPausedReconciliation: {storage.RunActive, storage.RunPausedTransient},
	}
	for _, from := range statuses {
		for _, to := range statuses {
			exp := from == to
			for _, s := range leaves[from] {
				exp = exp || s == to
			}
			if got := CheckRunMove(from, storage.PhaseMutating, to, storage.PhaseMutating) == nil; got != exp {
				t.Errorf("run %s → %s: allowed %v, want %v", from, to, got, exp)
			}
		}
	}
	phases := []storage.Phase{storage.PhasePreparing, storage.PhasePrepared, storage.PhaseMutating, storage.PhaseMutated, storage.PhaseEmitting, storage.PhaseCommitted}
	// forward only (chapter 06b); mutated only from mutating (the mutation
	// was applied); one transaction may pass several checkpoints
	forward := map[storage.Phase][]storage.Phase{
		storage.PhasePreparing: {storage.PhasePrepared, storage.PhaseMutating, storage.PhaseEmitting, storage.PhaseCommitted},
		storage.PhasePrepared:  {storage.PhaseMutating, storage.PhaseEmitting, storage.PhaseCommitted},
		storage.PhaseMutating:  {storage.PhaseMutated, storage.PhaseEmitting, storage.PhaseCommitted},
		storage.PhaseMutated:   {storage.PhaseEmitting, storage.PhaseCommitted},
		storage.PhaseEmitting:  {storage.PhaseCommitted},
	}
	for _, from := range phases {
		for _, to := range phases {
			exp := from == to
			for _, p := range forward[from] {
				exp = exp || p == to
			}
			if got := CheckRunMove(storage.RunActive, from, storage.RunActive, to) == nil; got != exp {
				t.Errorf("phase %s → %s: allowed %v, want %v", from, to, got, exp)
			}
		}
	}
}

// TestBlockMachine: every (from, to) pair of block kinds, written out here
// independently of blockMoves: lifted when its cause is over, internal over
// anything, and otherwise only where the same subject goes on.
func TestBlockMachine(t *testing.T) {
	t.Parallel()
	kinds := []storage.BlockKind{storage.BlockNone, storage.BlockApproval, storage.BlockReconciliation, storage.BlockRepair, storage.BlockTransient, storage.BlockInternal,
		storage.BlockPermission, storage.BlockAuth}
	every := kinds
	want := map[storage.BlockKind][]storage.BlockKind{
		storage.BlockNone:           every,
		storage.BlockApproval:       {storage.BlockNone, storage.BlockInternal},
		storage.BlockReconciliation: {storage.BlockNone, storage.BlockReconciliation, storage.BlockTransient, storage.BlockInternal},
		storage.BlockRepair:         {storage.BlockNone, storage.BlockRepair, storage.BlockInternal},
		storage.BlockTransient:      {storage.BlockNone, storage.BlockReconciliation, storage.BlockInternal},
		storage.BlockPermission:     {storage.BlockNone, storage.BlockInternal},
		storage.BlockAuth:           {storage.BlockNone, storage.BlockInternal},
		storage.BlockInternal:       every,
	}
	for _, from := range kinds {
		for _, to := range kinds {
			exp := false
			for _, k := range want[from] {
				exp = exp || k == to
			}
			err := CheckBlockMove(from, to)
			if got := err == nil; got != exp || (!got && !errors.Is(err, ErrRefused)) {
				t.Errorf("block %q → %q: %v, want allowed %v", from, to, err, exp)
			}
		}
	}
	if BlockKindsKnown() != len(kinds) {
		t.Fatalf("the table has %d kinds, the test knows %d", BlockKindsKnown(), len(kinds))
	}
}
