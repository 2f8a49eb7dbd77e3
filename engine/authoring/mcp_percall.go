package authoring

import (
	"context"
	"sync"

	"keep/engine/api"
)

// PerCall is keep mcp serve's hold on the engine: open gets hold of it
// (the daemon's client when one holds the database, else an engine of this
// process) for one call, and the returned close lets go after it. An
// assistant keeps its server open all day; an engine held for the
// server's life locked the person out (keep --daemon waited without end,
// keep approve was refused) while the server told them to start one.
// Calls take their turn: two engines of one process on one database would
// refuse each other.
func PerCall(open func(ctx context.Context) (MCPServeAPI, func(), error)) MCPServeAPI {
	return &perCall{open: open}
}

type perCall struct {
	open func(ctx context.Context) (MCPServeAPI, func(), error)
	mu   sync.Mutex
}

func held[T any](ctx context.Context, p *perCall, fn func(MCPServeAPI) (T, error)) (T, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var zero T
	a, done, err := p.open(ctx)
	if done != nil {
		defer done()
	}
	if err != nil {
		return zero, err
	}
	return fn(a)
}

func (p *perCall) Info() api.Info {
	info, _ := held(context.Background(), p, func(a MCPServeAPI) (api.Info, error) { return a.Info(), nil })
	return info
}

func (p *perCall) Workflows(ctx context.Context) ([]api.WorkflowView, error) {
	return held(ctx, p, func(a MCPServeAPI) ([]api.WorkflowView, error) { return a.Workflows(ctx) })
}

func (p *perCall) Workflow(ctx context.Context, name string) (*api.WorkflowDetail, error) {
	return held(ctx, p, func(a MCPServeAPI) (*api.WorkflowDetail, error) { return a.Workflow(ctx, name) })
}

func (p *perCall) Inputs(ctx context.Context, workflow string, page api.Page) ([]api.InputView, error) {
	return held(ctx, p, func(a MCPServeAPI) ([]api.InputView, error) { return a.Inputs(ctx, workflow, page) })
}

func (p *perCall) Runs(ctx context.Context, workflow string, page api.Page) ([]api.RunView, error) {
	return held(ctx, p, func(a MCPServeAPI) ([]api.RunView, error) { return a.Runs(ctx, workflow, page) })
}

func (p *perCall) Attention(ctx context.Context) ([]api.AttentionItem, error) {
	return held(ctx, p, func(a MCPServeAPI) ([]api.AttentionItem, error) { return a.Attention(ctx) })
}

func (p *perCall) Propose(ctx context.Context, r api.ProposalRequest) (*api.ProposalView, error) {
	return held(ctx, p, func(a MCPServeAPI) (*api.ProposalView, error) { return a.Propose(ctx, r) })
}
