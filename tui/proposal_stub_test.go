package tui

import (
	"context"

	"keep/engine/api"
)

// The stub's proposal answers record the call, as its other actions do.

func (s *stubAPI) Propose(_ context.Context, p api.ProposalRequest) (*api.ProposalView, error) {
	if err := s.record("Propose %s", p.Workflow); err != nil {
		return nil, err
	}
	return &api.ProposalView{ID: "p1", Workflow: p.Workflow, Origin: p.Origin, Status: api.ProposalOpen}, nil
}

func (s *stubAPI) AcceptProposal(_ context.Context, id string) (*api.DeployResult, error) {
	if err := s.record("AcceptProposal %s", id); err != nil {
		return nil, err
	}
	return &api.DeployResult{}, nil
}

func (s *stubAPI) RejectProposal(_ context.Context, id string) error {
	return s.record("RejectProposal %s", id)
}
