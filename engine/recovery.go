package engine

import (
	"context"
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
	// a row waiting to be sent again after a 429 or 503 (in_flight with
	// its next attempt set, its run paused) was not in flight at the stop:
	// it is sent again when due, with the same key
	wfs, err := q.Workflows(ctx)
	if err != nil {
		return err
	}
	for _, w := range wfs {
		if w.Version == 0 {
			continue
		}
		if _, err := e.script(ctx, w.ID, w.Version); err != nil {
			// not fatal to the host: stepping the workflow blocks it as internal
			e.log.Warn("recovery: workflow script does not load", "workflow", w.Name, "err", err)
			continue
		}
		// chapter 16 "Initial State": every consumer is dirty on start, so
		// each prepares once even with nothing pending — that is how a
		// wakeAt it returns gets scheduled at all. A prepare that reserves
		// nothing and sets no due wakeAt ends the work, so a drain ends.
		e.markAllConsumers(ctx, e.state(w.ID), w)
	}
	return nil
}
