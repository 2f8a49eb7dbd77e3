package storage

import (
	"context"
	"fmt"
	"strings"
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

// TestPerformedSince: a daily limit's count reads the day's calls of one
// capability by mutations_by_capability, not the workflow's history, and
// counts the performed ones only.
func TestPerformedSince(t *testing.T) {
	ctx := context.Background()
	db := openWithWorkflow(t)
	const wid = 1
	day := time.UnixMilli(1_700_000_000_000).UTC()
	if err := db.Write(ctx, func(tx *Tx) error {
		for i, c := range []struct {
			method string
			status MutationStatus
			at     time.Time
		}{
			{"append", "applied", day.Add(-25 * time.Hour)}, // the day before
			{"append", "applied", day.Add(-time.Hour)},
			{"append", "in_flight", day.Add(-time.Minute)},
			{"append", "awaiting_approval", day}, // not performed
			{"write", "applied", day},            // another capability
		} {
			run := &Run{WorkflowID: wid, Handler: "c", HandlerType: "consumer", ScriptVersion: 1, Trigger: "t",
				Phase: "committed", Status: "committed", CreatedAt: c.at, UpdatedAt: c.at}
			if _, err := tx.InsertRun(ctx, run); err != nil {
				return err
			}
			m := &Mutation{RunID: run.ID, WorkflowID: wid, Connector: "files", Method: c.method,
				Params: []byte(fmt.Sprintf(`{"n":%d}`, i)), Status: c.status, CreatedAt: c.at, UpdatedAt: c.at}
			if err := tx.InsertMutation(ctx, m, "k"); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	since := day.Add(-24 * time.Hour)
	n, err := db.Read().CountMutationsSince(ctx, wid, "files", "append", since)
	if err != nil || n != 2 {
		t.Errorf("count = %d, %v; want the 2 performed in the last day", n, err)
	}
	ps, err := db.Read().MutationParamsSince(ctx, wid, "files", "append", since)
	if err != nil || len(ps) != 2 || string(ps[0]) != `{"n":1}` || string(ps[1]) != `{"n":2}` {
		t.Errorf("params = %s, %v; want those of the 2 counted", ps, err)
	}
	for _, query := range []string{countMutationsSince, mutationParamsSince} {
		plan, err := queryPlan(ctx, db.r, query, wid, "files", "append", ms(since))
		if err != nil {
			t.Fatal(err)
		}
		if len(plan) != 1 || !strings.Contains(plan[0], "INDEX mutations_by_capability") || !strings.Contains(plan[0], "created_at>?") {
			t.Errorf("plan of %q = %q, want a range of mutations_by_capability", query, plan)
		}
	}
}
