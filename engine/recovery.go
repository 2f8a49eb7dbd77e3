package engine

import (
	"context"

	"keep/connectors"
	"keep/sandbox"
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
// wakeAt — a restart does not run every consumer once more. Its schedules
// are first brought back within reach of now (clampSchedules): the policy
// or the clock may have changed while the host was down.
func (e *Engine) markOnStart(ctx context.Context, w *storage.Workflow) error {
	sc, err := e.script(ctx, w.ID, w.Version)
	if err != nil {
		return err
	}
	if err := e.clampSchedules(ctx, w, sc); err != nil {
		return err
	}
	ws := e.state(w.ID)
	q := e.db.Read()
	byName, err := schedulesByHandler(ctx, q, w.ID)
	if err != nil {
		return err
	}
	for _, c := range sc.Workflow.Consumers {
		if byName[c.Name].Unrun {
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

// schedulesByHandler is a workflow's schedules by their handler's name.
func schedulesByHandler(ctx context.Context, q storage.Q, workflowID int64) (map[string]storage.Schedule, error) {
	scheds, err := q.Schedules(ctx, workflowID)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]storage.Schedule, len(scheds))
	for _, s := range scheds {
		byName[s.Handler] = s
	}
	return byName, nil
}

// clampSchedules brings a workflow's stored times back within reach of
// now, where a clock since set back (or a policy since changed) left them
// further: a consumer's wakeAt to policy.max_wake from now, a producer's
// next run to its schedule's next time from now, a back-off or a call's
// next attempt to the longest wait keep sets. A clock a year ahead,
// then put right, would otherwise leave them a year away. One past is due
// now. At start, and when the running host sees its clock jump
// (watchClock).
func (e *Engine) clampSchedules(ctx context.Context, w *storage.Workflow, sc *sandbox.Script) error {
	now := e.now()
	latest := now.Add(e.pol.MaxWake)
	byName, err := schedulesByHandler(ctx, e.db.Read(), w.ID)
	if err != nil {
		return err
	}
	for _, c := range sc.Workflow.Consumers {
		s := byName[c.Name]
		if s.WakeAt != nil && s.WakeAt.After(latest) {
			if err := e.db.Write(ctx, func(tx *storage.Tx) error {
				return tx.ClampWake(ctx, w.ID, c.Name, latest)
			}); err != nil {
				return err
			}
			e.log.Info("wakeAt clamped to policy", "workflow", w.Name, "consumer", c.Name, "was", *s.WakeAt, "now", latest)
		}
	}
	// a back-off, or a call's next sending or check, is never further than
	// the longest wait keep sets (policy.backoff_max and its jitter, or a
	// Retry-After)
	longest := max(e.pol.BackoffMax+e.pol.BackoffMax/10, connectors.MaxRetryAfter)
	if err := e.db.Write(ctx, func(tx *storage.Tx) error {
		return tx.ClampRetries(ctx, w.ID, now.Add(longest))
	}); err != nil {
		return err
	}
	for _, p := range sc.Workflow.Producers {
		s, next := byName[p.Name], p.Schedule.Next(now)
		if s.NextRunAt != nil && !next.IsZero() && s.NextRunAt.After(next) {
			if err := e.db.Write(ctx, func(tx *storage.Tx) error {
				return tx.ClampNextRun(ctx, w.ID, p.Name, next)
			}); err != nil {
				return err
			}
			e.log.Info("next run brought back to its schedule", "workflow", w.Name, "producer", p.Name, "was", *s.NextRunAt, "now", next)
		}
	}
	return nil
}
