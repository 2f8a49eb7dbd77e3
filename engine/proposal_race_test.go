package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"keep/engine/api"
)

// TestAcceptRacesADeploy: a deploy that lands after AcceptProposal read the
// workflow and before it accepts (forced there by the beforeAccept hook)
// is not overwritten: the accept is checked in the transaction that would
// make the new version, sees the deploy, and is refused.
func TestAcceptRacesADeploy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	byHand := notesWorkflow + "\n// deployed by hand\n"

	// the deploy lands, and its script is the one that stays
	landed := func(t *testing.T, b *bundle, id string, err error) {
		t.Helper()
		if s, err := b.e.Script(ctx, "notes"); err != nil || s.Source != byHand || s.Version != "2" {
			t.Errorf("after the accept the workflow is at version %s, the deploy's script: %t (%v); want the deploy's version 2 to stay",
				s.Version, s.Source == byHand, err)
		}
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "version 2") {
			t.Fatalf("accepting %s after a deploy landed: %v, want refused naming version 2", id, err)
		}
		hist, err := b.e.Proposals(ctx, "notes")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range hist {
			if p.ID == id && (p.Status != api.ProposalRejected || !strings.Contains(p.Why, "superseded")) {
				t.Fatalf("proposal after the deploy: %+v, want rejected as superseded, not accepted", p)
			}
		}
	}

	t.Run("a proposal's accept after a deploy landed is refused, and the deploy stays", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		b.deploy("notes", notesWorkflow)
		changed := strings.Replace(notesWorkflow, `"Note " + f.name`, `"A note " + f.name`, 1)
		v, err := b.author().Propose(ctx, api.ProposalRequest{Workflow: "notes", Source: []byte(changed), Origin: api.OriginEdit})
		if err != nil {
			t.Fatal(err)
		}
		b.e.beforeAccept = func() { b.deploy("notes", byHand) }
		_, err = b.e.AcceptProposal(ctx, v.ID)
		landed(t, b, v.ID, err)
	})

	t.Run("a repair's accept after a deploy landed is refused, and the deploy stays", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		b.e.repair, _ = commandRepairer(t, notesWorkflow)
		b.write("inbox/a.txt", "alpha")
		b.deploy("notes", brokenNotes(`throw new Error("bug");`))
		b.drain()
		id := b.proposed("notes").ID
		b.e.beforeAccept = func() { b.deploy("notes", byHand) }
		_, err := b.e.AcceptProposal(ctx, id)
		landed(t, b, id, err)
	})
}
