package ledger

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"keep/storage"
)

// approvalFixture is a fixture whose call waits for the person's approval:
// its run paused at mutating, its workflow (one of its own) blocked on it.
func approvalFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	f := newFixture(t, 1)
	f.w = &storage.Workflow{Name: "w2"} // its own workflow: one open run each
	f.run = &storage.Run{Handler: "c2", HandlerType: "consumer", ScriptVersion: 1, Trigger: "event",
		Phase: storage.PhasePreparing, Status: storage.RunActive, CreatedAt: f.mut.CreatedAt}
	f.mut = &storage.Mutation{Connector: "http", Method: "post", CreatedAt: f.mut.CreatedAt}
	must(t, f.db.Write(ctx, func(tx *storage.Tx) error {
		if _, err := f.l.MoveWorkflow(ctx, tx, f.w, WDeploy); err != nil {
			return err
		}
		f.run.WorkflowID, f.mut.WorkflowID = f.w.ID, f.w.ID
		if _, err := f.l.MoveRun(ctx, tx, f.w, f.run, ByScheduler, ""); err != nil {
			return err
		}
		f.mut.RunID = f.run.ID
		_, err := f.l.Ask(ctx, tx, f.w, f.run, f.mut, "no grant")
		return err
	}))
	return f
}

// takeOver closes the fixture's run, ended, and has a new run carry its
// mutation on at status, as recovery does; it returns the new run.
func takeOver(t *testing.T, f *fixture, status storage.RunStatus) *storage.Run {
	t.Helper()
	ctx := context.Background()
	var r *storage.Run
	must(t, f.db.Write(ctx, func(tx *storage.Tx) error {
		now := f.l.now()
		f.run.ClosedAt = &now
		Ended(f.run)
		if _, err := f.l.MoveRun(ctx, tx, f.w, f.run, ByRecovery, ""); err != nil {
			return err
		}
		var err error
		r, err = f.l.RecoveryRun(ctx, tx, f.run, status)
		return err
	}))
	return r
}

// answerMoves are the ledger's moves that answer a mutation, each as its
// callers call it — with the mutation and what was answered, never a run —
// and how to tell, from the rows, that it moved the run it was given.
var answerMoves = []struct {
	name     string
	approval bool // the mutation waits for approval (else it is uncertain)
	move     func(ctx context.Context, tx *storage.Tx, f *fixture) (Decision, error)
	moved    func(run *storage.Run, w *storage.Workflow) bool
}{
	{"Settle", false, func(ctx context.Context, tx *storage.Tx, f *fixture) (Decision, error) {
		return f.l.Settle(ctx, tx, f.w, f.mut, MApplied, "user", nil, "", Retry{})
	}, func(run *storage.Run, _ *storage.Workflow) bool {
		return run.Status == storage.RunActive && run.Phase == storage.PhaseMutated && run.MovedBy == "user:"+string(MApplied)
	}},
	{"Recheck", false, func(ctx context.Context, tx *storage.Tx, f *fixture) (Decision, error) {
		return f.l.Recheck(ctx, tx, f.w, f.mut, true)
	}, func(run *storage.Run, w *storage.Workflow) bool {
		return w.BlockKind == storage.BlockReconciliation && w.BlockRunID == run.ID && strings.HasPrefix(w.BlockReason, "sending")
	}},
	{"ResendNotApplied", false, func(ctx context.Context, tx *storage.Tx, f *fixture) (Decision, error) {
		return f.l.ResendNotApplied(ctx, tx, f.w, f.mut)
	}, func(run *storage.Run, w *storage.Workflow) bool {
		return w.BlockKind == storage.BlockReconciliation && w.BlockRunID == run.ID && strings.HasPrefix(w.BlockReason, "sending")
	}},
	{"Approve", true, func(ctx context.Context, tx *storage.Tx, f *fixture) (Decision, error) {
		return f.l.Approve(ctx, tx, f.w, f.mut)
	}, func(run *storage.Run, _ *storage.Workflow) bool {
		return run.Status == storage.RunActive && run.MovedBy == "user:approve"
	}},
	{"Reject", true, func(ctx context.Context, tx *storage.Tx, f *fixture) (Decision, error) {
		return f.l.Reject(ctx, tx, f.w, f.mut)
	}, func(run *storage.Run, _ *storage.Workflow) bool {
		return run.Status == storage.RunActive && run.Phase == storage.PhaseMutated &&
			string(run.MutationResult) == string(ResultSkipped)
	}},
}

// fixtureFor is the fixture a move answers: a call waiting for approval,
// or one left uncertain.
func fixtureFor(t *testing.T, approval bool) *fixture {
	if approval {
		return approvalFixture(t)
	}
	return uncertainFixture(t)
}

