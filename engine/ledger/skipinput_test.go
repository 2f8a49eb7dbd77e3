package ledger

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"keep/storage"
)

// holdInput has f's run hold an event caused by a new input of f's
// workflow; it returns the input's id and the event's.
func holdInput(t *testing.T, f *fixture) (inputID, evID int64) {
	t.Helper()
	ctx := context.Background()
	now := f.l.now()
	inputID = 101
	must(t, f.db.Write(ctx, func(tx *storage.Tx) error {
		if err := tx.InsertInput(ctx, &storage.Input{ID: inputID, WorkflowID: f.w.ID, Source: "p", Type: "row", ExternalID: "x",
			Title: "row x", CreatedAt: now}); err != nil {
			return err
		}
		if err := tx.EnsureTopic(ctx, f.w.ID, "held"); err != nil {
			return err
		}
		var err error
		if evID, _, err = tx.Publish(ctx, f.w.ID, "held", "m-held", json.RawMessage(`{}`), 0, []int64{inputID}, now); err != nil {
			return err
		}
		return tx.Reserve(ctx, f.w.ID, f.run.ID, []int64{evID}, now)
	}))
	return inputID, evID
}

// TestSkipInput: SkipInput finds the runs holding the input's events
// itself. One that has not mutated (its call waits for approval) is
// abandoned: its mutation skipped and its prompt's reminder cancelled, the
// run closed, its block lifted, its event skipped with the input; one whose
// call may have happened (in flight) is kept, holding its event. Either
// way the consumers are marked once it commits.
func TestSkipInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	skip := func(t *testing.T, f *fixture, inputID int64) Decision {
		t.Helper()
		var d Decision
		must(t, f.db.Write(ctx, func(tx *storage.Tx) error {
			w, err := tx.WorkflowByID(ctx, f.w.ID)
			if err != nil {
				return err
			}
			f.w = w
			d, err = f.l.SkipInput(ctx, tx, f.w, inputID)
			return err
		}))
		return d
	}
	t.Run("a run waiting for approval is abandoned", func(t *testing.T) {
		t.Parallel()
		f := approvalFixture(t)
		f.mut.ReminderID = 5 // as the engine's scheduling left it
		must(t, f.db.Write(ctx, func(tx *storage.Tx) error { return f.l.TouchMutation(ctx, tx, f.mut) }))
		inputID, evID := holdInput(t, f)
		d := skip(t, f, inputID)
		q := f.db.Read()
		m, err := q.MutationByID(ctx, f.mut.ID)
		must(t, err)
		run, err := q.RunByID(ctx, f.run.ID)
		must(t, err)
		w, err := q.WorkflowByID(ctx, f.w.ID)
		must(t, err)
		ev, err := q.EventByID(ctx, evID)
		must(t, err)
		if m.Status != storage.MutationSkipped || m.ReminderID != 0 || !slices.Equal(d.CancelReminders, []int64{5}) {
			t.Fatalf("mutation %s reminder %d, cancel %v; want skipped, its reminder 5 cancelled", m.Status, m.ReminderID, d.CancelReminders)
		}
		if run.ClosedAt == nil || run.MovedBy != "user:skip" || w.BlockKind != storage.BlockNone ||
			ev.Status != storage.EventSkipped || ev.ReservedBy != 0 || !d.MarkConsumers {
			t.Fatalf("run %s closed %v by %q, block %q, event %s reserved by %d, mark %v", run.Status, run.ClosedAt != nil,
				run.MovedBy, w.BlockKind, ev.Status, ev.ReservedBy, d.MarkConsumers)
		}
	})
	t.Run("a run whose call is in flight is kept", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, 1)
		inputID, evID := holdInput(t, f)
		d := skip(t, f, inputID)
		q := f.db.Read()
		run, err := q.RunByID(ctx, f.run.ID)
		must(t, err)
		ev, err := q.EventByID(ctx, evID)
		must(t, err)
		if run.ClosedAt != nil || run.Status != storage.RunActive || ev.Status != storage.EventPending || ev.ReservedBy != f.run.ID || !d.MarkConsumers {
			t.Fatalf("run %s closed %v, event %s reserved by %d, mark %v; want it kept, holding its event",
				run.Status, run.ClosedAt != nil, ev.Status, ev.ReservedBy, d.MarkConsumers)
		}
	})
}
