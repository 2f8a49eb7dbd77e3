package storage

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestInsertMutationWritesTheKeyOfItsID: a mutation's idempotency key,
// named after its id, is in the row as inserted, for every mutation.
func TestInsertMutationWritesTheKeyOfItsID(t *testing.T) {
	ctx := context.Background()
	db := openWithWorkflow(t)
	now := time.UnixMilli(1_700_000_000_000).UTC()
	const wid = 1
	var muts []*Mutation
	if err := db.Write(ctx, func(tx *Tx) error {
		for range 3 {
			run := &Run{WorkflowID: wid, Handler: "c", HandlerType: "consumer", ScriptVersion: 1, Trigger: "t",
				Phase: "mutating", Status: "active", CreatedAt: now, UpdatedAt: now}
			if _, err := tx.InsertRun(ctx, run); err != nil {
				return err
			}
			m := &Mutation{RunID: run.ID, WorkflowID: wid, Connector: "files", Method: "append", Params: []byte(`{}`),
				Status: "in_flight", CreatedAt: now, UpdatedAt: now}
			if err := tx.InsertMutation(ctx, m, "keep-abc"); err != nil {
				return err
			}
			muts = append(muts, m)
			run.Status, run.Phase = "committed", "committed"
			if err := tx.UpdateRun(ctx, run); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i, m := range muts {
		got, err := db.Read().MutationByID(ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("keep-abc-%d", m.ID)
		if m.ID != int64(i+1) || m.IdempotencyKey != want || got.IdempotencyKey != want {
			t.Errorf("mutation %d: id %d, key %q, stored %q; want key %q", i, m.ID, m.IdempotencyKey, got.IdempotencyKey, want)
		}
	}
}
