package storage

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// TestRepublishUnchanged: the same payload published again leaves the event
// as it is (a rescan of known items writes nothing), and returns its id;
// causes are still added; a new payload replaces the old one and its time.
func TestRepublishUnchanged(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	t0 := time.UnixMilli(1_700_000_000_000).UTC()
	var wf, first int64
	publish := func(payload string, at time.Time, causes ...int64) int64 {
		t.Helper()
		var id int64
		if err := db.Write(ctx, func(tx *Tx) error {
			var err error
			id, err = tx.PublishEvent(ctx, wf, "t", "m", json.RawMessage(payload), 0, causes, at)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	if err := db.Write(ctx, func(tx *Tx) error {
		var err error
		if wf, err = tx.CreateWorkflow(ctx, "w", t0); err != nil {
			return err
		}
		if err := tx.EnsureTopic(ctx, wf, "t"); err != nil {
			return err
		}
		for _, id := range []int64{1, 2} {
			in := &Input{ID: id, WorkflowID: wf, Source: "s", Type: "t", ExternalID: string(rune('a' + id)), Title: "x", CreatedAt: t0}
			if err := tx.InsertInput(ctx, in); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	first = publish(`{"n":1}`, t0, 1)
	read := func() *Event {
		t.Helper()
		e, err := db.Read().EventByID(ctx, first)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	if id := publish(`{"n":1}`, t0.Add(time.Hour), 2); id != first {
		t.Fatalf("republished id %d, want %d", id, first)
	}
	if e := read(); !e.UpdatedAt.Equal(t0) || string(e.Payload) != `{"n":1}` {
		t.Errorf("after the same payload again: updated %v payload %s, want %v and the same payload", e.UpdatedAt, e.Payload, t0)
	}
	var causes int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM event_causes WHERE event_id = ?`, first).Scan(&causes); err != nil {
		t.Fatal(err)
	}
	if causes != 2 {
		t.Errorf("%d causes, want both inputs (a republish still adds its cause)", causes)
	}
	t2 := t0.Add(2 * time.Hour)
	if id := publish(`{"n":2}`, t2); id != first {
		t.Fatalf("republished id %d, want %d", id, first)
	}
	if e := read(); !e.UpdatedAt.Equal(t2) || string(e.Payload) != `{"n":2}` {
		t.Errorf("after a new payload: updated %v payload %s, want %v and {\"n\":2}", e.UpdatedAt, e.Payload, t2)
	}
}
