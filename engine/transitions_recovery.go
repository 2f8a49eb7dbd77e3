package engine

// Restart recovery as a transition (chapter 16 "Restart Recovery": the
// rules are ledger.Recover's; the orchestration is in recovery.go), and a
// workflow stopped on a bug of ours instead of spinning on it.

import (
	"context"

	"keep/engine/api"
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
	return e.db.Write(ctx, func(tx *storage.Tx) error {
		if err := reread(ctx, tx, w); err != nil {
			return err
		}
		d, err := e.led.Recover(ctx, tx, w, run, mut)
		if err != nil {
			return err
		}
		return e.act(ctx, tx, w, d)
	})
}

// internalBlock blocks a workflow on a bug of ours instead of spinning on it.
func (e *Engine) internalBlock(ctx context.Context, id int64, cause error) {
	var w *storage.Workflow
	err := e.db.Write(ctx, func(tx *storage.Tx) error {
		var err error
		if w, err = tx.WorkflowByID(ctx, id); err != nil {
			return err
		}
		return e.setBlock(ctx, tx, w, BlockInternal, "internal error: "+cause.Error(), w.BlockRunID, nil)
	})
	if err != nil {
		e.log.Error("blocking a workflow on an internal error", "workflow", id, "err", err)
		return
	}
	e.notify(api.NoteNeedsAttention, w.Name, "internal error: "+cause.Error())
}
