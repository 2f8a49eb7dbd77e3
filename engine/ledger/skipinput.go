package ledger

import (
	"context"

	"keep/storage"
)

// SkipInput is the person's skip of an input and the work it caused
// (DESIGN.md §7.1), in tx: the runs holding its events are found here
// (the engine chooses none). A run that has not mutated is abandoned — its
// mutation, still only asked for or approved (or failed), skipped and its
// prompt's reminder cancelled, the run closed, its events released, its
// block lifted; a run that may have mutated is kept and completes. The
// input's other pending events become skipped, and once it commits every
// consumer is marked (the abandoned runs' events are back in the queue).
// w, the input's workflow, must have been read in tx.
func (l *Ledger) SkipInput(ctx context.Context, tx *storage.Tx, w *storage.Workflow, inputID int64) (Decision, error) {
	d := Decision{MarkConsumers: true}
	now := l.now()
	holders, err := tx.RunsHoldingInput(ctx, inputID)
	if err != nil {
		return d, err
	}
	var keep []int64
	for _, rid := range holders {
		run, err := tx.RunByID(ctx, rid)
		if err != nil {
			return d, err
		}
		var m *storage.Mutation
		if run.MutationID != 0 {
			if m, err = tx.MutationByID(ctx, run.MutationID); err != nil {
				return d, err
			}
		}
		if PastMutation(run) || (m != nil && m.Status != storage.MutationAwaitingApproval && m.Status != storage.MutationApproved && m.Status != storage.MutationFailed) {
			keep = append(keep, rid) // it may have happened: it completes
			continue
		}
		if m != nil {
			d.cancel(answered(m))
			m.Error = "its input was skipped"
			o, err := l.MoveMutation(ctx, tx, w, m, MSkip, "user")
			d.add(o)
			if err != nil {
				return d, err
			}
		}
		run.ClosedAt, run.UpdatedAt = &now, now
		if run.Status == storage.RunActive {
			run.Status = storage.RunCrashed
		}
		run.Error = "abandoned: the user skipped its input"
		o, err := l.MoveRun(ctx, tx, w, run, "user:skip", "")
		d.add(o)
		if err != nil {
			return d, err
		}
		if _, err := tx.Release(ctx, rid, now); err != nil {
			return d, err
		}
		if w.BlockRunID == rid {
			o, err := l.MoveBlock(ctx, tx, w, storage.BlockNone, "", 0, nil)
			d.add(o)
			if err != nil {
				return d, err
			}
		}
	}
	// only now is every run to keep known: their events are not skipped
	if err := l.SkipInputEvents(ctx, tx, inputID, keep, now); err != nil {
		return d, err
	}
	return d, tx.MarkInputSkipped(ctx, inputID, now)
}
