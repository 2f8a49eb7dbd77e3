package storage

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestUpdateRunIsACompareAndSet: a run read before another writer closed
// it or gave it a mutation cannot be written back over that, even though
// its status and phase still match; and the write names only what changed
// (an unchanged closed run keeps its closing).
func TestUpdateRunIsACompareAndSet(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, Opts{Path: filepath.Join(t.TempDir(), "keep.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.UnixMilli(1_700_000_000_000).UTC()
	var run *Run
	if err := db.Write(ctx, func(tx *Tx) error {
		wid, err := tx.CreateWorkflow(ctx, "w", now)
		if err != nil {
			return err
		}
		run = &Run{WorkflowID: wid, Handler: "c", HandlerType: "consumer", ScriptVersion: 1, Trigger: "t",
			Phase: "committed", Status: "failed:logic", CreatedAt: now, UpdatedAt: now}
		_, err = tx.InsertRun(ctx, run)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	stale, err := db.Read().RunByID(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	closed := now.Add(time.Minute)
	if err := db.Write(ctx, func(tx *Tx) error {
		run.ClosedAt, run.UpdatedAt = &closed, closed
		return tx.UpdateRun(ctx, run)
	}); err != nil {
		t.Fatal(err)
	}
	err = db.Write(ctx, func(tx *Tx) error {
		stale.Error = "written over a closed run"
		return tx.UpdateRun(ctx, stale)
	})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("writing back a run read before it was closed: %v, want ErrConflict", err)
	}
	if err := db.Write(ctx, func(tx *Tx) error {
		run.Error = "a note"
		return tx.UpdateRun(ctx, run)
	}); err != nil {
		t.Fatal(err)
	}
	got, err := db.Read().RunByID(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ClosedAt == nil || !got.ClosedAt.Equal(closed) || got.Error != "a note" {
		t.Fatalf("after a second write: closed %v error %q, want closed %v and the note", got.ClosedAt, got.Error, closed)
	}
}

// TestAllOpenRuns: every open run of every workflow but the active ones,
// oldest first, read through the index of open runs, the one index a run
// enters and leaves for being open (it is written twice per run).
func TestAllOpenRuns(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	now := time.UnixMilli(1_700_000_000_000).UTC()
	var want []int64
	if err := db.Write(ctx, func(tx *Tx) error {
		var wfs []int64
		for _, name := range []string{"a", "b"} {
			id, err := tx.CreateWorkflow(ctx, name, now)
			if err != nil {
				return err
			}
			wfs = append(wfs, id)
		}
		for i, r := range []struct {
			wf     int64
			status string
			closed bool
		}{{wfs[1], "paused:approval", false}, {wfs[0], "committed", true}, {wfs[0], "failed:logic", false}, {wfs[1], "active", false}, {wfs[0], "paused:transient", false}} {
			run := &Run{WorkflowID: r.wf, Handler: "c", HandlerType: "consumer", ScriptVersion: 1, Trigger: "t",
				Phase: "mutating", Status: RunStatus(r.status), CreatedAt: now, UpdatedAt: now}
			if r.closed {
				at := now.Add(time.Duration(i) * time.Second)
				run.ClosedAt = &at
			}
			id, err := tx.InsertRun(ctx, run)
			if err != nil {
				return err
			}
			if !r.closed && r.status != "active" {
				want = append(want, id)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	runs, err := db.Read().AllOpenRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, r := range runs {
		got = append(got, r.ID)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("open runs %v, want %v", got, want)
	}
	plan, err := queryPlan(ctx, db.r, allOpenRuns)
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(plan, "; "); !strings.Contains(s, "INDEX runs_open") {
		t.Fatalf("every open run is read without the index of open runs: %s", s)
	}
	var n int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'runs' AND sql LIKE '%closed_at IS NULL%'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d partial indexes of open runs (%v), want 1: each costs two pages per run", n, err)
	}
}

// TestRunIDsGivenAheadOfTheirRecord: a run's id may be given before its
// record commits (NewRunID); a run recorded meanwhile without one takes
// the next, not the one given, and a database opened again goes on after
// the largest id recorded.
func TestRunIDsGivenAheadOfTheirRecord(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "keep.db")
	db, err := Open(ctx, Opts{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	now := time.UnixMilli(1_700_000_000_000).UTC()
	var wf int64
	if err := db.Write(ctx, func(tx *Tx) error {
		wf, err = tx.CreateWorkflow(ctx, "w", now)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	newRun := func() *Run {
		return &Run{WorkflowID: wf, Handler: "c", HandlerType: "consumer", ScriptVersion: 1, Phase: PhasePreparing, Status: RunActive, CreatedAt: now, UpdatedAt: now}
	}
	given, other := newRun(), newRun()
	given.ID = db.NewRunID()
	for _, r := range []*Run{other, given} { // the one without an id first
		if err := db.Write(ctx, func(tx *Tx) error {
			_, err := tx.InsertRun(ctx, r)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if given.ID != 1 || other.ID != 2 {
		t.Errorf("the run given its id ahead is %d, the one recorded meanwhile %d; want 1 and 2", given.ID, other.ID)
	}
	db.Close()
	if db, err = Open(ctx, Opts{Path: path}); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := db.NewRunID(); got != 3 {
		t.Errorf("after reopening, the next run id is %d, want 3", got)
	}
}
