package ledger

import (
	"context"
	"testing"

	"keep/storage"
)

// TestRecover: chapter 16's phase-reset rules for a run found active at
// start: crashed, and its work taken over by what the phase says.
func TestRecover(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// recoverRun recovers the fixture's run; it returns the run that holds
	// the fixture's event after it (nil: released).
	recoverRun := func(t *testing.T, f *fixture, mut *storage.Mutation) (Decision, *storage.Workflow, *storage.Run) {
		t.Helper()
		var d Decision
		must(t, f.db.Write(ctx, func(tx *storage.Tx) error {
			var err error
			d, err = f.l.Recover(ctx, tx, f.w, f.run, mut)
			return err
		}))
		w, err := f.db.Read().WorkflowByID(ctx, f.w.ID)
		must(t, err)
		ev, err := f.db.Read().EventByID(ctx, f.evID)
		must(t, err)
		if ev.ReservedBy == 0 {
			return d, w, nil
		}
		r, err := f.db.Read().RunByID(ctx, ev.ReservedBy)
		must(t, err)
		return d, w, r
	}
	t.Run("a call in flight is handed to the reconciler by a recovery run", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, 1)
		_, w, r := recoverRun(t, f, f.mut)
		m, err := f.db.Read().MutationByID(ctx, f.mut.ID)
		must(t, err)
		if r == nil || r.RetryOf != f.run.ID || r.Status != storage.RunPausedReconciliation || m.Status != storage.MutationNeedsReconcile ||
			w.BlockKind != storage.BlockReconciliation || w.BlockRunID != r.ID {
			t.Fatalf("recovery run %+v, mutation %s, block %q on %d", r, m.Status, w.BlockKind, w.BlockRunID)
		}
	})
	t.Run("a run past its mutation is retried forward at emitting", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, 1)
		must(t, f.db.Write(ctx, func(tx *storage.Tx) error {
			_, err := f.l.RecordOutcome(ctx, tx, f.w, f.run, f.mut, Call{}, Retry{})
			return err
		}))
		_, _, r := recoverRun(t, f, f.mut)
		if r == nil || r.RetryOf != f.run.ID || r.Phase != storage.PhaseEmitting || r.Status != storage.RunActive {
			t.Fatalf("the events' run %+v, want the retry at emitting", r)
		}
	})
	t.Run("a run before its mutation gives its events back, and keep's stop blocks nothing", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, 1)
		f.run.MutationID = 0 // recovery reads no mutation for it
		d, w, r := recoverRun(t, f, nil)
		got, err := f.db.Read().RunByID(ctx, f.run.ID)
		must(t, err)
		if r != nil || got.Status != storage.RunCrashed || got.MovedBy != ByRecovery {
			t.Fatalf("events held by %+v, run %s by %s; want released, crashed by recovery", r, got.Status, got.MovedBy)
		}
		// keep stopping under a run is not the script's fault: however
		// often it happens, the workflow is not blocked for it
		if w.BlockKind != storage.BlockNone || len(d.Journal) != 0 {
			t.Fatalf("block %q, journal %v; want no block for keep's own stop", w.BlockKind, d.Journal)
		}
	})
}
