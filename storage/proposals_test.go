package storage

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestProposalsAreHistory: a proposal is appended, its decision is a row of
// its own, and a second decision is refused rather than written over it.
func TestProposalsAreHistory(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	now := time.UnixMilli(1_700_000_000_000).UTC()
	var id int64
	if err := db.Write(ctx, func(tx *Tx) error {
		wid, err := tx.CreateWorkflow(ctx, "w", now)
		if err != nil {
			return err
		}
		id, err = tx.AddProposal(ctx, Proposal{WorkflowID: wid, WorkflowName: "w", BaseVersion: 1, Origin: "repair",
			Reason: "a fix", FileName: "w.js", Source: "src", Diff: "-a\n+b\n", CreatedAt: now})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	open, err := db.Read().OpenProposals(ctx)
	if err != nil || len(open) != 1 || open[0].ID != id || open[0].Decision != "" || open[0].Source != "src" {
		t.Fatalf("open proposals = %+v, %v", open, err)
	}
	if err := db.Write(ctx, func(tx *Tx) error { return tx.DecideProposal(ctx, id, "rejected", "user", "", 0, now) }); err != nil {
		t.Fatal(err)
	}
	err = db.Write(ctx, func(tx *Tx) error { return tx.DecideProposal(ctx, id, "accepted", "user", "", 2, now) })
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("a second decision: %v, want ErrConflict", err)
	}
	p, err := db.Read().Proposal(ctx, id)
	if err != nil || p.Decision != "rejected" || p.DecidedBy != "user" || p.DecidedAt == nil {
		t.Fatalf("proposal = %+v, %v", p, err)
	}
	if open, _ := db.Read().OpenProposals(ctx); len(open) != 0 {
		t.Fatalf("a decided proposal is still open: %+v", open)
	}
	if all, _ := db.Read().Proposals(ctx, "w"); len(all) != 1 {
		t.Fatalf("history = %+v", all)
	}
	if _, err := db.Read().Proposal(ctx, 99); !errors.Is(err, ErrNotFound) {
		t.Fatalf("no such proposal: %v", err)
	}
}
