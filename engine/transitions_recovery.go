package engine

// Restart recovery as transitions (chapter 16 "Restart Recovery"; the
// orchestration is in recovery.go).

import (
	"context"
	"fmt"

	"keep/storage"
)

// tRecoverRun applies chapter 16's phase-reset rules to a run found
// active at start: it becomes crashed and, where work must go on, a recovery
// run takes over its mutation and events.
func (e *Engine) tRecoverRun(ctx context.Context, w *storage.Workflow, run *storage.Run) error {
	now := e.now()
	var mut *storage.Mutation
	if run.MutationID != 0 {
		m, err := e.db.Read().MutationByID(ctx, run.MutationID)
		if err != nil {
			return err
		}
		mut = m
	}
	return e.db.Write(ctx, func(tx *storage.Tx) error {
		if err := reread(ctx, tx, w); err != nil {
			return err
		}
		run.Status, run.UpdatedAt, run.ClosedAt = RunCrashed, now, &now
		if err := e.moveRun(ctx, tx, w, run, byRecovery); err != nil {
			return err
		}
		if err := e.crashLoopTx(ctx, tx, w, run, mut); err != nil {
			return err
		}
		switch {
		case run.HandlerType == "producer":
			return nil // its schedule did not advance: it runs again
		case pastMutation(run):
			_, err := e.tRetryForward(ctx, tx, run, byRecovery, byRecovery)
			return err
		case mut != nil && (mut.Status == MutationInFlight || mut.Status == MutationNeedsReconcile):
			r, err := e.recoveryRun(ctx, tx, run, RunPausedReconciliation)
			if err != nil {
				return err
			}
			return e.uncertainTx(ctx, tx, w, mut, r)
		case mut != nil && (mut.Status == MutationApproved || mut.Status == MutationAwaitingApproval):
			// approved but not yet sent: the recovery run sends it
			_, err := e.recoveryRun(ctx, tx, run, RunActive)
			return err
		default:
			_, err := tx.Release(ctx, run.ID, now)
			return err
		}
	})
}

// recoveryRun creates the run that takes over a crashed run's mutation and
// events (ledger.RecoveryRun).
func (e *Engine) recoveryRun(ctx context.Context, tx *storage.Tx, old *storage.Run, status RunStatus) (*storage.Run, error) {
	return e.led.RecoveryRun(ctx, tx, old, status)
}

// uncertainTx hands a mutation that may have happened to the reconciler
// (ledger.Uncertain).
func (e *Engine) uncertainTx(ctx context.Context, tx *storage.Tx, w *storage.Workflow, m *storage.Mutation, run *storage.Run) error {
	d, err := e.led.Uncertain(ctx, tx, w, m, run)
	if err != nil {
		return err
	}
	return e.act(tx, w, d)
}

// crashLoopTx blocks a workflow whose handler was found running at start
// CrashLimit times in a row: a handler that takes the process down (or one
// keep keeps being killed under) is asked about, not restarted forever. A
// run holding an uncertain mutation is left to the reconciler: its handler
// is not what runs next.
func (e *Engine) crashLoopTx(ctx context.Context, tx *storage.Tx, w *storage.Workflow, run *storage.Run, mut *storage.Mutation) error {
	limit := e.pol.CrashLimit
	if limit <= 0 || pastMutation(run) || (mut != nil && (mut.Status == MutationInFlight || mut.Status == MutationNeedsReconcile)) {
		return nil
	}
	recent, err := tx.Runs(ctx, w.ID, 0, 4*limit, run.Handler)
	if err != nil {
		return err
	}
	crashed := 0
	for _, r := range recent {
		if r.Handler != run.Handler {
			continue // Runs matches handler names by substring
		}
		if r.Status != RunCrashed {
			break
		}
		crashed++
	}
	if crashed < limit {
		return nil
	}
	reason := fmt.Sprintf("%s %s was running the last %d times keep stopped without finishing it (it may take keep down); fix the script, then keep retry %s",
		run.HandlerType, run.Handler, crashed, w.Name)
	return e.setBlock(ctx, tx, w, BlockInternal, reason, run.ID, nil)
}
