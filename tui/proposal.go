package tui

import (
	"context"
	"fmt"

	tea "charm.land/bubbletea/v2"

	"keep/engine/api"
)

// A proposal in Attention (engine/proposal.go) is a new version of a
// workflow that a repair, a model or keep edit offers: a accepts it (it is
// deployed, and grants nothing), x rejects it. Both ask first, and opening
// it (enter) shows its summary, dry run and diff in full.

func proposalAnswer(sh *shared, msg tea.KeyPressMsg, it api.AttentionItem, card string) tea.Cmd {
	k := sh.keys
	id, wf := it.ID, it.Workflow
	switch {
	case keyIs(msg, k.Approve):
		return sh.ask(fmt.Sprintf("accept proposal %s for %s?", id, wf),
			"accept: it becomes the workflow's new version and runs; it adds no grant",
			func() tea.Cmd {
				return sh.actOn(card, "accepted proposal "+id+" for "+wf, func(ctx context.Context) error {
					_, err := sh.api.AcceptProposal(ctx, id)
					return err
				})
			})
	case keyIs(msg, k.Reject):
		return sh.ask(fmt.Sprintf("reject proposal %s for %s?", id, wf), "reject: it is dropped; the workflow keeps its version",
			func() tea.Cmd {
				return sh.actOn(card, "rejected proposal "+id+" for "+wf, func(ctx context.Context) error { return sh.api.RejectProposal(ctx, id) })
			})
	}
	return nil
}

// proposalLines is how many lines of its preview an open proposal shows:
// all of a short one, so the diff is read before it is accepted.
func proposalLines(it api.AttentionItem) int {
	if it.Kind != api.AttentionProposal {
		return 0
	}
	return 200
}
