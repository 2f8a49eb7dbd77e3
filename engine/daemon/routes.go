package daemon

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"keep/engine"
	"keep/engine/api"
	"keep/engine/authoring"
)

// The API on the wire, declared once. Each route names its path under /v1/,
// the engine method it carries, and how the daemon answers it; declaring a
// route registers it with the server (routes), and the client posts through
// the same value (Client methods call rt.call), so the path a client asks
// for is the path the server answers by construction, not by two string
// tables kept in step. routes_test.go fails on an engine.API method without
// a route, and on a route or client method that reaches the wrong method.
var (
	infoRoute = answer("info", "Info", func(_ context.Context, api api.API, _ request) (api.Info, error) {
		return api.Info(), nil
	})
	workflowsRoute = answer("workflows", "Workflows", func(ctx context.Context, api api.API, _ request) ([]api.WorkflowView, error) {
		return api.Workflows(ctx)
	})
	workflowRoute = answer("workflow", "Workflow", func(ctx context.Context, api api.API, r request) (*api.WorkflowDetail, error) {
		return api.Workflow(ctx, r.Workflow)
	})
	inputsRoute = answer("inputs", "Inputs", func(ctx context.Context, keepAPI api.API, r request) ([]api.InputView, error) {
		return keepAPI.Inputs(ctx, r.Workflow, api.Page(r.Page))
	})
	eventsRoute = answer("events", "Events", func(ctx context.Context, keepAPI api.API, r request) ([]api.EventView, error) {
		return keepAPI.Events(ctx, r.Workflow, api.EventFilter(r.Filter))
	})
	runsRoute = answer("runs", "Runs", func(ctx context.Context, keepAPI api.API, r request) ([]api.RunView, error) {
		return keepAPI.Runs(ctx, r.Workflow, api.Page(r.Page))
	})
	mutationsRoute = answer("mutations", "Mutations", func(ctx context.Context, api api.API, r request) ([]api.MutationView, error) {
		return api.Mutations(ctx, r.Workflow, r.Status)
	})
	traceRoute = answer("trace", "Trace", func(ctx context.Context, api api.API, r request) ([]api.TraceLine, error) {
		return api.Trace(ctx, r.RunID)
	})
	attentionRoute = answer("attention", "Attention", func(ctx context.Context, api api.API, _ request) ([]api.AttentionItem, error) {
		return api.Attention(ctx)
	})
	grantsRoute = answer("grants", "Grants", func(ctx context.Context, api api.API, r request) ([]api.GrantView, error) {
		return api.Grants(ctx, r.Workflow)
	})
	scriptRoute = answer("script", "Script", func(ctx context.Context, api api.API, r request) (*api.ScriptView, error) {
		return api.Script(ctx, r.Workflow)
	})
	deployRoute = answer("deploy", "Deploy", func(ctx context.Context, api api.API, r request) (*api.DeployResult, error) {
		return api.Deploy(ctx, r.FileName, r.Src, r.Name)
	})
	dryRunRoute = answer("dry-run", "DryRun", func(ctx context.Context, keepAPI api.API, r request) (*api.TryReport, error) {
		return keepAPI.DryRun(ctx, r.Workflow, api.TryOptions{Producer: r.Name, Limit: r.Page.Limit})
	})

	runNowRoute = act("run-now", "RunNow", func(ctx context.Context, api api.API, r request) error {
		return api.RunNow(ctx, r.Workflow)
	})
	pauseRoute = act("pause", "Pause", func(ctx context.Context, api api.API, r request) error {
		return api.Pause(ctx, r.Workflow)
	})
	resumeRoute = act("resume", "Resume", func(ctx context.Context, api api.API, r request) error {
		return api.Resume(ctx, r.Workflow)
	})
	retryRoute = act("retry", "Retry", func(ctx context.Context, api api.API, r request) error {
		return api.Retry(ctx, r.Workflow)
	})
	approveRoute = act("approve", "Approve", func(ctx context.Context, api api.API, r request) error {
		return api.Approve(ctx, r.MutationID, r.Always)
	})
	approveWideRoute = act("approve-wide", "ApproveWide", func(ctx context.Context, api api.API, r request) error {
		return api.ApproveWide(ctx, r.MutationID)
	})
	rejectRoute = act("reject", "Reject", func(ctx context.Context, api api.API, r request) error {
		return api.Reject(ctx, r.MutationID)
	})
	resolveRoute = act("resolve", "Resolve", func(ctx context.Context, api api.API, r request) error {
		return api.Resolve(ctx, r.MutationID, r.Answer)
	})
	skipEventsRoute = act("skip-events", "SkipEvents", func(ctx context.Context, api api.API, r request) error {
		return api.SkipEvents(ctx, r.EventIDs)
	})
	skipInputRoute = act("skip-input", "SkipInput", func(ctx context.Context, api api.API, r request) error {
		return api.SkipInput(ctx, r.InputID)
	})
	grantRoute = act("grant", "Grant", func(ctx context.Context, api api.API, r request) error {
		if r.Grant == nil {
			return errors.New("daemon: grant without a grant")
		}
		return api.Grant(ctx, r.Workflow, *r.Grant)
	})
	grantReleasingRoute = answer("grant-releasing", "GrantReleasing", func(ctx context.Context, api api.API, r request) (int, error) {
		if r.Grant == nil {
			return 0, errors.New("daemon: grant without a grant")
		}
		return api.GrantReleasing(ctx, r.Workflow, *r.Grant)
	})

	proposeRoute = answer("propose", "Propose", func(ctx context.Context, api api.API, r request) (*api.ProposalView, error) {
		if r.Proposal == nil {
			return nil, errors.New("daemon: propose without a proposal")
		}
		return api.Propose(ctx, *r.Proposal)
	})
	acceptProposalRoute = answer("accept-proposal", "AcceptProposal", func(ctx context.Context, api api.API, r request) (*api.DeployResult, error) {
		return api.AcceptProposal(ctx, r.ProposalID)
	})
	rejectProposalRoute = act("reject-proposal", "RejectProposal", func(ctx context.Context, api api.API, r request) error {
		return api.RejectProposal(ctx, r.ProposalID)
	})

	// What the engine offers beyond engine.API, asked of it by interface: a
	// daemon over some other engine.API answers as the in-process engine
	// would (no accounts) or refuses.
	accountsRoute = answer("accounts", "Accounts", func(ctx context.Context, api api.API, _ request) ([]engine.AccountView, error) {
		if l, ok := api.(engine.AccountLister); ok {
			return l.Accounts(ctx)
		}
		return []engine.AccountView{}, nil
	})
	tryChangeRoute = answer("try-change", "TryChange", func(ctx context.Context, api api.API, r request) (*api.TryReport, error) {
		ct, ok := api.(authoring.ChangeTrier)
		if !ok || r.Try == nil {
			return nil, errors.New("daemon: try-change is not offered here")
		}
		return ct.TryChange(ctx, r.Workflow, r.FileName, r.Src, *r.Try)
	})
	gcRoute = answer("gc", "GC", func(ctx context.Context, api api.API, _ request) (engine.GCReport, error) {
		m, err := maintainer(api)
		if err != nil {
			return engine.GCReport{}, err
		}
		return m.GC(ctx)
	})
	backupRoute = act("backup", "Backup", func(ctx context.Context, api api.API, r request) error {
		m, err := maintainer(api)
		if err != nil {
			return err
		}
		// the daemon writes the file: a relative path would land in its
		// working directory, not the caller's
		if !filepath.IsAbs(r.Path) {
			return fmt.Errorf("daemon: backup: %q is not an absolute path", r.Path)
		}
		return m.Backup(ctx, r.Path)
	})
)

