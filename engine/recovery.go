package engine

import (
	"context"

	"keep/storage"
)

// recover applies chapter 16 "Restart Recovery" once at start: every run
// found active is marked crashed and recovered per the phase-reset rules,
// and a mutation that was in flight is reconciled, never re-executed.
func (e *Engine) recover(ctx context.Context) error {
	q := e.db.Read()
	active, err := q.ActiveRuns(ctx)
	if err != nil {
		return err
	}
	for _, run := range active {
		w, err := q.WorkflowByID(ctx, run.WorkflowID)
		if err != nil {
			return err
		}
		if err := e.tRecoverRun(ctx, w, run); err != nil {
			return err
		}
		e.log.Info("recovered a run found active", "workflow", w.Name, "run", run.ID, "phase", run.Phase)
	}
	// a transient wait on an in-flight row: keep may have stopped mid-call
	open, err := q.OpenMutations(ctx)
	if err != nil {
		return err
	}
	for _, m := range open {
		if m.Status != "in_flight" {
			continue
		}
		w, err := q.WorkflowByID(ctx, m.WorkflowID)
		if err != nil {
			return err
		}
		if err := e.tUncertainAfterRestart(ctx, w, m, 0); err != nil {
			return err
		}
	}
	wfs, err := q.Workflows(ctx)
	if err != nil {
		return err
	}
	for _, w := range wfs {
		if err := e.markPending(ctx, w); err != nil {
			return err
		}
	}
	return nil
}

// markPending marks dirty the consumers with pending events in a subscribed
// topic (chapter 16 "Restart Recovery", step 2); a consumer waiting only on
// its wakeAt has that persisted already.
func (e *Engine) markPending(ctx context.Context, w *storage.Workflow) error {
	if w.Version == 0 {
		return nil
	}
	sc, err := e.script(ctx, w.ID, w.Version)
	if err != nil {
		// not fatal to the host: stepping the workflow blocks it as internal
		e.log.Warn("recovery: workflow script does not load", "workflow", w.Name, "err", err)
		return nil
	}
	ws := e.state(w.ID)
	for _, c := range sc.Workflow.Consumers {
		oldest, err := e.db.Read().OldestPending(ctx, w.ID, c.Subscribe)
		if err != nil {
			return err
		}
		if oldest != 0 {
			ws.markDirty(c.Name)
		}
	}
	return nil
}