// moveAndRead performs a move on f's mutation and reads back run and f's
// workflow as it left them.
func moveAndRead(t *testing.T, f *fixture, move func(context.Context, *storage.Tx, *fixture) (Decision, error), runID int64) (*storage.Run, *storage.Workflow) {
	t.Helper()
	ctx := context.Background()
	must(t, f.db.Write(ctx, func(tx *storage.Tx) error {
		// the workflow as the move's transaction reads it (the engine rereads)
		w, err := tx.WorkflowByID(ctx, f.w.ID)
		if err != nil {
			return err
		}
		f.w = w
		_, err = move(ctx, tx, f)
		return err
	}))
	run, err := f.db.Read().RunByID(ctx, runID)
	must(t, err)
	w, err := f.db.Read().WorkflowByID(ctx, f.w.ID)
	must(t, err)
	return run, w
}

// TestAnswersFindTheCarrier: every move that answers a mutation moves the
// run that carries it, found in its own transaction: the mutation's own
// run, or the run that took it over (the old one, closed, left as it was);
// with no open run it is refused, naming the mutation, and writes nothing.
func TestAnswersFindTheCarrier(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, mv := range answerMoves {
		t.Run(mv.name+" moves the mutation's own run", func(t *testing.T) {
			t.Parallel()
			f := fixtureFor(t, mv.approval)
			carrier, err := Carrier(ctx, f.db.Read(), f.mut)
			must(t, err)
			if carrier.ID != f.run.ID {
				t.Fatalf("Carrier = run %d, want the mutation's own run %d", carrier.ID, f.run.ID)
			}
			if run, w := moveAndRead(t, f, mv.move, f.run.ID); !mv.moved(run, w) {
				t.Fatalf("run %+v, block %q on %d %q: not moved", run, w.BlockKind, w.BlockRunID, w.BlockReason)
			}
		})
		t.Run(mv.name+" moves the run that took the mutation over", func(t *testing.T) {
			t.Parallel()
			f := fixtureFor(t, mv.approval)
			status := storage.RunPausedReconciliation
			if mv.approval {
				status = storage.RunPausedApproval
			}
			old := *f.run
			r := takeOver(t, f, status)
			carrier, err := Carrier(ctx, f.db.Read(), f.mut)
			must(t, err)
			if carrier.ID != r.ID || r.RetryOf != old.ID {
				t.Fatalf("Carrier = run %d, want %d, the retry of %d", carrier.ID, r.ID, old.ID)
			}
			if run, w := moveAndRead(t, f, mv.move, r.ID); !mv.moved(run, w) {
				t.Fatalf("the new run %+v, block %q on %d %q: not moved", run, w.BlockKind, w.BlockRunID, w.BlockReason)
			}
			was, err := f.db.Read().RunByID(ctx, old.ID)
			must(t, err)
			if was.Status != storage.RunPausedTransient || was.ClosedAt == nil || was.MovedBy != ByRecovery {
				t.Fatalf("the old run %+v: moved, though it no longer carries the mutation", was)
			}
		})
		t.Run(mv.name+" is refused with no open run, naming the mutation", func(t *testing.T) {
			t.Parallel()
			f := fixtureFor(t, mv.approval)
			must(t, f.db.Write(ctx, func(tx *storage.Tx) error {
				now := f.l.now()
				f.run.ClosedAt = &now
				Ended(f.run)
				_, err := f.l.MoveRun(ctx, tx, f.w, f.run, ByRecovery, "")
				return err
			}))
			before, err := f.db.Read().MutationByID(ctx, f.mut.ID)
			must(t, err)
			err = f.db.Write(ctx, func(tx *storage.Tx) error {
				_, err := mv.move(ctx, tx, f)
				return err
			})
			want := fmt.Sprintf("mutation %d: no open run carries it", f.mut.ID)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("err = %v, want %q", err, want)
			}
			if _, err := Carrier(ctx, f.db.Read(), f.mut); err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("Carrier: err = %v, want %q", err, want)
			}
			after, err := f.db.Read().MutationByID(ctx, f.mut.ID)
			must(t, err)
			if after.Status != before.Status {
				t.Fatalf("mutation %s → %s: a refused move wrote", before.Status, after.Status)
			}
		})
	}
}

// TestAnswerToARunNoLongerWaiting: an approval answered after the run that
// carries the call stopped waiting for it (recovery sends an approved
// call itself) is refused as answered already, and AwaitsApproval, which
// a grant releasing waiting calls asks first, says no.
func TestAnswerToARunNoLongerWaiting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, mv := range answerMoves {
		if !mv.approval {
			continue
		}
		t.Run(mv.name, func(t *testing.T) {
			t.Parallel()
			f := approvalFixture(t)
			if waits, err := AwaitsApproval(ctx, f.db.Read(), f.mut); err != nil || !waits {
				t.Fatalf("AwaitsApproval before = %v, %v; want true", waits, err)
			}
			takeOver(t, f, storage.RunActive)
			if waits, err := AwaitsApproval(ctx, f.db.Read(), f.mut); err != nil || waits {
				t.Fatalf("AwaitsApproval after = %v, %v; want false", waits, err)
			}
			err := f.db.Write(ctx, func(tx *storage.Tx) error {
				_, err := mv.move(ctx, tx, f)
				return err
			})
			want := fmt.Sprintf("mutation %d was already answered", f.mut.ID)
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), want) {
				t.Fatalf("err = %v, want refused: %q", err, want)
			}
		})
	}
}
