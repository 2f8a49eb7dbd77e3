package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"keep/connectors"
	"keep/storage"
)

// outcome is a row as the test writes it out, independently of outcomeRules.
type outcome struct {
	mutation storage.MutationStatus
	run      storage.RunStatus
	block    storage.BlockKind // "" none
	released bool              // the run's events went back to the queue
	nextAt   bool              // the mutation is looked at again by itself
	journal  []string
	repair   bool
}

// wantOutcomes is DESIGN.md §6's outcome map, by class and spent retries.
func wantOutcomes() map[CallOutcome]outcome {
	applied := outcome{mutation: storage.MutationApplied, run: storage.RunActive}
	uncertain := outcome{mutation: storage.MutationNeedsReconcile, run: storage.RunPausedReconciliation,
		block: storage.BlockReconciliation, nextAt: true, journal: []string{"mutation.needs_reconcile"}}
	refused := func(run storage.RunStatus, block storage.BlockKind, repair bool) outcome {
		return outcome{mutation: storage.MutationFailed, run: run, block: block, released: true,
			journal: []string{"workflow.needs_attention", "run.failed"}, repair: repair}
	}
	want := map[CallOutcome]outcome{
		{connectors.Transient, false}: {mutation: storage.MutationInFlight, run: storage.RunPausedTransient,
			block: storage.BlockTransient, nextAt: true},
		{connectors.Transient, true}: {mutation: storage.MutationFailed, run: storage.RunPausedTransient,
			block: storage.BlockTransient, released: true, journal: []string{"workflow.needs_attention"}},
	}
	for _, spent := range []bool{false, true} {
		want[CallOutcome{"", spent}] = applied
		want[CallOutcome{connectors.Uncertain, spent}] = uncertain
		want[CallOutcome{connectors.Internal, spent}] = uncertain
		want[CallOutcome{connectors.Logic, spent}] = refused(storage.RunFailedLogic, storage.BlockRepair, true)
		want[CallOutcome{connectors.Auth, spent}] = refused(storage.RunPausedApproval, storage.BlockAuth, false)
		want[CallOutcome{connectors.Permission, spent}] = refused(storage.RunPausedApproval, storage.BlockPermission, false)
	}
	return want
}

var outcomeClasses = []connectors.Class{"", connectors.Transient, connectors.Logic, connectors.Auth, connectors.Permission,
	connectors.Uncertain, connectors.Internal, "unheard-of"}

