package ledger

// Restart recovery's rules (chapter 16 "Restart Recovery"): what becomes
// of a run found active at start.

import (
	"context"

	"keep/storage"
)

// Recover applies chapter 16's phase-reset rules to run, found active at
// start and carrying mut (nil: none): it becomes crashed and, where work
// must go on, a recovery run takes over its mutation and events — a run
// past its mutation is retried forward, one whose call may have happened
// is handed to the reconciler, one approved but not sent sends it, and
// anything else gives its events back. keep stopping under a run is never
// counted against its script (the crash limit counts worker deaths:
// engine/runs.go). w must have been read in tx.
func (l *Ledger) Recover(ctx context.Context, tx *storage.Tx, w *storage.Workflow, run *storage.Run, mut *storage.Mutation) (Decision, error) {
	if notBegun(w, run, mut) {
		return Decision{}, nil
	}
	now := l.now()
	run.Status, run.UpdatedAt, run.ClosedAt = storage.RunCrashed, now, &now
	// keep stopped under the run (a restart, a kill, a machine that
	// slept): not the script's doing, which runs in a worker of its own
	// and cannot take keep down; so it is never counted against the
	// script (the crash loop counts worker deaths: engine/runs.go). The
	// run's history says so, or "crashed" would stand there unexplained.
	if run.Error == "" {
		run.Error = "keep stopped while this run was under way; it was found unfinished when keep started again"
	}
	d, err := l.MoveRun(ctx, tx, w, run, ByRecovery, "")
	if err != nil {
		return d, err
	}
	uncertain := mut != nil && (mut.Status == storage.MutationInFlight || mut.Status == storage.MutationNeedsReconcile)
	switch {
	case run.HandlerType == "producer":
		return d, nil // its schedule did not advance: it runs again
	case PastMutation(run):
		_, r, err := l.RetryForward(ctx, tx, run, ByRecovery, ByRecovery)
		d.add(r)
		return d, err
	case uncertain:
		r, err := l.RecoveryRun(ctx, tx, run, storage.RunPausedReconciliation)
		if err != nil {
			return d, err
		}
		u, err := l.Uncertain(ctx, tx, w, mut, r)
		d.add(u)
		return d, err
	case mut != nil && (mut.Status == storage.MutationApproved || mut.Status == storage.MutationAwaitingApproval):
		// approved but not yet sent: the recovery run sends it
		_, err := l.RecoveryRun(ctx, tx, run, storage.RunActive)
		return d, err
	default:
		_, err := tx.Release(ctx, run.ID, now)
		return d, err
	}
}

// notBegun: run is a recovery run found active again with nothing of it
// begun — its approved call still unsent (a call is durably in_flight
// before it goes out), or its next still to run from emitting (next's
// effects commit with the run, at once) — on the workflow's version. It
// is queued work, not a crash: crashed, it would be made again identical
// at every start of keep (every command, with no daemon), without end
// while its workflow is paused and nothing runs it. A deploy since makes
// it a crash again, so its retry runs the new version.
func notBegun(w *storage.Workflow, run *storage.Run, mut *storage.Mutation) bool {
	if run.Trigger != ByRecovery || run.ScriptVersion != w.Version {
		return false
	}
	if run.Phase == storage.PhaseEmitting {
		return true
	}
	return mut != nil && (mut.Status == storage.MutationApproved || mut.Status == storage.MutationAwaitingApproval)
}
