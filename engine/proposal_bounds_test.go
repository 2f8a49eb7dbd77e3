package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"keep/engine/api"
	"keep/engine/config"
)

// variant is notesWorkflow with a different title: a proposal of its own.
func variant(i int) []byte {
	return []byte(strings.Replace(notesWorkflow, `"Note " + f.name`, `"Note `+strings.Repeat("i", i+1)+` " + f.name`, 1))
}

// The red team filed 1,000 proposals in four minutes, and ten of 1 MB grew
// keep.db by 20 MB. A workflow has at most policy.max_open_proposals
// waiting, each at most policy.max_proposal_bytes, and a proposal made
// against a version that is gone is closed.
func TestProposalsAreBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("past the cap a proposal is refused, and nothing is stored", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		b.deploy("notes", notesWorkflow)
		for i := range 3 {
			if _, err := b.author().Propose(ctx, api.ProposalRequest{Workflow: "notes", Source: variant(i), Origin: api.OriginMCP}); err != nil {
				t.Fatalf("proposal %d: %v", i+1, err)
			}
		}
		_, err := b.author().Propose(ctx, api.ProposalRequest{Workflow: "notes", Source: variant(9), Origin: api.OriginMCP})
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "policy.max_open_proposals") {
			t.Fatalf("the 4th proposal: %v", err)
		}
		if hist, _ := b.e.Proposals(ctx, "notes"); len(hist) != 3 {
			t.Fatalf("%d proposals stored, want 3", len(hist))
		}
		// a decision makes room
		hist, _ := b.e.Proposals(ctx, "notes")
		if err := b.e.RejectProposal(ctx, hist[0].ID); err != nil {
			t.Fatal(err)
		}
		if _, err := b.author().Propose(ctx, api.ProposalRequest{Workflow: "notes", Source: variant(9), Origin: api.OriginMCP}); err != nil {
			t.Fatalf("after a reject: %v", err)
		}
	})

	t.Run("a proposal over the byte cap is refused, its diff and dry run counted", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations, func(c *config.Config) { c.Policy.MaxProposalBytes = 40 << 10 })
		b.deploy("notes", notesWorkflow)
		big := append(variant(0), []byte("\n// "+strings.Repeat("x", 50<<10)+"\n")...)
		_, err := b.author().Propose(ctx, api.ProposalRequest{Workflow: "notes", Source: big, Origin: api.OriginMCP})
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "policy.max_proposal_bytes") {
			t.Fatalf("a 50 KiB proposal under a 40 KiB cap: %v", err)
		}
		// the script alone fits; with its diff (every line of it added) it does not
		half := append(variant(0), []byte("\n// "+strings.Repeat("x", 25<<10)+"\n")...)
		_, err = b.author().Propose(ctx, api.ProposalRequest{Workflow: "notes", Source: half, Origin: api.OriginMCP})
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "with its diff") {
			t.Fatalf("a 25 KiB script with its diff under a 40 KiB cap: %v", err)
		}
		if hist, _ := b.e.Proposals(ctx, "notes"); len(hist) != 0 {
			t.Fatalf("%d proposals stored, want none", len(hist))
		}
	})

	t.Run("accepting one closes the others; a deploy closes them all", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		b.deploy("notes", notesWorkflow)
		var ids []string
		for i := range 3 {
			v, err := b.author().Propose(ctx, api.ProposalRequest{Workflow: "notes", Source: variant(i), Origin: api.OriginMCP})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, v.ID)
		}
		if _, err := b.e.AcceptProposal(ctx, ids[1]); err != nil {
			t.Fatal(err)
		}
		hist, _ := b.e.Proposals(ctx, "notes")
		for _, p := range hist {
			want := api.ProposalRejected
			if p.ID == ids[1] {
				want = api.ProposalAccepted
			}
			if p.Status != want || want == api.ProposalRejected && !strings.Contains(p.Why, "superseded: notes is at version 2") {
				t.Errorf("%s: %s (%s), want %s", p.ID, p.Status, p.Why, want)
			}
		}
		if _, err := b.e.AcceptProposal(ctx, ids[0]); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "superseded") {
			t.Errorf("accepting a superseded proposal: %v", err)
		}

		v, err := b.author().Propose(ctx, api.ProposalRequest{Workflow: "notes", Source: variant(5), Origin: api.OriginEdit})
		if err != nil {
			t.Fatal(err)
		}
		b.deploy("notes", notesWorkflow)
		if hist, _ := b.e.Proposals(ctx, "notes"); hist[len(hist)-1].ID != v.ID || hist[len(hist)-1].Status != api.ProposalRejected {
			t.Errorf("after a deploy: %+v", hist[len(hist)-1])
		}
		if open := b.attentionOf(api.AttentionProposal); len(open) != 0 {
			t.Errorf("proposals still wait after a deploy: %+v", open)
		}
	})
}

func TestProposalTextPartsAtTheDiff(t *testing.T) {
	t.Parallel()
	p := &api.ProposalView{Summary: api.ProposalSummary{Adds: []string{"a"}}, DryRunError: "line one\n\nline three",
		Diff: "--- a/w.js\n+++ b/w.js\n@@ -1 +1 @@\n-old\n+new\n"}
	words, diff := SplitProposalText(ProposalText(p))
	if !strings.Contains(words, "adds: a") || !strings.Contains(words, "line three") || strings.Contains(words, "+new") {
		t.Errorf("words = %q", words)
	}
	if diff != p.Diff {
		t.Errorf("diff = %q", diff)
	}
}
