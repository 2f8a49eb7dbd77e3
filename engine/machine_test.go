package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"keep/engine/api"
	"keep/engine/config"
	"keep/engine/ledger"
	"keep/storage"
)

// TestMoveIsCompareAndSet: a move written from a state the row has left
// is a conflict and changes nothing.
func TestMoveIsCompareAndSet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	s := newSink(t)
	b.deploy("push", pushWorkflow(s.URL, "a"))
	b.drain() // the mutation waits for approval
	m, err := b.db.Read().MutationByID(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	stale := *m
	if err := b.e.Approve(ctx, "1", false); err != nil {
		t.Fatal(err)
	}
	// a second writer still holding the row as it was before the approval
	w := b.workflowRow("push")
	err = b.db.Write(ctx, func(tx *storage.Tx) error { return b.e.moveMutation(ctx, tx, w, &stale, ledger.MSkip, "user") })
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("a skip from the stale awaiting_approval: %v, want a conflict", err)
	}
	if got, _ := b.db.Read().MutationByID(ctx, 1); got.Status != MutationApplied {
		t.Fatalf("mutation %s, want applied (the approval's outcome untouched)", got.Status)
	}
	run, err := b.db.Read().RunByID(ctx, m.RunID)
	if err != nil {
		t.Fatal(err)
	}
	run.Status = RunActive // committed cannot become active again
	err = b.db.Write(ctx, func(tx *storage.Tx) error { return b.e.moveRun(ctx, tx, w, run, ledger.ByScheduler) })
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("committed → active: %v, want refused by the table", err)
	}
}

// TestApprovedAndRefusalKinds: approved is a ledger status of its own; a
// refused permission is a block and attention kind of its own, while the
// run waits as paused:approval (chapter 16).
func TestApprovedAndRefusalKinds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("an approval of a paused workflow leaves the mutation approved until it is sent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		s := newSink(t)
		b.deploy("push", pushWorkflow(s.URL, "a"))
		b.drain()
		if err := b.e.Pause(ctx, "push"); err != nil {
			t.Fatal(err)
		}
		if err := b.e.Approve(ctx, "1", false); err != nil {
			t.Fatal(err)
		}
		if ms := b.mutationsBy(""); len(ms) != 1 || ms[0].Status != MutationApproved || s.Posts() != 0 {
			t.Fatalf("mutations %+v, posts %d: want approved, not yet sent", ms, s.Posts())
		}
		if att, _ := b.e.Attention(ctx); len(att) != 0 {
			t.Fatalf("attention %+v: an approved mutation no longer asks", att)
		}
		if err := b.e.Resume(ctx, "push"); err != nil {
			t.Fatal(err)
		}
		if ms := b.mutationsBy(""); len(ms) != 1 || ms[0].Status != MutationApplied || s.Posts() != 1 {
			t.Fatalf("mutations %+v, posts %d: want applied once after resume", ms, s.Posts())
		}
	})

	t.Run("a host outside allow_hosts is a permission block, not an approval prompt", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations, func(c *config.Config) { c.Connectors.HTTP.AllowHosts = []string{"api.example.com"} })
		s := newSink(t)
		b.deploy("push", pushWorkflow(s.URL, "a"))
		b.drain()
		w := b.workflow("push")
		if w.Block == nil || w.Block.Kind != BlockPermission {
			t.Fatalf("block %+v, want %s", w.Block, BlockPermission)
		}
		var paused bool
		for _, r := range b.runs("push") {
			paused = paused || r.Status == RunPausedApproval
		}
		if !paused {
			t.Fatalf("runs %+v: want one paused:approval", b.runs("push"))
		}
		att, _ := b.e.Attention(ctx)
		if len(att) != 1 || att[0].Kind != api.AttentionPermission {
			t.Fatalf("attention %+v, want one of kind permission", att)
		}
		// the card waits since the block was set, whatever else changes
		// in the workflow's row meanwhile (a pause)
		since := att[0].CreatedAt
		b.clock.Advance(time.Hour)
		if err := b.e.Pause(ctx, "push"); err != nil {
			t.Fatal(err)
		}
		if att, _ := b.e.Attention(ctx); len(att) != 1 || !att[0].CreatedAt.Equal(since) {
			t.Fatalf("after a pause an hour on, attention %+v, want the card still since %v", att, since)
		}
	})
}

