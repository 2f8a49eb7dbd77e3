package daemon

import (
	"context"

	"keep/engine"
)

// Propose implements engine.API.
func (c *Client) Propose(ctx context.Context, p engine.ProposalRequest) (*engine.ProposalView, error) {
	var out engine.ProposalView
	if err := c.call(ctx, "propose", request{Proposal: &p}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AcceptProposal implements engine.API.
func (c *Client) AcceptProposal(ctx context.Context, id string) (*engine.DeployResult, error) {
	var out engine.DeployResult
	if err := c.call(ctx, "accept-proposal", request{ProposalID: id}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RejectProposal implements engine.API.
func (c *Client) RejectProposal(ctx context.Context, id string) error {
	return c.call(ctx, "reject-proposal", request{ProposalID: id}, nil)
}

var _ engine.ChangeTrier = (*Client)(nil)

// TryChange implements engine.ChangeTrier.
func (c *Client) TryChange(ctx context.Context, workflow, fileName string, src []byte, opts engine.TryOptions) (*engine.TryReport, error) {
	var rep engine.TryReport
	if err := c.call(ctx, "try-change", request{Workflow: workflow, FileName: fileName, Src: src, Try: &opts}, &rep); err != nil {
		return nil, err
	}
	return &rep, nil
}