// subscribeMethod and subscribeScreenMethod are the engine.API methods
// that are a stream, not a route: GET subscribePath (with screenParam for
// the screen's), answered by Server.subscribe.
const (
	subscribeMethod       = "Subscribe"
	subscribeScreenMethod = "SubscribeScreen"
)

// served is a route as the server holds it, whatever it answers.
type served struct {
	method string
	serve  func(ctx context.Context, api api.API, r request) (any, error)
}

// routes is every route by path, filled as the routes above are declared.
var routes = map[string]served{}

func register(path, method string, serve func(ctx context.Context, api api.API, r request) (any, error)) {
	if _, dup := routes[path]; dup {
		panic("daemon: two routes on " + path)
	}
	routes[path] = served{method: method, serve: serve}
}

// route is a call that answers a T.
type route[T any] struct{ path string }

// answer declares a route whose answer is a T, sent as JSON.
func answer[T any](path, method string, serve func(ctx context.Context, api api.API, r request) (T, error)) route[T] {
	register(path, method, func(ctx context.Context, api api.API, r request) (any, error) {
		return serve(ctx, api, r)
	})
	return route[T]{path: path}
}

func (rt route[T]) call(ctx context.Context, c *Client, r request) (T, error) {
	var out T
	err := c.call(ctx, rt.path, r, &out)
	return out, err
}

// action is a call that answers only whether it was done.
type action struct{ path string }

// act declares a route that answers nothing (JSON null) or an error.
func act(path, method string, serve func(ctx context.Context, api api.API, r request) error) action {
	register(path, method, func(ctx context.Context, api api.API, r request) (any, error) {
		return nil, serve(ctx, api, r)
	})
	return action{path: path}
}

func (a action) call(ctx context.Context, c *Client, r request) error {
	return c.call(ctx, a.path, r, nil)
}
