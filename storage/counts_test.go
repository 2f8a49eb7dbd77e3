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
		// settle applies m and returns the files connector's counts after
		settle := func(m *Mutation) map[string]int {
			t.Helper()
			m.Status = "applied"
			if err := db.Write(ctx, func(tx *Tx) error { return tx.UpdateMutation(ctx, m) }); err != nil {
				t.Fatal(err)
			}
			got, err := db.Read().MutationCounts(ctx, w.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got["files"]
		}
		if got := settle(m); got["applied"] != 5 || got["awaiting_approval"] != 0 {
			t.Fatalf("after approving: %v, want 5 applied", got)
		}

		// a call is written open and settled later: the counters are
		// written once, as it settles; open calls are counted from their
		// index
		now := time.Now()
		call := &Mutation{WorkflowID: w.ID, Connector: "files", Method: "append", Params: json.RawMessage(`{}`),
			Status: "in_flight", CreatedAt: now, UpdatedAt: now}
		counters := func() (rows, sum int) {
			t.Helper()
			if err := db.Read().q.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(n), 0) FROM mutation_counts`).Scan(&rows, &sum); err != nil {
				t.Fatal(err)
			}
			return rows, sum
		}
		rows, sum := counters()
		if err := db.Write(ctx, func(tx *Tx) error {
			run := &Run{WorkflowID: w.ID, Handler: "c", HandlerType: "consumer", ScriptVersion: 1, Phase: "mutating", Status: "active", CreatedAt: now, UpdatedAt: now}
			var err error
			if call.RunID, err = tx.InsertRun(ctx, run); err != nil {
				return err
			}
			return tx.InsertMutation(ctx, call, "k")
		}); err != nil {
			t.Fatal(err)
		}
		if r, s := counters(); r != rows || s != sum {
			t.Fatalf("a call written in flight changed the counters: %d rows summing to %d, were %d and %d", r, s, rows, sum)
		}
		got, err = db.Read().MutationCounts(ctx, w.ID)
		if err != nil || got["files"]["in_flight"] != 1 || got["files"]["applied"] != 5 {
			t.Fatalf("with a call in flight: %v (%v), want 1 in flight, 5 applied", got, err)
		}
		if got := settle(call); got["in_flight"] != 0 || got["applied"] != 6 {
			t.Fatalf("after the call settled: %v, want 6 applied, none in flight", got)
		}
	})
}
