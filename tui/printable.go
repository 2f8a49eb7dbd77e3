package tui

import (
	"context"
	"errors"

	"keep/engine"
	"keep/tui/printable"
)

// printableAPI is the engine as the panes see it: every string of every
// view, and every error's text, has its control characters escaped, so a
// title, log line, parameter or payload a script wrote can never drive the
// terminal (clear it, retitle it, write the clipboard, move the cursor).
// One place, at the way in: a view or a field added later is covered.
type printableAPI struct{ engine.API }

func clean[T any](v T, err error) (T, error) {
	printable.Deep(&v)
	return v, cleanErr(err)
}

// cleanErr keeps the error (errors.Is and As still see it) but shows its
// text escaped.
func cleanErr(err error) error {
	if err == nil {
		return nil
	}
	if s := err.Error(); printable.String(s) != s {
		return printableError{err}
	}
	return err
}

type printableError struct{ err error }

func (e printableError) Error() string { return printable.String(e.err.Error()) }
func (e printableError) Unwrap() error { return e.err }

func (a printableAPI) Workflows(ctx context.Context) ([]engine.WorkflowView, error) {
	return clean(a.API.Workflows(ctx))
}

func (a printableAPI) Workflow(ctx context.Context, name string) (*engine.WorkflowDetail, error) {
	return clean(a.API.Workflow(ctx, name))
}

func (a printableAPI) Inputs(ctx context.Context, workflow string, page engine.Page) ([]engine.InputView, error) {
	return clean(a.API.Inputs(ctx, workflow, page))
}

func (a printableAPI) Events(ctx context.Context, workflow string, f engine.EventFilter) ([]engine.EventView, error) {
	return clean(a.API.Events(ctx, workflow, f))
}

func (a printableAPI) Runs(ctx context.Context, workflow string, page engine.Page) ([]engine.RunView, error) {
	return clean(a.API.Runs(ctx, workflow, page))
}

func (a printableAPI) Mutations(ctx context.Context, workflow, status string) ([]engine.MutationView, error) {
	return clean(a.API.Mutations(ctx, workflow, status))
}

func (a printableAPI) Trace(ctx context.Context, runID string) ([]engine.TraceLine, error) {
	return clean(a.API.Trace(ctx, runID))
}

func (a printableAPI) Attention(ctx context.Context) ([]engine.AttentionItem, error) {
	return clean(a.API.Attention(ctx))
}

func (a printableAPI) Grants(ctx context.Context, workflow string) ([]engine.GrantView, error) {
	return clean(a.API.Grants(ctx, workflow))
}

func (a printableAPI) Deploy(ctx context.Context, fileName string, src []byte, name string) (*engine.DeployResult, error) {
	return clean(a.API.Deploy(ctx, fileName, src, name))
}

func (a printableAPI) RunNow(ctx context.Context, workflow string) error {
	return cleanErr(a.API.RunNow(ctx, workflow))
}

func (a printableAPI) Pause(ctx context.Context, workflow string) error {
	return cleanErr(a.API.Pause(ctx, workflow))
}

func (a printableAPI) Resume(ctx context.Context, workflow string) error {
	return cleanErr(a.API.Resume(ctx, workflow))
}

func (a printableAPI) Retry(ctx context.Context, workflow string) error {
	return cleanErr(a.API.Retry(ctx, workflow))
}

func (a printableAPI) Approve(ctx context.Context, mutationID string, always bool) error {
	return cleanErr(a.API.Approve(ctx, mutationID, always))
}

func (a printableAPI) Reject(ctx context.Context, mutationID string) error {
	return cleanErr(a.API.Reject(ctx, mutationID))
}

func (a printableAPI) Resolve(ctx context.Context, mutationID string, answer engine.Answer) error {
	return cleanErr(a.API.Resolve(ctx, mutationID, answer))
}

func (a printableAPI) SkipEvents(ctx context.Context, eventIDs []string) error {
	return cleanErr(a.API.SkipEvents(ctx, eventIDs))
}

func (a printableAPI) SkipInput(ctx context.Context, inputID string) error {
	return cleanErr(a.API.SkipInput(ctx, inputID))
}

func (a printableAPI) ApproveWide(ctx context.Context, mutationID string) error {
	return cleanErr(a.API.ApproveWide(ctx, mutationID))
}

func (a printableAPI) GrantReleasing(ctx context.Context, workflow string, g engine.GrantView) (int, error) {
	n, err := a.API.GrantReleasing(ctx, workflow, g)
	return n, cleanErr(err)
}

func (a printableAPI) Grant(ctx context.Context, workflow string, g engine.GrantView) error {
	return cleanErr(a.API.Grant(ctx, workflow, g))
}

// errNoAccounts: the engine behind the TUI does not list accounts.
var errNoAccounts = errors.New("this engine does not list accounts")

func (a printableAPI) Accounts(ctx context.Context) ([]engine.AccountView, error) {
	l, ok := a.API.(engine.AccountLister)
	if !ok {
		return nil, errNoAccounts
	}
	return clean(l.Accounts(ctx))
}