// TestWorkflowStatusMoves: pause and resume go through moveWorkflow, whose
// write is compare-and-set: a resume computed from a stale read conflicts.
func TestWorkflowStatusMoves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	b.deploy("w", tickWorkflow("w", `return { reservations: [], data: {} };`))
	w, err := b.db.Read().WorkflowByName(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	stale := *w // read while active
	if err := b.e.Pause(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	if err := b.e.Pause(ctx, "w"); !errors.Is(err, ErrRefused) {
		t.Fatalf("a second pause: %v, want refused", err)
	}
	err = b.db.Write(ctx, func(tx *storage.Tx) error { return b.e.moveWorkflow(ctx, tx, &stale, ledger.WArchive) })
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("archive from a stale active: %v, want a conflict", err)
	}
	if err := b.e.Resume(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	if got := b.workflow("w"); got.Status != WorkflowActive {
		t.Fatalf("status %s after resume", got.Status)
	}
	// every (status, event): the table's answer, or refused
	want := map[WorkflowStatus]map[ledger.WorkflowEvent]WorkflowStatus{
		WorkflowActive:   {ledger.WDeploy: WorkflowActive, ledger.WRunNow: WorkflowActive, ledger.WPause: WorkflowPaused, ledger.WArchive: WorkflowArchived},
		WorkflowPaused:   {ledger.WDeploy: WorkflowPaused, ledger.WResume: WorkflowActive, ledger.WArchive: WorkflowArchived},
		WorkflowArchived: {ledger.WDeploy: WorkflowArchived, ledger.WResume: WorkflowActive},
	}
	for from, row := range want {
		for _, ev := range []ledger.WorkflowEvent{ledger.WDeploy, ledger.WRunNow, ledger.WPause, ledger.WResume, ledger.WArchive} {
			to, ok := ledger.NextWorkflow(from, ev)
			if exp, expOK := row[ev]; ok != expOK || to != exp {
				t.Errorf("workflow %s on %s: %q (%v), want %q (%v)", from, ev, to, ok, exp, expOK)
			}
		}
	}
}

// TestRunNowAndDeployAreWorkflowMoves: run-now and deploy go through
// moveWorkflow like pause and resume: run-now from a status read before a
// pause committed conflicts and queues nothing; deploy of a paused
// workflow keeps it paused; an unknown event is refused by the table.
func TestRunNowAndDeployAreWorkflowMoves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	b.deploy("w", tickWorkflow("w", `return { reservations: [], data: {} };`))
	read := func() storage.Workflow {
		w, err := b.db.Read().WorkflowByName(ctx, "w")
		if err != nil {
			t.Fatal(err)
		}
		return *w
	}
	stale := read()
	if err := b.e.Pause(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	err := b.db.Write(ctx, func(tx *storage.Tx) error { return b.e.moveWorkflow(ctx, tx, &stale, ledger.WRunNow) })
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("run-now from a stale active: %v, want a conflict", err)
	}
	cur := read()
	err = b.db.Write(ctx, func(tx *storage.Tx) error { return b.e.moveWorkflow(ctx, tx, &cur, ledger.WRunNow) })
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("run-now on a paused workflow: %v, want refused by the table", err)
	}
	if err := b.e.RunNow(ctx, "w"); !errors.Is(err, ErrRefused) {
		t.Fatalf("RunNow on a paused workflow: %v, want refused", err)
	}
	b.deploy("w", tickWorkflow("w", `return { reservations: [], data: {} };`))
	if got := read(); got.Status != WorkflowPaused || got.Version != 2 {
		t.Fatalf("after deploying a paused workflow: %s v%d, want paused v2", got.Status, got.Version)
	}
	if err := b.e.Resume(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	if err := b.e.RunNow(ctx, "w"); err != nil {
		t.Fatalf("RunNow on an active workflow: %v", err)
	}
}

