package storage

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// statusOf is the engine's inputStatus precedence, computed the slow way
// from one input's facts: what InputCounts must agree with.
func statusOf(in *Input, f *InputFacts) string {
	switch {
	case in.SkippedAt != nil:
		return "skipped"
	case f.Waiting > 0:
		return "needs_attention"
	}
	for _, m := range f.Outputs {
		switch m.Status {
		case "awaiting_approval", "needs_reconcile", "indeterminate":
			return "needs_attention"
		}
	}
	if f.Open > 0 || f.Events == 0 {
		return "pending"
	}
	return "done"
}

func TestInputCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("counts kept by triggers agree with each input's own status", func(t *testing.T) {
		t.Parallel()
		db := openFixture(t)
		w, err := db.Read().WorkflowByName(ctx, "notes-to-csv")
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		// one input no event names yet, one pending, one skipped, and one
		// registered twice (counted once)
		if err := db.Write(ctx, func(tx *Tx) error {
			for i, ext := range []string{"bare", "pending", "skipped", "pending"} {
				in := &Input{ID: int64(100 + i), WorkflowID: w.ID, Source: "files", Type: "file", ExternalID: ext, Title: ext, CreatedAt: now}
				if err := tx.InsertInput(ctx, in); err != nil {
					return err
				}
			}
			if _, err := tx.PublishEvent(ctx, w.ID, "note.found", "p", json.RawMessage(`{}`), 0, []int64{101}, now); err != nil {
				return err
			}
			if _, err := tx.PublishEvent(ctx, w.ID, "note.found", "s", json.RawMessage(`{}`), 0, []int64{102}, now); err != nil {
				return err
			}
			return tx.MarkInputSkipped(ctx, 102, now)
		}); err != nil {
			t.Fatal(err)
		}
		got, err := db.Read().InputCounts(ctx, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		ins, facts := inputFacts(t, db, "notes-to-csv")
		want := InputCounts{Total: len(ins)}
		for _, in := range ins {
			switch statusOf(in, facts[in.ID]) {
			case "skipped":
				want.Skipped++
			case "needs_attention":
				want.NeedsAttention++
			case "pending":
				want.Pending++
			case "done":
				want.Done++
			}
		}
		if got != want || want != (InputCounts{Total: 8, Skipped: 1, NeedsAttention: 1, Pending: 2, Done: 4}) {
			t.Fatalf("InputCounts = %+v, each input's status says %+v", got, want)
		}
	})

	t.Run("mutation counts follow status changes", func(t *testing.T) {
		t.Parallel()
		db := openFixture(t)
		w, _ := db.Read().WorkflowByName(ctx, "notes-to-csv")
		got, err := db.Read().MutationCounts(ctx, w.ID)
		if err != nil || got["files"]["applied"] != 4 || got["files"]["awaiting_approval"] != 1 {
			t.Fatalf("before: %v (%v), want 4 applied, 1 awaiting approval", got, err)
		}
		m, err := db.Read().MutationByID(ctx, 5)
		if err != nil {
			t.Fatal(err)
		}
		m.Status = "applied"
		if err := db.Write(ctx, func(tx *Tx) error { return tx.UpdateMutation(ctx, m) }); err != nil {
			t.Fatal(err)
		}
		got, err = db.Read().MutationCounts(ctx, w.ID)
		if err != nil || got["files"]["applied"] != 5 || got["files"]["awaiting_approval"] != 0 {
			t.Fatalf("after approving: %v (%v), want 5 applied", got, err)
		}
	})
}
