package engine

import (
	"context"
	"keep/storage"
	"testing"
)

// crashMidCall rewinds the ledger of the newest mutation to the moment of
// the call — run active in mutating, row in_flight — which is exactly what
// a SIGKILL during the request leaves on disk (the real-process kill test
// lives with the daemon).
func crashMidCall(t *testing.T, b *bundle) {
	t.Helper()
	ctx := context.Background()
	ms := b.mutationsBy("")
	m, err := b.db.Read().MutationByID(ctx, mustID(t, ms[len(ms)-1].ID))
	if err != nil {
		t.Fatal(err)
	}
	run, err := b.db.Read().RunByID(ctx, m.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.db.Write(ctx, func(tx *storage.Tx) error {
		m.Status, m.NextAttemptAt = "in_flight", nil
		if err := tx.UpdateMutation(ctx, m); err != nil {
			return err
		}
		run.Phase, run.Status, run.ClosedAt = "mutating", "active", nil
		if err := tx.UpdateRun(ctx, run); err != nil {
			return err
		}
		w, err := tx.WorkflowByID(ctx, run.WorkflowID)
		if err != nil {
			return err
		}
		return tx.SetBlock(ctx, w.ID, w.BlockKind, w.BlockRunID, storage.Block{}, b.clock.Now())
	}); err != nil {
		t.Fatal(err)
	}
}

func mustID(t *testing.T, s string) int64 {
	id, err := parseID("test", s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
