package engine

// Restart recovery as a transition (chapter 16 "Restart Recovery": the
// rules are ledger.Recover's; the orchestration is in recovery.go), and a
// workflow stopped on a bug of ours instead of spinning on it.

import (
	"context"

	"keep/engine/api"
	"keep/engine/ledger"
	"keep/storage"
)

// tRecoverRun applies chapter 16's phase-reset rules to a run found
// active at start (ledger.Recover).
func (e *Engine) tRecoverRun(ctx context.Context, w *storage.Workflow, run *storage.Run) error {
	var mut *storage.Mutation
	if run.MutationID != 0 {
		m, err := e.db.Read().MutationByID(ctx, run.MutationID)
		if err != nil {
			return err
		}
		mut = m
	}
	_, err := e.apply(ctx, e.db.Write, w, func(tx *storage.Tx) (ledger.Decision, error) {
		if err := reread(ctx, tx, w); err != nil {
			return ledger.Decision{}, err
		}
		return e.led.Recover(ctx, tx, w, run, mut)
	})
	return err
}

// internalBlock blocks a workflow on a bug of ours instead of spinning on it.
func (e *Engine) internalBlock(ctx context.Context, id int64, cause error) {
	w := new(storage.Workflow) // read in the transaction
	_, err := e.apply(ctx, e.db.Write, w, func(tx *storage.Tx) (ledger.Decision, error) {
		cur, err := tx.WorkflowByID(ctx, id)
		if err != nil {
			return ledger.Decision{}, err
		}
		*w = *cur
		return e.led.MoveBlock(ctx, tx, w, BlockInternal, "internal error: "+cause.Error(), w.BlockRunID, nil)
	})
	if err != nil {
		e.log.Error("blocking a workflow on an internal error", "workflow", id, "err", err)
		return
	}
	e.notify(api.NoteNeedsAttention, w.Name, "internal error: "+cause.Error())
}
