package ledger

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"keep/connectors"
	"keep/storage"
)

// uncertainFixture is a fixture whose call left its mutation uncertain:
// the run paused for reconciliation, the workflow blocked on it.
func uncertainFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t, 1)
	must(t, f.db.Write(context.Background(), func(tx *storage.Tx) error {
		_, err := f.l.RecordOutcome(context.Background(), tx, f.w, f.run, f.mut,
			Call{Err: connectors.Errorf(connectors.Uncertain, "reset")}, Retry{Limit: 3, FirstCheck: time.Minute})
		return err
	}))
	return f
}

// TestSettle: an uncertain mutation settled by the reconciler or the user
// moves its run on, or ends it; only a failure asks for the consumers to
// be marked, and only the reconciler's finding waits a back-off.
func TestSettle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		ev       MutationEvent
		by       string
		mutation storage.MutationStatus
		run      storage.RunStatus
		closed   bool
		block    storage.BlockKind
		retryAt  bool
		mark     bool
	}{
		{"applied, found by the reconciler, resumes the run", MApplied, "reconciler", storage.MutationApplied, storage.RunActive, false, storage.BlockNone, false, false},
		{"skipped by the user resumes the run", MSkip, "user", storage.MutationSkipped, storage.RunActive, false, storage.BlockNone, false, false},
		{"not done, found by the reconciler, ends the run and waits a back-off", MFailed, "reconciler", storage.MutationFailed, storage.RunPausedTransient, true, storage.BlockTransient, true, true},
		{"not done, says the user, ends the run and lifts the block", MFailed, "user", storage.MutationFailed, storage.RunPausedTransient, true, storage.BlockNone, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := uncertainFixture(t)
			var d Decision
			must(t, f.db.Write(ctx, func(tx *storage.Tx) error {
				var err error
				d, err = f.l.Settle(ctx, tx, f.w, f.mut, tc.ev, tc.by, nil, "checked", Retry{Limit: 3, Resend: time.Hour})
				return err
			}))
			q := f.db.Read()
			m, err := q.MutationByID(ctx, f.mut.ID)
			must(t, err)
			r, err := q.RunByID(ctx, f.run.ID)
			must(t, err)
			w, err := q.WorkflowByID(ctx, f.w.ID)
			must(t, err)
			if m.Status != tc.mutation || r.Status != tc.run || (r.ClosedAt != nil) != tc.closed || w.BlockKind != tc.block ||
				(w.RetryAt != nil) != tc.retryAt || d.MarkConsumers != tc.mark {
				t.Fatalf("mutation %s, run %s closed %v, block %q retry %v, mark %v; want %s, %s %v, %q %v, %v",
					m.Status, r.Status, r.ClosedAt != nil, w.BlockKind, w.RetryAt, d.MarkConsumers,
					tc.mutation, tc.run, tc.closed, tc.block, tc.retryAt, tc.mark)
			}
			if m.ResolvedBy != tc.by || r.MovedBy != tc.by+":"+string(tc.ev) {
				t.Fatalf("resolved by %q, moved by %q", m.ResolvedBy, r.MovedBy)
			}
		})
	}
}

