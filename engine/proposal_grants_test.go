package engine

import (
	"context"
	"slices"
	"strings"
	"testing"

	"keep/engine/api"
)

// Accepting a proposal grants nothing (README, Repair proposes, you
// decide): what a model adds is shown as "not granted (each would ask
// you)", and so it must stay once accepted, even where a deploy by the
// person would give a new capability policy.default_mutation_mode.
func TestAcceptingAProposalGrantsNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	moves := strings.Replace(notesWorkflow, `await ctx.files.append({ path: "log.csv", content: prepared.data.line });`,
		`await ctx.files.move({ from: "inbox/" + prepared.data.name, to: "gone/" + prepared.data.name });`, 1)

	for _, origin := range []string{api.OriginMCP, api.OriginEdit} {
		t.Run("a change from "+origin+" that adds a mutation", func(t *testing.T) {
			t.Parallel()
			b := setup(t, allowMutations)
			b.deploy("notes", notesWorkflow)
			v, err := b.author().Propose(ctx, api.ProposalRequest{Workflow: "notes", Source: []byte(moves), Origin: origin})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(v.Summary.Grants, "files.move") {
				t.Fatalf("the proposal's summary does not say files.move is not granted: %+v", v.Summary)
			}
			if _, err := b.e.AcceptProposal(ctx, v.ID); err != nil {
				t.Fatal(err)
			}
			grants, _ := b.e.Grants(ctx, "notes")
			for _, g := range grants {
				if g.Capability == "files.move" {
					t.Fatalf("accepting the proposal granted %+v", g)
				}
			}
		})
	}

	t.Run("a new workflow waits for you at its first mutation", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		b.write("inbox/a.txt", "alpha")
		v, err := b.author().Propose(ctx, api.ProposalRequest{FileName: "notes.js", Source: []byte(moves), Origin: api.OriginMCP})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.e.AcceptProposal(ctx, v.ID); err != nil {
			t.Fatal(err)
		}
		if grants, _ := b.e.Grants(ctx, "notes"); len(grants) != 0 {
			t.Fatalf("accepting a new workflow granted %+v", grants)
		}
		b.drain()
		if b.read("gone/a.txt") != "" || b.read("inbox/a.txt") != "alpha" {
			t.Fatal("the accepted workflow moved a file it was never granted to")
		}
		att, _ := b.e.Attention(ctx)
		if len(att) != 1 || att[0].Kind != api.AttentionApproval || att[0].Method != "move" {
			t.Fatalf("attention = %+v, want an approval for files.move", att)
		}
	})
}
