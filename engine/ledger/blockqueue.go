package ledger

// A workflow holds one block, but a concurrent consumer's runs under way
// may each come to wait — an approval, a check, a back-off — or fail while
// another run's block stands. The standing block stays (the table would
// refuse, or silently drop, the other), each later run's own status and its
// mutation record what it waits on, and when the standing block lifts the
// block passes to the oldest run still waiting so. A workflow whose runs
// never overlap never queues: its blocks come and go with its one run.

import (
	"context"
	"time"

	"keep/storage"
)

// queuedBehind: run wants a block while another open run's block stands.
func queuedBehind(ctx context.Context, tx *storage.Tx, w *storage.Workflow, kind storage.BlockKind, runID int64) (bool, error) {
	if kind == storage.BlockNone || kind == storage.BlockInternal || w.BlockKind == storage.BlockNone || w.BlockKind == storage.BlockInternal ||
		runID == 0 || w.BlockRunID == 0 || w.BlockRunID == runID {
		return false, nil
	}
	return holderWaits(ctx, tx, w)
}

// holderWaits: the run holding w's block is still open, so what the block
// stands over is still its own; a holder that was closed (crashed, ended)
// hands its block on as ever.
func holderWaits(ctx context.Context, tx *storage.Tx, w *storage.Workflow) (bool, error) {
	holder, err := tx.RunByID(ctx, w.BlockRunID)
	if err != nil {
		return false, err
	}
	return holder.ClosedAt == nil && holder.Status != storage.RunCrashed, nil
}

// liftedByOther: run, whose own wait is over (approved, rejected, settled),
// asks to lift w's block while another run, still open, holds it — a
// concurrent run's question answered while the holder's back-off, refused
// credential or permission stands. That block is not run's to lift: lifted,
// the holder's timer or prompt would be gone with nothing to bring it back
// (queuedBlock re-derives blocks from open calls, not from failures).
func liftedByOther(ctx context.Context, tx *storage.Tx, w *storage.Workflow, runID int64) (bool, error) {
	if runID == 0 || w.BlockKind == storage.BlockNone || w.BlockRunID == 0 || w.BlockRunID == runID {
		return false, nil
	}
	return holderWaits(ctx, tx, w)
}

// queuedBlock is the block the oldest run still waiting should hold when
// the standing block lifts, if any: a paused run whose mutation is open, or
// a run that failed meanwhile. A failure pauses the whole workflow (chapter
// 06), so one that could not block when it happened blocks now; it stays
// open until the person retries or resumes past it (Unblock closes it).
func queuedBlock(ctx context.Context, tx *storage.Tx, w *storage.Workflow) (kind storage.BlockKind, reason string, runID int64, retryAt *time.Time, err error) {
	runs, err := tx.OpenRuns(ctx, w.ID)
	if err != nil {
		return storage.BlockNone, "", 0, nil, err
	}
	for _, r := range runs {
		// the run lifting its block has moved on first (approved, settled,
		// closed): a run still waiting here, whichever, wants the block
		if r.Status == storage.RunFailedLogic {
			return ClassLogic.BlockKind(), r.Handler + ": " + r.Error, r.ID, nil, nil
		}
		if r.MutationID == 0 {
			continue
		}
		switch r.Status {
		case storage.RunPausedApproval, storage.RunPausedReconciliation, storage.RunPausedTransient:
		default:
			continue
		}
		m, err := tx.MutationByID(ctx, r.MutationID)
		if err != nil {
			return storage.BlockNone, "", 0, nil, err
		}
		switch {
		case r.Status == storage.RunPausedApproval && m.Status == storage.MutationAwaitingApproval:
			return storage.BlockApproval, "waiting for approval: " + Title(m), r.ID, nil, nil
		case r.Status == storage.RunPausedReconciliation && m.Status == storage.MutationNeedsReconcile:
			return storage.BlockReconciliation, "checking whether " + Title(m) + " happened", r.ID, nil, nil
		case r.Status == storage.RunPausedReconciliation && m.Status == storage.MutationIndeterminate:
			return storage.BlockReconciliation, "did " + Title(m) + " happen? " + m.Error, r.ID, nil, nil
		case r.Status == storage.RunPausedReconciliation && m.Status == storage.MutationInFlight && m.NextAttemptAt != nil:
			// the person said it did not happen: the same call goes again
			// (Recheck)
			return storage.BlockReconciliation, "sending " + Title(m) + " again", r.ID, nil, nil
		case r.Status == storage.RunPausedTransient && m.Status == storage.MutationInFlight && m.NextAttemptAt != nil:
			return storage.BlockTransient, "will send " + Title(m) + " again: " + m.Error, r.ID, m.NextAttemptAt, nil
		case r.Status == storage.RunPausedTransient && m.Status == storage.MutationFailed:
			return storage.BlockTransient, r.Handler + ": " + m.Error, r.ID, nil, nil
		}
	}
	return storage.BlockNone, "", 0, nil, nil
}

// waitsBehind: run fails with class c while another open run's block
// stands, and c is one that queuedBlock cannot hand the block back to when
// that one lifts — a back-off, a refused credential or permission (a logic
// failure it can: the run stays failed:logic; keep's own error takes the
// block at once). Such a run is ended rather than left open and paused with
// nothing to lift or close it: its events go to a fresh run (or, past its
// mutation, to its retry) once the standing block lifts, and what needs the
// person, refused again, asks then.
func waitsBehind(ctx context.Context, tx *storage.Tx, w *storage.Workflow, run *storage.Run, c Class) (bool, error) {
	switch c {
	case ClassTransient, ClassAuth, ClassPermission:
		return queuedBehind(ctx, tx, w, c.BlockKind(), run.ID)
	}
	return false, nil
}
