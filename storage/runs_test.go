package storage

import (
	"context"
	"errors"
	"path/filepath"
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
