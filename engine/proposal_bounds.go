package engine

import (
	"context"
	"fmt"

	"keep/engine/api"
	"keep/engine/config"
	"keep/storage"
)

// Proposals are bounded (policy.max_open_proposals, max_proposal_bytes):
// an assistant filed 1,000 in four minutes, and ten of 1 MB grew the
// database by 20 MB. A workflow has at most so many waiting, each at most
// so large; a proposal made against a version that is no longer the
// workflow's (one was accepted, or a version deployed) is closed.

func (e *Engine) maxOpenProposals() int {
	if e.pol.MaxOpenProposals > 0 {
		return e.pol.MaxOpenProposals
	}
	return config.Default().Policy.MaxOpenProposals
}

func (e *Engine) maxProposalBytes() int {
	if e.pol.MaxProposalBytes > 0 {
		return e.pol.MaxProposalBytes
	}
	return config.Default().Policy.MaxProposalBytes
}

// proposalBytes is what p stores.
func proposalBytes(p *storage.Proposal) int {
	return len(p.Source) + len(p.Reason) + len(p.Diff) + len(p.Summary) + len(p.DryRun) + len(p.FileName)
}

// ProposalRoom refuses, before anything costly (a dry run), a proposal
// for name of size bytes (its script and reason) past the bounds; both are
// checked again where it is filed (FileProposal).
func (e *Engine) ProposalRoom(ctx context.Context, name string, size int) error {
	if size > e.maxProposalBytes() {
		return refusedf("propose: the proposal is %d bytes, over policy.max_proposal_bytes (%d)", size, e.maxProposalBytes())
	}
	return e.roomForProposal(ctx, e.db.Read(), name)
}

// roomForProposal refuses a proposal for a workflow whose open proposals
// are at the cap.
func (e *Engine) roomForProposal(ctx context.Context, q storage.Q, name string) error {
	n, err := q.OpenProposalCount(ctx, name)
	if err != nil {
		return err
	}
	if n >= e.maxOpenProposals() {
		return refusedf("propose: %s has %d proposals waiting, as many as policy.max_open_proposals allows: "+
			"accept or reject one first (keep attention)", name, n)
	}
	return nil
}

// supersedeProposals closes name's open proposals made against a version
// older than version (now its version), but the one being accepted, if
// any: each would replace what is no longer there, and AcceptProposal
// refuses it anyway. Closed is rejected by keep, saying why.
func (e *Engine) supersedeProposals(ctx context.Context, tx *storage.Tx, name string, version int, accepting int64) error {
	ids, err := tx.StaleProposals(ctx, name, version)
	if err != nil {
		return err
	}
	why := fmt.Sprintf("superseded: %s is at version %d now", name, version)
	for _, id := range ids {
		if id == accepting {
			continue
		}
		if err := tx.DecideProposal(ctx, id, api.ProposalRejected, "keep", why, 0, e.now()); err != nil {
			return err
		}
	}
	return nil
}