// TestFail: a failed run's events are released before its mutation, its
// workflow blocked by its class, and a transient failure waits a back-off
// until the workflow's failures pass the limit.
func TestFail(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		class   Class
		limit   int
		block   storage.BlockKind
		retryAt bool
		reason  string
	}{
		{"a logic failure waits for a repair", ClassLogic, 3, storage.BlockRepair, false, "c: boom"},
		{"a transient failure waits a back-off", ClassTransient, 3, storage.BlockTransient, true, "c: boom"},
		{"a transient failure past the limit waits for the user", ClassTransient, 0, storage.BlockTransient, false, "gave up after 1 attempts: c: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFixture(t, 1)
			var d Decision
			must(t, f.db.Write(ctx, func(tx *storage.Tx) error {
				f.run.Error = "boom" // the status is Fail's to set, from the class
				var err error
				d, err = f.l.Fail(ctx, tx, f.w, f.run, tc.class, Retry{Limit: tc.limit, Resend: time.Hour})
				return err
			}))
			q := f.db.Read()
			w, err := q.WorkflowByID(ctx, f.w.ID)
			must(t, err)
			ev, err := q.EventByID(ctx, f.evID)
			must(t, err)
			if w.BlockKind != tc.block || (w.RetryAt != nil) != tc.retryAt || w.BlockReason != tc.reason || ev.ReservedBy != 0 {
				t.Fatalf("block %q %q retry %v, event reserved by %d; want %q %q %v, released",
					w.BlockKind, w.BlockReason, w.RetryAt, ev.ReservedBy, tc.block, tc.reason, tc.retryAt)
			}
			var topics []string
			for _, j := range d.Journal {
				topics = append(topics, j.Topic)
			}
			if !slices.Contains(topics, "run.failed") {
				t.Fatalf("journal %v, want run.failed", topics)
			}
			run, err := q.RunByID(ctx, f.run.ID)
			must(t, err)
			if run.Status != tc.class.RunStatus() || (d.Repair != nil) != (tc.class == ClassLogic) {
				t.Fatalf("run %s, repair %v; want %s, repair %v", run.Status, d.Repair != nil, tc.class.RunStatus(), tc.class == ClassLogic)
			}
		})
	}
}

// TestUnblockRetriesForward: lifting the block of a run past its mutation
// starts its retry at emitting, which takes its events over; a move the
// table refuses leaves everything as it was.
func TestUnblockRetriesForward(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := uncertainFixture(t)
	must(t, f.db.Write(ctx, func(tx *storage.Tx) error {
		if _, err := f.l.Settle(ctx, tx, f.w, f.mut, MApplied, "reconciler", nil, "", Retry{}); err != nil {
			return err
		}
		run, err := tx.RunByID(ctx, f.run.ID) // as Settle, which found it, left it
		if err != nil {
			return err
		}
		f.run = run
		// the run fails after its mutation (in next), and waits for a repair
		f.run.Phase, f.run.Status, f.run.Error = storage.PhaseEmitting, storage.RunFailedLogic, "boom"
		_, err = f.l.Fail(ctx, tx, f.w, f.run, ClassLogic, Retry{})
		return err
	}))
	must(t, f.db.Write(ctx, func(tx *storage.Tx) error {
		d, err := f.l.Unblock(ctx, tx, f.w, "repair", false)
		if err == nil && !d.MarkConsumers {
			t.Error("an unblock does not mark the consumers")
		}
		return err
	}))
	q := f.db.Read()
	ev, err := q.EventByID(ctx, f.evID)
	must(t, err)
	retry, err := q.RunByID(ctx, ev.ReservedBy)
	must(t, err)
	if retry.RetryOf != f.run.ID || retry.Phase != storage.PhaseEmitting || retry.Status != storage.RunActive ||
		retry.MovedBy != "scheduler:repair" {
		t.Fatalf("the event's run %+v, want the retry of %d at emitting", retry, f.run.ID)
	}
	err = f.db.Write(ctx, func(tx *storage.Tx) error {
		_, err := f.l.MoveBlock(ctx, tx, f.w, storage.BlockApproval, "", retry.ID, nil)
		if err != nil {
			return err
		}
		_, err = f.l.MoveBlock(ctx, tx, f.w, storage.BlockRepair, "", retry.ID, nil)
		return err
	})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "approval") {
		t.Fatalf("approval → repair: %v, want refused", err)
	}
}