// TestRunMovesRecordWho: every run move records who made it, as
// resolved_by does for a mutation: the scheduler pauses the run for
// approval, the user's approval sets it going, the scheduler commits it.
func TestRunMovesRecordWho(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	s := newSink(t)
	b.deploy("push", pushWorkflow(s.URL, "a"))
	b.drain()
	m, err := b.db.Read().MutationByID(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := func(status RunStatus, by string) {
		t.Helper()
		run, err := b.db.Read().RunByID(ctx, m.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if run.Status != status || run.MovedBy != by {
			t.Fatalf("run %s moved by %q, want %s moved by %q", run.Status, run.MovedBy, status, by)
		}
	}
	want(RunPausedApproval, ledger.ByScheduler)
	if err := b.e.Pause(ctx, "push"); err != nil { // so the approval is the last move until resume
		t.Fatal(err)
	}
	if err := b.e.Approve(ctx, "1", false); err != nil {
		t.Fatal(err)
	}
	want(RunActive, "user:approve")
	if err := b.e.Resume(ctx, "push"); err != nil {
		t.Fatal(err)
	}
	want(RunCommitted, ledger.ByScheduler)
	runs, err := b.e.Runs(ctx, "push", api.Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.MovedBy == "" {
			t.Errorf("run %s (%s) shows no mover", r.ID, r.Handler)
		}
	}
}

// TestWorkflowMoveAnnouncesAfterCommit: a workflow move announces itself
// to the front ends from inside the move, once its transaction commits: a
// move rolled back is never announced.
func TestWorkflowMoveAnnouncesAfterCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	b.deploy("w", tickWorkflow("w", `return { reservations: [], data: {} };`))
	ch, stop := b.e.Subscribe()
	defer stop()
	errRollBack := errors.New("roll back")
	err := b.db.Write(ctx, func(tx *storage.Tx) error {
		w, err := tx.WorkflowByName(ctx, "w")
		if err != nil {
			return err
		}
		if err := b.e.moveWorkflow(ctx, tx, w, ledger.WArchive); err != nil {
			return err
		}
		return errRollBack
	})
	if !errors.Is(err, errRollBack) {
		t.Fatal(err)
	}
	if err := b.e.Pause(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(10 * time.Second)
	for {
		select {
		case n := <-ch:
			if n.Kind == "workflow.archived" {
				t.Fatalf("a rolled-back archive was announced: %+v", n)
			}
			if n.Kind == api.NoteWorkflowPaused {
				if n.Workflow != "w" || n.Text != "w paused" {
					t.Fatalf("notification %+v", n)
				}
				return
			}
		case <-timeout:
			t.Fatal("no workflow.paused notification from the pause")
		}
	}
}

// TestBlockIsCompareAndSet: a block moved from a workflow read before
// another transition moved it is a conflict and changes nothing; a move
// the table refuses is refused.
func TestBlockIsCompareAndSet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	s := newSink(t)
	b.deploy("push", pushWorkflow(s.URL, "a"))
	b.drain() // blocked: the mutation waits for approval
	stale, err := b.db.Read().WorkflowByName(ctx, "push")
	if err != nil {
		t.Fatal(err)
	}
	if stale.BlockKind != BlockApproval {
		t.Fatalf("block %q, want approval", stale.BlockKind)
	}
	err = b.db.Write(ctx, func(tx *storage.Tx) error {
		w := *stale
		return b.e.setBlock(ctx, tx, &w, BlockTransient, "a back-off", w.BlockRunID, nil)
	})
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("approval → transient: %v, want refused by the table", err)
	}
	if err := b.e.Pause(ctx, "push"); err != nil { // so the approval's run stops at approved
		t.Fatal(err)
	}
	if err := b.e.Approve(ctx, "1", false); err != nil {
		t.Fatal(err)
	}
	// a second writer still holding the approval block the answer lifted
	err = b.db.Write(ctx, func(tx *storage.Tx) error {
		return b.e.setBlock(ctx, tx, stale, BlockInternal, "internal error: stale", stale.BlockRunID, nil)
	})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("internal over a stale approval block: %v, want a conflict", err)
	}
	got, err := b.db.Read().WorkflowByName(ctx, "push")
	if err != nil {
		t.Fatal(err)
	}
	if got.BlockKind != BlockNone || got.BlockReason != "" || got.BlockRunID != 0 {
		t.Fatalf("block %q %q run %d, want none (the approval's lift untouched)", got.BlockKind, got.BlockReason, got.BlockRunID)
	}
}

