package ledger

// Restart recovery's rules (chapter 16 "Restart Recovery"): what becomes
// of a run found active at start.

import (
	"context"
	"fmt"

	"keep/storage"
)

// Recover applies chapter 16's phase-reset rules to run, found active at
// start and carrying mut (nil: none): it becomes crashed and, where work
// must go on, a recovery run takes over its mutation and events — a run
// past its mutation is retried forward, one whose call may have happened
// is handed to the reconciler, one approved but not sent sends it, and
// anything else gives its events back. A handler found running crashLimit
// times in a row blocks its workflow. w must have been read in tx.
func (l *Ledger) Recover(ctx context.Context, tx *storage.Tx, w *storage.Workflow, run *storage.Run, mut *storage.Mutation, crashLimit int) (Decision, error) {
	now := l.now()
	run.Status, run.UpdatedAt, run.ClosedAt = storage.RunCrashed, now, &now
	d, err := l.MoveRun(ctx, tx, w, run, ByRecovery, "")
	if err != nil {
		return d, err
	}
	c, err := l.crashLoop(ctx, tx, w, run, mut, crashLimit)
	d.add(c)
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

// crashLoop blocks a workflow whose handler was found running at start
// limit times in a row: a handler that takes the process down (or one keep
// keeps being killed under) is asked about, not restarted forever. A run
// holding an uncertain mutation is left to the reconciler: its handler is
// not what runs next.
func (l *Ledger) crashLoop(ctx context.Context, tx *storage.Tx, w *storage.Workflow, run *storage.Run, mut *storage.Mutation, limit int) (Decision, error) {
	if limit <= 0 || PastMutation(run) || (mut != nil && (mut.Status == storage.MutationInFlight || mut.Status == storage.MutationNeedsReconcile)) {
		return Decision{}, nil
	}
	recent, err := tx.Runs(ctx, w.ID, 0, 4*limit, run.Handler)
	if err != nil {
		return Decision{}, err
	}
	crashed := 0
	for _, r := range recent {
		if r.Handler != run.Handler {
			continue // Runs matches handler names by substring
		}
		if r.Status != storage.RunCrashed {
			break
		}
		crashed++
	}
	if crashed < limit {
		return Decision{}, nil
	}
	reason := fmt.Sprintf("%s %s was running the last %d times keep stopped without finishing it (it may take keep down); fix the script, then keep retry %s",
		run.HandlerType, run.Handler, crashed, w.Name)
	return l.MoveBlock(ctx, tx, w, storage.BlockInternal, reason, run.ID, nil)
}
