package tui

import (
	"context"
	"errors"
	"sync"

	"keep/engine"
	"keep/engine/api"
	"keep/tui/printable"
)

// printableAPI is the engine as the panes see it: every string of every
// view, and every error's text, has its control characters escaped, so a
// title, log line, parameter or payload a script wrote can never drive the
// terminal (clear it, retitle it, write the clipboard, move the cursor).
// One place, at the way in: a view or a field added later is covered.
//
// It holds the engine rather than embedding it, so a method added to
// engine.API does not compile until it is written here too: nothing passes
// through unescaped by default (printable_api_test.go checks every method's
// strings and errors).
type printableAPI struct{ api api.API }

var _ api.API = printableAPI{}

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

func (a printableAPI) Workflows(ctx context.Context) ([]api.WorkflowView, error) {
	return clean(a.api.Workflows(ctx))
}

func (a printableAPI) Workflow(ctx context.Context, name string) (*api.WorkflowDetail, error) {
	return clean(a.api.Workflow(ctx, name))
}

func (a printableAPI) Inputs(ctx context.Context, workflow string, page api.Page) ([]api.InputView, error) {
	return clean(a.api.Inputs(ctx, workflow, page))
}

func (a printableAPI) Events(ctx context.Context, workflow string, f api.EventFilter) ([]api.EventView, error) {
	return clean(a.api.Events(ctx, workflow, f))
}

func (a printableAPI) Runs(ctx context.Context, workflow string, page api.Page) ([]api.RunView, error) {
	return clean(a.api.Runs(ctx, workflow, page))
}

func (a printableAPI) Mutations(ctx context.Context, workflow, status string) ([]api.MutationView, error) {
	return clean(a.api.Mutations(ctx, workflow, status))
}

func (a printableAPI) Trace(ctx context.Context, runID string) ([]api.TraceLine, error) {
	return clean(a.api.Trace(ctx, runID))
}

func (a printableAPI) Attention(ctx context.Context) ([]api.AttentionItem, error) {
	return clean(a.api.Attention(ctx))
}

func (a printableAPI) Grants(ctx context.Context, workflow string) ([]api.GrantView, error) {
	return clean(a.api.Grants(ctx, workflow))
}

func (a printableAPI) Deploy(ctx context.Context, fileName string, src []byte, name string) (*api.DeployResult, error) {
	return clean(a.api.Deploy(ctx, fileName, src, name))
}

func (a printableAPI) RunNow(ctx context.Context, workflow string) error {
	return cleanErr(a.api.RunNow(ctx, workflow))
}

func (a printableAPI) Pause(ctx context.Context, workflow string) error {
	return cleanErr(a.api.Pause(ctx, workflow))
}

func (a printableAPI) Resume(ctx context.Context, workflow string) error {
	return cleanErr(a.api.Resume(ctx, workflow))
}

func (a printableAPI) Retry(ctx context.Context, workflow string) error {
	return cleanErr(a.api.Retry(ctx, workflow))
}

func (a printableAPI) Approve(ctx context.Context, mutationID string, always bool) error {
	return cleanErr(a.api.Approve(ctx, mutationID, always))
}

func (a printableAPI) Reject(ctx context.Context, mutationID string) error {
	return cleanErr(a.api.Reject(ctx, mutationID))
}

func (a printableAPI) Resolve(ctx context.Context, mutationID string, answer api.Answer) error {
	return cleanErr(a.api.Resolve(ctx, mutationID, answer))
}

func (a printableAPI) SkipEvents(ctx context.Context, eventIDs []string) error {
	return cleanErr(a.api.SkipEvents(ctx, eventIDs))
}

func (a printableAPI) SkipInput(ctx context.Context, inputID string) error {
	return cleanErr(a.api.SkipInput(ctx, inputID))
}

func (a printableAPI) ApproveWide(ctx context.Context, mutationID string) error {
	return cleanErr(a.api.ApproveWide(ctx, mutationID))
}

func (a printableAPI) GrantReleasing(ctx context.Context, workflow string, g api.GrantView) (int, error) {
	n, err := a.api.GrantReleasing(ctx, workflow, g)
	return n, cleanErr(err)
}

func (a printableAPI) Grant(ctx context.Context, workflow string, g api.GrantView) error {
	return cleanErr(a.api.Grant(ctx, workflow, g))
}

// errNoAccounts: the engine behind the TUI does not list accounts.
var errNoAccounts = errors.New("this engine does not list accounts")

func (a printableAPI) Accounts(ctx context.Context) ([]engine.AccountView, error) {
	l, ok := a.api.(engine.AccountLister)
	if !ok {
		return nil, errNoAccounts
	}
	return clean(l.Accounts(ctx))
}

func (a printableAPI) Propose(ctx context.Context, p api.ProposalRequest) (*api.ProposalView, error) {
	return clean(a.api.Propose(ctx, p))
}

func (a printableAPI) AcceptProposal(ctx context.Context, id string) (*api.DeployResult, error) {
	return clean(a.api.AcceptProposal(ctx, id))
}

func (a printableAPI) RejectProposal(ctx context.Context, id string) error {
	return cleanErr(a.api.RejectProposal(ctx, id))
}

func (a printableAPI) Info() api.Info {
	info := a.api.Info()
	printable.Deep(&info)
	return info
}

// Subscribe passes notifications on escaped; the copy ends when the
// engine's channel closes or cancel is called.
func (a printableAPI) Subscribe() (<-chan api.Notification, func()) {
	return escapedNotes(a.api.Subscribe())
}

// SubscribeScreen is Subscribe for the screen: a script's notify.send
// title and body come through it, escaped like everything else.
func (a printableAPI) SubscribeScreen() (<-chan api.Notification, func()) {
	return escapedNotes(a.api.SubscribeScreen())
}

func escapedNotes(in <-chan api.Notification, cancel func()) (<-chan api.Notification, func()) {
	out := make(chan api.Notification, cap(in))
	done := make(chan struct{})
	go func() {
		defer close(out)
		for {
			select {
			case n, ok := <-in:
				if !ok {
					return
				}
				printable.Deep(&n)
				select {
				case out <- n:
				case <-done:
					return
				}
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return out, func() { once.Do(func() { close(done); cancel() }) }
}