// TestPromptReminders: a prompt (an approval asked, a check given up)
// asks for its reminder; settling the mutation cancels the one it had.
func TestPromptReminders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := uncertainFixture(t)
	var d Decision
	must(t, f.db.Write(ctx, func(tx *storage.Tx) error {
		var err error
		d, err = f.l.GiveUp(ctx, tx, f.w, f.mut, "three checks could not tell")
		return err
	}))
	if d.Remind != f.mut || f.mut.Status != storage.MutationIndeterminate {
		t.Fatalf("give up: remind %v, mutation %s; want its reminder, indeterminate", d.Remind, f.mut.Status)
	}
	f.mut.ReminderID = 42 // as the engine's scheduling left it
	must(t, f.db.Write(ctx, func(tx *storage.Tx) error {
		var err error
		d, err = f.l.Settle(ctx, tx, f.w, f.mut, MApplied, "user", nil, "", Retry{})
		return err
	}))
	m, err := f.db.Read().MutationByID(ctx, f.mut.ID)
	must(t, err)
	if !slices.Equal(d.CancelReminders, []int64{42}) || m.ReminderID != 0 {
		t.Fatalf("settle: cancel %v, row's reminder %d; want 42 cancelled and cleared", d.CancelReminders, m.ReminderID)
	}

	g := newFixture(t, 1)
	g.w = &storage.Workflow{Name: "w2"} // its own workflow: one open run each
	run := &storage.Run{Handler: "c2", HandlerType: "consumer", ScriptVersion: 1, Trigger: "event",
		Phase: storage.PhasePreparing, Status: storage.RunActive, CreatedAt: g.mut.CreatedAt}
	ask := &storage.Mutation{Connector: "http", Method: "post", CreatedAt: g.mut.CreatedAt}
	must(t, g.db.Write(ctx, func(tx *storage.Tx) error {
		if _, err := g.l.MoveWorkflow(ctx, tx, g.w, WDeploy); err != nil {
			return err
		}
		run.WorkflowID, ask.WorkflowID = g.w.ID, g.w.ID
		if _, err := g.l.MoveRun(ctx, tx, g.w, run, ByScheduler, ""); err != nil {
			return err
		}
		ask.RunID = run.ID
		var err error
		d, err = g.l.Ask(ctx, tx, g.w, run, ask, "no grant")
		return err
	}))
	w, err := g.db.Read().WorkflowByID(ctx, g.w.ID)
	must(t, err)
	if d.Remind != ask || ask.Status != storage.MutationAwaitingApproval || run.Status != storage.RunPausedApproval ||
		w.BlockKind != storage.BlockApproval || w.BlockRunID != run.ID {
		t.Fatalf("ask: remind %v, mutation %s, run %s, block %q", d.Remind, ask.Status, run.Status, w.BlockKind)
	}
	ask.ReminderID = 7
	must(t, g.db.Write(ctx, func(tx *storage.Tx) error {
		var err error
		d, err = g.l.Approve(ctx, tx, g.w, ask)
		return err
	}))
	w, err = g.db.Read().WorkflowByID(ctx, g.w.ID)
	must(t, err)
	run, err = g.db.Read().RunByID(ctx, run.ID) // Approve found it
	must(t, err)
	if !slices.Equal(d.CancelReminders, []int64{7}) || ask.Status != storage.MutationApproved || run.Status != storage.RunActive || w.BlockKind != storage.BlockNone {
		t.Fatalf("approve: cancel %v, mutation %s, run %s, block %q", d.CancelReminders, ask.Status, run.Status, w.BlockKind)
	}
}

// TestRecheck: the person's "check again" and "it did not happen" keep the
// mutation open, due at once, and the workflow blocked on it.
func TestRecheck(t *testing.T) {
	t.Parallel()
	for _, resend := range []bool{false, true} {
		ctx := context.Background()
		f := uncertainFixture(t)
		var d Decision
		must(t, f.db.Write(ctx, func(tx *storage.Tx) error {
			if _, err := f.l.GiveUp(ctx, tx, f.w, f.mut, "could not tell"); err != nil {
				return err
			}
			f.mut.ReminderID, f.mut.ReconcileAttempts = 9, 3
			var err error
			d, err = f.l.Recheck(ctx, tx, f.w, f.mut, resend)
			return err
		}))
		m, err := f.db.Read().MutationByID(ctx, f.mut.ID)
		must(t, err)
		w, err := f.db.Read().WorkflowByID(ctx, f.w.ID)
		must(t, err)
		want, words := storage.MutationNeedsReconcile, "checking again"
		if resend {
			want, words = storage.MutationInFlight, "sending"
		}
		if m.Status != want || m.NextAttemptAt == nil || m.ReconcileAttempts != 0 || !slices.Equal(d.CancelReminders, []int64{9}) ||
			w.BlockKind != storage.BlockReconciliation || !strings.HasPrefix(w.BlockReason, words) {
			t.Fatalf("resend %v: mutation %s next %v checks %d, cancel %v, block %q %q", resend, m.Status, m.NextAttemptAt,
				m.ReconcileAttempts, d.CancelReminders, w.BlockKind, w.BlockReason)
		}
	}
}
