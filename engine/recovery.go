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
		if err := e.markOnStart(ctx, w); err != nil {
			return err
		}
	}
	return nil
}

// markOnStart recovers a workflow's in-memory consumer flags (chapter 16
// "Restart Recovery"): a consumer is dirty only if a topic it reads holds
// pending events, or it has not run since its deploy (chapter 16 "Initial
// State" still owed). Anything else waits for a new event or its persisted
// wakeAt — a restart does not run every consumer once more. A wakeAt past
// the policy's latest is brought back to it: the policy or the clock may
// have changed while the host was down. One past is due now.
func (e *Engine) markOnStart(ctx context.Context, w *storage.Workflow) error {
	sc, err := e.script(ctx, w.ID, w.Version)
	if err != nil {
		return err
	}
	ws := e.state(w.ID)
	latest := e.now().Add(e.pol.MaxWake)
	q := e.db.Read()
	scheds, err := q.Schedules(ctx, w.ID)
	if err != nil {
		return err
	}
	byName := map[string]storage.Schedule{}
	for _, s := range scheds {
		byName[s.Handler] = s
	}
	for _, c := range sc.Workflow.Consumers {
		s := byName[c.Name]
		if s.WakeAt != nil && s.WakeAt.After(latest) {
			if err := e.db.Write(ctx, func(tx *storage.Tx) error {
				return tx.ClampWake(ctx, w.ID, c.Name, latest)
			}); err != nil {
				return err
			}
			e.log.Info("recovery: wakeAt clamped to policy", "workflow", w.Name, "consumer", c.Name, "was", *s.WakeAt, "now", latest)
		}
		if s.Unrun {
			ws.markDirty(c.Name)
			continue
		}
		oldest, err := q.OldestPending(ctx, w.ID, c.Subscribe)
		if err != nil {
			return err
		}
		if oldest != 0 {
			ws.markDirty(c.Name)
		}
	}
	return nil
}
