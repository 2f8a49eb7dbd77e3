package storage

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCausesOfRun: the inputs behind the events a run reserved, each once,
// in order, read without a temporary table (it is read once per consumer
// run).
func TestCausesOfRun(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	now := time.UnixMilli(1_700_000_000_000).UTC()
	var runID int64
	if err := db.Write(ctx, func(tx *Tx) error {
		wf, err := tx.CreateWorkflow(ctx, "w", now)
		if err != nil {
			return err
		}
		if err := tx.EnsureTopic(ctx, wf, "t"); err != nil {
			return err
		}
		for _, id := range []int64{7, 3, 5} {
			in := &Input{ID: id, WorkflowID: wf, Source: "s", Type: "t", ExternalID: string(rune('a' + id)), Title: "x", CreatedAt: now}
			if err := tx.InsertInput(ctx, in); err != nil {
				return err
			}
		}
		run := &Run{WorkflowID: wf, Handler: "c", HandlerType: "consumer", ScriptVersion: 1, Phase: "preparing", Status: "active", CreatedAt: now, UpdatedAt: now}
		if runID, err = tx.InsertRun(ctx, run); err != nil {
			return err
		}
		var events []int64
		for i, causes := range [][]int64{{7, 3}, {3, 5}, {7}} {
			id, err := tx.PublishEvent(ctx, wf, "t", string(rune('m'+i)), json.RawMessage(`{}`), 0, causes, now)
			if err != nil {
				return err
			}
			events = append(events, id)
		}
		return tx.Reserve(ctx, wf, runID, events, now)
	}); err != nil {
		t.Fatal(err)
	}
	got, err := db.Read().CausesOfRun(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{3, 5, 7}; !slices.Equal(got, want) {
		t.Fatalf("causes of the run: %v, want %v", got, want)
	}
	plan, err := queryPlan(ctx, db.r, causesOfRun, runID)
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(plan, "; "); strings.Contains(s, "TEMP B-TREE") {
		t.Fatalf("the causes of a run are read with a temporary table: %s", s)
	}
}