// TestOutcomeMap: every (class, spent) pair is its row, or refused; each
// row's moves are ones the machines' tables allow from where a call's
// outcome finds them (in flight, an active run mutating, no block).
func TestOutcomeMap(t *testing.T) {
	t.Parallel()
	want := wantOutcomes()
	for _, cls := range outcomeClasses {
		for _, spent := range []bool{false, true} {
			key := CallOutcome{cls, spent}
			t.Run(fmt.Sprintf("%s/spent=%v", orNew(string(cls)), spent), func(t *testing.T) {
				rule, err := Outcome(key)
				exp, ok := want[key]
				if !ok {
					if !errors.Is(err, ErrRefused) {
						t.Fatalf("got %+v, %v; want a refusal", rule, err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				to, err := NextMutation(storage.MutationInFlight, rule.Event)
				if err != nil || to != exp.mutation {
					t.Errorf("mutation → %q (%v), want %q", to, err, exp.mutation)
				}
				phase := storage.PhaseMutating
				if rule.Phase != "" {
					phase = rule.Phase
				}
				if err := CheckRunMove(storage.RunActive, storage.PhaseMutating, rule.Run, phase); err != nil || rule.Run != exp.run {
					t.Errorf("run → %s (%v), want %s", rule.Run, err, exp.run)
				}
				if rule.Block != exp.block || CheckBlockMove(storage.BlockNone, rule.Block) != nil && rule.Block != "" {
					t.Errorf("block %q, want %q", rule.Block, exp.block)
				}
				if rule.Release != exp.released || rule.Repair != exp.repair || (rule.Wait != WaitNone) != exp.nextAt {
					t.Errorf("release %v repair %v wait %v; want %v %v %v", rule.Release, rule.Repair, rule.Wait,
						exp.released, exp.repair, exp.nextAt)
				}
			})
		}
	}
	if len(outcomeRules) != len(want) {
		t.Fatalf("the map has %d rows, the test knows %d", len(outcomeRules), len(want))
	}
}

// TestRecordOutcome: each row recorded in a real database moves the
// mutation, the run, the block and the run's events as the map says,
// journals what it says and asks for a repair only on a logic refusal.
func TestRecordOutcome(t *testing.T) {
	t.Parallel()
	for key, exp := range wantOutcomes() {
		t.Run(fmt.Sprintf("%s/spent=%v", orNew(string(key.Class)), key.Spent), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			attempts := 1
			if key.Spent {
				attempts = 4
			}
			f := newFixture(t, attempts)
			db, l, w, run, mut, evID := f.db, f.l, f.w, f.run, f.mut, f.evID
			call := Call{Result: json.RawMessage(`{"ok":true}`)}
			if key.Class != "" {
				call.Err = connectors.Errorf(key.Class, "the call said no")
			}
			var d Decision
			must(t, db.Write(ctx, func(tx *storage.Tx) error {
				var err error
				d, err = l.RecordOutcome(ctx, tx, w, run, mut, call, Retry{Limit: 3, FirstCheck: time.Minute, Resend: time.Hour})
				return err
			}))
			q := db.Read()
			gotMut, err := q.MutationByID(ctx, mut.ID)
			must(t, err)
			gotRun, err := q.RunByID(ctx, run.ID)
			must(t, err)
			gotW, err := q.WorkflowByID(ctx, w.ID)
			must(t, err)
			ev, err := q.EventByID(ctx, evID)
			must(t, err)
			if gotMut.Status != exp.mutation || gotRun.Status != exp.run || gotW.BlockKind != exp.block {
				t.Errorf("mutation %s, run %s, block %q; want %s, %s, %q", gotMut.Status, gotRun.Status, gotW.BlockKind,
					exp.mutation, exp.run, exp.block)
			}
			if released := ev.ReservedBy == 0; released != exp.released {
				t.Errorf("event reserved by %d: released %v, want %v", ev.ReservedBy, released, exp.released)
			}
			if (gotMut.NextAttemptAt != nil) != exp.nextAt {
				t.Errorf("next attempt %v, want one: %v", gotMut.NextAttemptAt, exp.nextAt)
			}
			var topics []string
			for _, j := range d.Journal {
				topics = append(topics, j.Topic)
			}
			if !slices.Equal(topics, exp.journal) || (d.Repair != nil) != exp.repair || (d.Repair != nil && d.Repair.ID != run.ID) {
				t.Errorf("journal %v, repair %v; want %v, %v", topics, d.Repair != nil, exp.journal, exp.repair)
			}
			if exp.mutation == storage.MutationApplied && (string(gotRun.MutationResult) != `{"status":"applied","result":{"ok":true}}` ||
				gotRun.Phase != storage.PhaseMutated) {
				t.Errorf("run %s with %s, want mutated with the call's result", gotRun.Phase, gotRun.MutationResult)
			}
		})
	}
}

// fixture is a workflow with a consumer run, active in mutating, holding
// one event and carrying a mutation in flight: where a call's outcome, a
// settlement or a failure finds them.
type fixture struct {
	db   *storage.DB
	l    *Ledger
	w    *storage.Workflow
	run  *storage.Run
	mut  *storage.Mutation
	evID int64
}

func newFixture(t *testing.T, attempts int) *fixture {
	t.Helper()
	ctx := context.Background()
	db, err := storage.Open(ctx, storage.Opts{Path: filepath.Join(t.TempDir(), "keep.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f := &fixture{db: db, l: New(Opts{Now: func() time.Time { return now }, KeyPrefix: "keep-test"}),
		w: &storage.Workflow{Name: "w"},
		run: &storage.Run{Handler: "c", HandlerType: "consumer", ScriptVersion: 1, Trigger: "event",
			Phase: storage.PhaseMutating, Status: storage.RunActive, CreatedAt: now},
		mut: &storage.Mutation{Connector: "http", Method: "post", Params: json.RawMessage(`{}`), CreatedAt: now}}
	l, w, run, mut := f.l, f.w, f.run, f.mut
	must(t, db.Write(ctx, func(tx *storage.Tx) error {
		if _, err := l.MoveWorkflow(ctx, tx, w, WDeploy); err != nil {
			return err
		}
		run.WorkflowID, mut.WorkflowID = w.ID, w.ID
		if _, err := l.MoveRun(ctx, tx, w, run, ByScheduler, ""); err != nil {
			return err
		}
		if err := tx.EnsureTopic(ctx, w.ID, "t"); err != nil {
			return err
		}
		if f.evID, err = tx.PublishEvent(ctx, w.ID, "t", "m1", json.RawMessage(`{}`), 0, nil, now); err != nil {
			return err
		}
		if err := tx.Reserve(ctx, w.ID, run.ID, []int64{f.evID}, now); err != nil {
			return err
		}
		mut.RunID, mut.Attempts = run.ID, attempts
		if _, err := l.MoveMutation(ctx, tx, w, mut, MSend, ""); err != nil {
			return err
		}
		run.MutationID = mut.ID
		_, err := l.MoveRun(ctx, tx, w, run, ByScheduler, "")
		return err
	}))
	return f
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestAnActiveRunIsNeverClosed: the active runs are read from the index of
// open runs, so the ledger refuses a move that would close an active run.
func TestAnActiveRunIsNeverClosed(t *testing.T) {
	f := newFixture(t, 1)
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	err := f.db.Write(ctx, func(tx *storage.Tx) error {
		f.run.ClosedAt = &now
		_, err := f.l.MoveRun(ctx, tx, f.w, f.run, ByScheduler, "")
		return err
	})
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("closing an active run: %v, want it refused", err)
	}
	refs, err := f.db.Read().ActiveRunRefs(ctx, f.w.ID)
	if err != nil || len(refs) != 1 || refs[0].ID != f.run.ID {
		t.Fatalf("active runs after the refusal: %v, %v; want run %d", refs, err, f.run.ID)
	}
}

// TestRecordOutcomeUnwritten: an applied call's outcome followed by the
// run's commit, in one transaction, writes the run's row once — both
// moves checked — and a failed call's outcome, announced, is written at
// once as RecordOutcome writes it.
func TestRecordOutcomeUnwritten(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("applied, then committed: one update of the run", func(t *testing.T) {
		f := newFixture(t, 1)
		db, l, w, run, mut := f.db, f.l, f.w, f.run, f.mut
		var mu sync.Mutex
		updates := 0
		must(t, db.Write(ctx, func(tx *storage.Tx) error {
			stop := db.CountStatements(func(q string) {
				if strings.HasPrefix(q, "UPDATE runs ") {
					mu.Lock()
					updates++
					mu.Unlock()
				}
			})
			defer stop()
			if _, err := l.RecordOutcomeUnwritten(ctx, tx, w, run, mut, Call{Result: json.RawMessage(`{"ok":true}`)}, Retry{Limit: 3}); err != nil {
				return err
			}
			if run.Phase != storage.PhaseMutated || run.Status != storage.RunActive {
				t.Errorf("after the outcome the run is %s in %s, want active in mutated", run.Status, run.Phase)
			}
			now := time.Now()
			run.Phase, run.Status, run.ClosedAt = storage.PhaseCommitted, storage.RunCommitted, &now
			_, err := l.MoveRun(ctx, tx, w, run, ByScheduler, "")
			return err
		}))
		if updates != 1 {
			t.Errorf("%d updates of the run, want 1", updates)
		}
		got, err := db.Read().RunByID(ctx, run.ID)
		must(t, err)
		if got.Status != storage.RunCommitted || got.Phase != storage.PhaseCommitted || string(got.MutationResult) == "" {
			t.Errorf("run after the commit: %s in %s, result %s", got.Status, got.Phase, got.MutationResult)
		}
		if m, err := db.Read().MutationByID(ctx, mut.ID); err != nil || m.Status != storage.MutationApplied {
			t.Errorf("mutation after the commit: %+v (%v)", m, err)
		}
	})
	t.Run("the move in memory is checked with the next", func(t *testing.T) {
		f := newFixture(t, 1)
		db, l, w, run, mut := f.db, f.l, f.w, f.run, f.mut
		err := db.Write(ctx, func(tx *storage.Tx) error {
			if _, err := l.RecordOutcomeUnwritten(ctx, tx, w, run, mut, Call{Result: json.RawMessage(`{}`)}, Retry{Limit: 3}); err != nil {
				return err
			}
			run.Phase = storage.PhasePreparing // phases only move forward
			_, err := l.MoveRun(ctx, tx, w, run, ByScheduler, "")
			return err
		})
		if !errors.Is(err, ErrRefused) {
			t.Fatalf("a run moved from mutated back to preparing: %v", err)
		}
	})
	t.Run("a refused call: written at once", func(t *testing.T) {
		f := newFixture(t, 1)
		db, l, w, run, mut := f.db, f.l, f.w, f.run, f.mut
		must(t, db.Write(ctx, func(tx *storage.Tx) error {
			_, err := l.RecordOutcomeUnwritten(ctx, tx, w, run, mut, Call{Err: connectors.Errorf(connectors.Logic, "no")}, Retry{Limit: 3})
			return err
		}))
		got, err := db.Read().RunByID(ctx, run.ID)
		must(t, err)
		if got.Status != run.Status || got.Status == storage.RunActive || run.Via != (storage.RunState{}) {
			t.Errorf("run row %s, in memory %s (via %v): want the refusal written", got.Status, run.Status, run.Via)
		}
	})
}
