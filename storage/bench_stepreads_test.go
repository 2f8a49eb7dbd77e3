package storage

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkItemReads is what one item of the files→http job reads (the
// engine's TestStatementsPerItem): the step's workflow, schedules, active
// runs, the consumer's state and peek (sandbox.PrefetchDepth, 1); the
// call's status and grants; the producer's look-up of the item's input.
// "separate" reads them one statement each, as the engine did; "merged"
// as it does now (StepReads, StateAndPeek, CallReads, InputIDByKey).
func BenchmarkItemReads(b *testing.B) {
	db, wf, _ := benchDB(b)
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000).UTC()
	if err := db.Write(ctx, func(tx *Tx) error {
		for _, h := range []string{"feed", "push"} {
			if err := tx.EnsureSchedule(ctx, wf, h, map[string]string{"feed": "producer", "push": "consumer"}[h]); err != nil {
				return err
			}
		}
		if err := tx.SetHandlerState(ctx, wf, "push", []byte(`{"n":1}`), now); err != nil {
			return err
		}
		if err := tx.PutGrant(ctx, Grant{WorkflowID: wf, Capability: "http.request", Mode: "allow"}, now); err != nil {
			return err
		}
		for i := range 200 {
			if _, err := tx.PublishEvent(ctx, wf, "t", fmt.Sprint("m", i), []byte(`{"id":"x"}`), 0, nil, now); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	separate := func(q Q) error {
		if _, err := q.WorkflowByID(ctx, wf); err != nil {
			return err
		}
		if _, err := q.ActiveRunRefs(ctx, wf); err != nil {
			return err
		}
		if _, err := q.Schedules(ctx, wf); err != nil {
			return err
		}
		if _, err := q.HandlerState(ctx, wf, "push"); err != nil {
			return err
		}
		if _, err := q.Peek(ctx, wf, "t", 1); err != nil {
			return err
		}
		if _, err := q.WorkflowByID(ctx, wf); err != nil {
			return err
		}
		if _, err := q.Grants(ctx, wf); err != nil {
			return err
		}
		// the input's whole row by its key, as registerInput read it
		_, err := scanInput(q.q.QueryRowContext(ctx, `SELECT `+inputCols+` FROM inputs
			WHERE workflow_id = ? AND source = ? AND type = ? AND external_id = ?`, wf, "bench", "item", "1"))
		return err
	}
	merged := func(q Q) error {
		if _, err := q.StepReads(ctx, wf); err != nil {
			return err
		}
		if _, _, err := q.StateAndPeek(ctx, wf, "push", "t", 1, 0, nil); err != nil {
			return err
		}
		if _, err := q.CallReads(ctx, wf); err != nil {
			return err
		}
		_, err := q.InputIDByKey(ctx, wf, "bench", "item", "1")
		return err
	}
	for _, c := range []struct {
		name  string
		reads func(Q) error
	}{{"separate", separate}, {"merged", merged}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := db.ReadLatest(ctx, c.reads); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
