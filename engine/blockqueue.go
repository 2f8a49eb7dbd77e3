package engine

// A workflow holds one block, but a concurrent consumer's runs under way
// may each come to wait — an approval, a check, a back-off — while another
// run's block stands. The standing block stays (the table would refuse, or
// silently drop, the other), each later run's own status and its mutation
// record what it waits on, and when the standing block lifts the block
// passes to the oldest run still waiting so. A workflow whose runs never
// overlap never queues: its blocks come and go with its one run.

import (
	"context"
	"time"

	"keep/storage"
)

// queuedBehind: run wants a block while another open run's block stands.
func queuedBehind(ctx context.Context, tx *storage.Tx, w *storage.Workflow, kind BlockKind, runID int64) (bool, error) {
	if kind == BlockNone || kind == BlockInternal || w.BlockKind == BlockNone || w.BlockKind == BlockInternal ||
		runID == 0 || w.BlockRunID == 0 || w.BlockRunID == runID {
		return false, nil
	}
	holder, err := tx.RunByID(ctx, w.BlockRunID)
	if err != nil {
		return false, err
	}
	// a holder that was closed (crashed, ended) hands its block on as ever
	return holder.ClosedAt == nil && holder.Status != RunCrashed, nil
}

// queuedBlock is the block the oldest run still waiting should hold when
// the standing block lifts, if any: a paused run whose mutation is open.
func queuedBlock(ctx context.Context, tx *storage.Tx, w *storage.Workflow) (kind BlockKind, reason string, runID int64, retryAt *time.Time, err error) {
	runs, err := tx.OpenRuns(ctx, w.ID)
	if err != nil {
		return BlockNone, "", 0, nil, err
	}
	for _, r := range runs {
		// the run lifting its block has moved on first (approved, settled,
		// closed): a run still waiting here, whichever, wants the block
		if r.MutationID == 0 {
			continue
		}
		switch r.Status {
		case RunPausedApproval, RunPausedReconciliation, RunPausedTransient:
		default:
			continue
		}
		m, err := tx.MutationByID(ctx, r.MutationID)
		if err != nil {
			return BlockNone, "", 0, nil, err
		}
		switch {
		case r.Status == RunPausedApproval && m.Status == MutationAwaitingApproval:
			return BlockApproval, "waiting for approval: " + titleOr(m), r.ID, nil, nil
		case r.Status == RunPausedReconciliation && m.Status == MutationNeedsReconcile:
			return BlockReconciliation, "checking whether " + titleOr(m) + " happened", r.ID, nil, nil
		case r.Status == RunPausedReconciliation && m.Status == MutationIndeterminate:
			return BlockReconciliation, "did " + titleOr(m) + " happen? " + m.Error, r.ID, nil, nil
		case r.Status == RunPausedTransient && m.Status == MutationInFlight && m.NextAttemptAt != nil:
			return BlockTransient, "will send " + titleOr(m) + " again: " + m.Error, r.ID, m.NextAttemptAt, nil
		case r.Status == RunPausedTransient && m.Status == MutationFailed:
			return BlockTransient, r.Handler + ": " + m.Error, r.ID, nil, nil
		}
	}
	return BlockNone, "", 0, nil, nil
}
