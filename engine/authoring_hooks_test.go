package engine

import (
	"context"

	"keep/connectors"
	"keep/engine/api"
	"keep/engine/authoring/model"
)

// Internal tests reach engine/authoring, which imports the engine (so
// they cannot import it), through these, set by authoring_link_test.go:
// the real authoring, on the real engine.
var (
	// AuthorOf is authoring's part of the API on e (authoring.Author).
	AuthorOf func(e *Engine) Author
	// RepairsOf is the Repairer of a model's repairer (authoring.RepairsFrom).
	RepairsOf func(m model.Repairer) Repairer
	// TryFile is a dry run of a file (authoring.Try).
	TryFile func(ctx context.Context, reg *connectors.Registry, pol Policy, fileName string, src []byte, opts api.TryOptions) (*api.TryReport, error)
)

// Author is what the tests ask of authoring.Author.
type Author interface {
	DryRun(ctx context.Context, workflow string, opts api.TryOptions) (*api.TryReport, error)
	TryChange(ctx context.Context, workflow, fileName string, src []byte, opts api.TryOptions) (*api.TryReport, error)
	Propose(ctx context.Context, p api.ProposalRequest) (*api.ProposalView, error)
}

// author is authoring's part of the API on b's engine.
func (b *bundle) author() Author { return AuthorOf(b.e) }