// workflowRow is a workflow's row as storage reads it.
func (b *bundle) workflowRow(name string) *storage.Workflow {
	b.t.Helper()
	w, err := b.db.Read().WorkflowByName(context.Background(), name)
	if err != nil {
		b.t.Fatal(err)
	}
	return w
}

// TestRunAndMutationMovesAnnounceAfterCommit: a run's and a mutation's
// move announce themselves from inside the move, once the transaction
// commits — nothing while it is open, nothing if it rolls back — in the
// words the front ends know.
func TestRunAndMutationMovesAnnounceAfterCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	errRollBack := errors.New("roll back")
	next := func(t *testing.T, ch <-chan api.Notification) api.Notification {
		t.Helper()
		select {
		case n := <-ch:
			return n
		case <-time.After(10 * time.Second):
			t.Fatal("no notification")
		}
		return api.Notification{}
	}
	none := func(t *testing.T, ch <-chan api.Notification, when string) {
		t.Helper()
		select {
		case n := <-ch:
			t.Fatalf("announced %s: %+v", when, n)
		default:
		}
	}
	// announcedOnce makes move in a transaction that rolls back, then in one
	// that commits, and returns the one notification that followed.
	announcedOnce := func(t *testing.T, b *bundle, ch <-chan api.Notification, move func(tx *storage.Tx) error) api.Notification {
		t.Helper()
		write := func(commit bool) error {
			return b.db.Write(ctx, func(tx *storage.Tx) error {
				if err := move(tx); err != nil {
					return err
				}
				none(t, ch, "inside the transaction")
				if !commit {
					return errRollBack
				}
				return nil
			})
		}
		if err := write(false); !errors.Is(err, errRollBack) {
			t.Fatal(err)
		}
		none(t, ch, "after a rollback")
		if err := write(true); err != nil {
			t.Fatal(err)
		}
		n := next(t, ch)
		none(t, ch, "twice")
		return n
	}

	t.Run("a mutation", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		s := newSink(t)
		b.deploy("push", pushWorkflow(s.URL, "a"))
		ch, stop := b.e.Subscribe()
		defer stop()
		b.drain() // the scheduler asks: the ask is the mutation's move
		var asked bool
		for !asked {
			n := next(t, ch)
			asked = n.Kind == api.NoteApproval
			if asked && (n.Workflow != "push" || !strings.HasPrefix(n.Text, "push: approve ")) {
				t.Fatalf("the ask announced as %+v", n)
			}
		}
		n := announcedOnce(t, b, ch, func(tx *storage.Tx) error {
			w, err := tx.WorkflowByName(ctx, "push")
			if err != nil {
				return err
			}
			m, err := tx.MutationByID(ctx, 1)
			if err != nil {
				return err
			}
			return b.e.moveMutation(ctx, tx, w, m, ledger.MApprove, "user")
		})
		if n.Kind != api.NoteChanged || n.Workflow != "push" || !strings.HasSuffix(n.Text, ": approved") {
			t.Fatalf("the approval announced as %+v", n)
		}
	})

	t.Run("a run", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.deploy("w", tickWorkflow("w", `return { reservations: [], data: {} };`))
		w := b.workflowRow("w")
		run := b.e.newRun(w, "p", "producer", "manual")
		if err := b.db.Write(ctx, func(tx *storage.Tx) error { return b.e.moveRun(ctx, tx, w, run, ledger.ByScheduler) }); err != nil {
			t.Fatal(err)
		}
		ch, stop := b.e.Subscribe()
		defer stop()
		n := announcedOnce(t, b, ch, func(tx *storage.Tx) error {
			r, err := tx.RunByID(ctx, run.ID)
			if err != nil {
				return err
			}
			r.Status, r.Error = RunFailedLogic, "it threw"
			return b.e.moveRun(ctx, tx, w, r, ledger.ByScheduler)
		})
		if n.Kind != api.NoteRunFailed || n.Workflow != "w" || n.Text != "p failed: it threw" {
			t.Fatalf("the failure announced as %+v", n)
		}
	})
}
