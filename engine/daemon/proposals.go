package daemon

import (
	"context"

	"keep/engine/api"
	"keep/engine/authoring"
)

// Propose implements engine.API.
func (c *Client) Propose(ctx context.Context, p api.ProposalRequest) (*api.ProposalView, error) {
	return proposeRoute.call(ctx, c, request{Proposal: &p})
}

// AcceptProposal implements engine.API.
func (c *Client) AcceptProposal(ctx context.Context, id string) (*api.DeployResult, error) {
	return acceptProposalRoute.call(ctx, c, request{ProposalID: id})
}

// RejectProposal implements engine.API.
func (c *Client) RejectProposal(ctx context.Context, id string) error {
	return rejectProposalRoute.call(ctx, c, request{ProposalID: id})
}

var _ authoring.ChangeTrier = (*Client)(nil)

// TryChange implements authoring.ChangeTrier.
func (c *Client) TryChange(ctx context.Context, workflow, fileName string, src []byte, opts api.TryOptions) (*api.TryReport, error) {
	return tryChangeRoute.call(ctx, c, request{Workflow: workflow, FileName: fileName, Src: src, Try: &opts})
}
