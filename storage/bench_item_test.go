package storage

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"
)

// BenchmarkPeekPastRunsInHand is a concurrent consumer's step peek with
// seven runs in hand: six of their events reserved already, one chosen
// and not yet reserved, and the one event the peek is for. Before
// PeekSkipping the peek read limit plus the runs' events and dropped
// theirs (peek-and-drop); now it stops at the one it wants (skipping).
func BenchmarkPeekPastRunsInHand(b *testing.B) {
	db, wf, _ := benchDB(b)
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000).UTC()
	skip := map[int64]bool{}
	if err := db.Write(ctx, func(tx *Tx) error {
		var ids []int64
		for j := range 2000 {
			id, err := tx.PublishEvent(ctx, wf, "t", "f-"+strconv.Itoa(j), json.RawMessage(`{"id":"f-`+strconv.Itoa(j)+`"}`), 0, nil, now)
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		for _, id := range ids[:7] {
			skip[id] = true
		}
		for _, id := range ids[:6] {
			r := &Run{WorkflowID: wf, Handler: "c", HandlerType: "consumer", ScriptVersion: 1, Trigger: "event",
				Phase: "mutating", Status: RunActive, CreatedAt: now, UpdatedAt: now}
			if _, err := tx.InsertRun(ctx, r); err != nil {
				return err
			}
			if err := tx.Reserve(ctx, wf, r.ID, []int64{id}, now); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	b.Run("peek-and-drop", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			evs, err := db.Read().Peek(ctx, wf, "t", 1+len(skip))
			if err != nil {
				b.Fatal(err)
			}
			var out []*Event
			for _, ev := range evs {
				if !skip[ev.ID] && len(out) < 1 {
					out = append(out, ev)
				}
			}
			if len(out) != 1 {
				b.Fatal(len(out))
			}
		}
	})
	b.Run("skipping", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			evs, err := db.Read().PeekSkipping(ctx, wf, "t", 1, len(skip), func(id int64) bool { return skip[id] })
			if err != nil || len(evs) != 1 {
				b.Fatal(len(evs), err)
			}
		}
	})
}
