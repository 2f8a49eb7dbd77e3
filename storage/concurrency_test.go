package storage

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSeveralActiveRunsReserveDisjointly: a workflow may hold several
// active runs (a consumer's concurrency), and a pending event one of them
// reserved is never reserved by another, whoever asks first, nor offered
// by Peek again.
func TestSeveralActiveRunsReserveDisjointly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := Open(ctx, Opts{Path: filepath.Join(t.TempDir(), "keep.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.UnixMilli(1_700_000_000_000).UTC()
	const runs, events = 4, 40
	var wid int64
	var ids []int64
	var active []*Run
	if err := db.Write(ctx, func(tx *Tx) error {
		if wid, err = tx.CreateWorkflow(ctx, "w", now); err != nil {
			return err
		}
		if err := tx.EnsureTopic(ctx, wid, "t"); err != nil {
			return err
		}
		for range runs {
			r := &Run{WorkflowID: wid, Handler: "c", HandlerType: "consumer", ScriptVersion: 1, Trigger: "event",
				Phase: PhasePreparing, Status: RunActive, CreatedAt: now, UpdatedAt: now}
			if _, err := tx.InsertRun(ctx, r); err != nil {
				return fmt.Errorf("active run %d of one workflow: %w", len(active)+1, err)
			}
			active = append(active, r)
		}
		for i := range events {
			id, err := tx.PublishEvent(ctx, wid, "t", fmt.Sprint("m", i), []byte(`{}`), active[0].ID, nil, now)
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	refs, err := db.Read().ActiveRunRefs(ctx, wid)
	if err != nil || len(refs) != runs {
		t.Fatalf("ActiveRunRefs = %d runs, %v; want %d", len(refs), err, runs)
	}
	for i, r := range refs {
		if r.ID != active[i].ID || r.Handler != active[i].Handler {
			t.Fatalf("ActiveRunRefs[%d] = %+v, want run %d of %q, oldest first", i, r, active[i].ID, active[i].Handler)
		}
	}
	// the step reads them on every run: from the index alone, no run row
	// (then sorted by id: a few rows)
	plan, err := queryPlan(ctx, db.r, activeRunRefs, wid)
	if err != nil || len(plan) == 0 || !strings.Contains(plan[0], "COVERING INDEX runs_open") {
		t.Fatalf("ActiveRunRefs' plan = %q, %v; want the covering index runs_open", plan, err)
	}
	// restart recovery reads them too: from the open runs, not the history
	plan, err = queryPlan(ctx, db.r, activeRuns)
	if err != nil || len(plan) == 0 || !strings.Contains(plan[0], "INDEX runs_open") {
		t.Fatalf("ActiveRuns' plan = %q, %v; want the index runs_open", plan, err)
	}
	if all, err := db.Read().ActiveRuns(ctx); err != nil || len(all) != runs {
		t.Fatalf("ActiveRuns = %d runs, %v; want %d", len(all), err, runs)
	}
	if one, err := db.Read().ActiveRun(ctx, wid); err != nil || one.ID != active[0].ID {
		t.Fatalf("ActiveRun = %v, %v; want the oldest, run %d", one, err, active[0].ID)
	}

	// every run tries to reserve every event, one at a time, all at once
	won := make([][]int64, runs)
	var wg sync.WaitGroup
	for i, r := range active {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, id := range ids {
				err := db.Write(ctx, func(tx *Tx) error { return tx.Reserve(ctx, wid, r.ID, []int64{id}, now) })
				switch {
				case err == nil:
					won[i] = append(won[i], id)
				case !errors.Is(err, ErrNotReservable):
					t.Errorf("run %d reserving event %d: %v", r.ID, id, err)
				}
			}
		}()
	}
	wg.Wait()
	holder := map[int64]int64{}
	for i, evs := range won {
		for _, id := range evs {
			if other, dup := holder[id]; dup {
				t.Errorf("event %d reserved by both run %d and run %d", id, other, active[i].ID)
			}
			holder[id] = active[i].ID
		}
	}
	if len(holder) != events {
		t.Errorf("%d of %d events reserved", len(holder), events)
	}
	for _, r := range active {
		evs, err := db.Read().ReservedBy(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if holder[ev.ID] != r.ID {
				t.Errorf("event %d: the row says run %d, the winner was run %d", ev.ID, r.ID, holder[ev.ID])
			}
		}
	}
	if left, err := db.Read().Peek(ctx, wid, "t", 100); err != nil || len(left) != 0 {
		t.Errorf("Peek offers %d reserved events (%v)", len(left), err)
	}

	// a run that releases its events gives them back to the queue, and
	// only to it: another active run may take them then
	var released int
	if err := db.Write(ctx, func(tx *Tx) error {
		released, err = tx.Release(ctx, active[0].ID, now)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if left, err := db.Read().Peek(ctx, wid, "t", 100); err != nil || len(left) != released {
		t.Fatalf("after a release Peek offers %d, want %d (%v)", len(left), released, err)
	}
}
