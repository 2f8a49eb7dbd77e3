package daemon

import (
	"context"
	"errors"
	"strings"
	"testing"

	"keep/engine"
	"keep/engine/api"
	"keep/engine/authoring"
)

// TestProposalsAcrossTheSocket: a front end attached to the daemon can
// propose, see the proposal in Attention, accept one and reject another.
func TestProposalsAcrossTheSocket(t *testing.T) {
	ctx := context.Background()
	b := setup(t)
	v, err := b.c.Propose(ctx, api.ProposalRequest{FileName: "notes.js", Source: []byte(notesWorkflow), Origin: api.OriginMCP})
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != api.ProposalOpen || v.Workflow != "notes" || !strings.HasPrefix(v.ID, "p") || v.DryRun == nil {
		t.Fatalf("proposal = %+v", v)
	}
	att, err := b.c.Attention(ctx)
	if err != nil || len(att) != 1 || att[0].Kind != api.AttentionProposal || att[0].ID != v.ID {
		t.Fatalf("attention = %+v, %v", att, err)
	}
	res, err := b.c.AcceptProposal(ctx, v.ID)
	if err != nil || res.Workflow != "notes" || res.Version != 1 {
		t.Fatalf("accept = %+v, %v", res, err)
	}
	v2, err := b.c.Propose(ctx, api.ProposalRequest{Workflow: "notes", Source: []byte(notesWorkflow + "\n"), Origin: api.OriginEdit})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.c.RejectProposal(ctx, v2.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.c.RejectProposal(ctx, v2.ID); !errors.Is(err, engine.ErrRefused) {
		t.Fatalf("a second answer across the socket: %v", err)
	}
}

// TestTryChangeAcrossTheSocket: keep edit attached to a daemon dry-runs a
// draft from the deployed workflow's state, and a renaming draft is refused.
func TestTryChangeAcrossTheSocket(t *testing.T) {
	ctx := context.Background()
	b := setup(t)
	if _, err := b.c.Deploy(ctx, "notes.js", []byte(notesWorkflow), ""); err != nil {
		t.Fatal(err)
	}
	rep, err := b.c.TryChange(ctx, "notes", "notes.js", []byte(notesWorkflow+"\n"), api.TryOptions{CaptureReads: true})
	if err != nil || rep.StartedFrom != "from a copy of the database" || len(rep.Reads) == 0 || rep.Reads[0].Performed {
		t.Fatalf("try-change = %+v, %v", rep, err)
	}
	renamed := strings.Replace(notesWorkflow, `name: "notes"`, `name: "other"`, 1)
	if _, err := b.c.TryChange(ctx, "notes", "notes.js", []byte(renamed), api.TryOptions{}); !errors.Is(err, engine.ErrRefused) {
		t.Fatalf("a renaming change: %v", err)
	}
}

// TryChange passes through the spy, as the daemon's maintained passes it
// through from the authoring it embeds.
func (s *spy) TryChange(ctx context.Context, workflow, fileName string, src []byte, opts api.TryOptions) (*api.TryReport, error) {
	return s.API.(authoring.ChangeTrier).TryChange(ctx, workflow, fileName, src, opts)
}

var _ authoring.ChangeTrier = maintained{}
