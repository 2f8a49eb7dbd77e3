package daemon

import (
	"context"
	"log/slog"
	"os"
	"reflect"
	"slices"
	"sync"
	"testing"

	"keep/engine"
	"keep/engine/api"
	"keep/engine/authoring"
)

// offered is every interface the client carries over the socket: engine.API
// and what the engine offers beside it.
var offered = []reflect.Type{
	reflect.TypeFor[api.API](),
	reflect.TypeFor[engine.AccountLister](),
	reflect.TypeFor[authoring.ChangeTrier](),
	reflect.TypeFor[Maintainer](),
}

func TestEveryAPIMethodHasARoute(t *testing.T) {
	t.Parallel()
	carried := map[string]bool{subscribeMethod: true, subscribeScreenMethod: true}
	for _, s := range routes {
		carried[s.method] = true
	}
	for _, it := range offered {
		for i := range it.NumMethod() {
			if m := it.Method(i).Name; !carried[m] {
				t.Errorf("%s.%s has no route in engine/daemon/routes.go: a daemon's clients cannot call it", it, m)
			}
		}
	}
}

// TestTheWalkSeesAMissingMethod proves the check above reads the
// interface's method set: a method set with a name no route carries fails.
func TestTheWalkSeesAMissingMethod(t *testing.T) {
	t.Parallel()
	type wider interface {
		api.API
		Frobnicate(ctx context.Context) error
	}
	it := reflect.TypeFor[wider]()
	var missing []string
	for i := range it.NumMethod() {
		name := it.Method(i).Name
		if _, ok := routeFor(name); !ok && name != subscribeMethod && name != subscribeScreenMethod {
			missing = append(missing, name)
		}
	}
	if !slices.Equal(missing, []string{"Frobnicate"}) {
		t.Errorf("missing = %v, want [Frobnicate]", missing)
	}
}

func routeFor(method string) (string, bool) {
	for path, s := range routes {
		if s.method == method {
			return path, true
		}
	}
	return "", false
}

func TestEachRouteCallsTheMethodItNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for path, s := range routes {
		rec := &recorder{}
		r := request{Path: "/abs", Grant: &api.GrantView{}, Proposal: &api.ProposalRequest{}, Try: &api.TryOptions{}}
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("route %s: %v (a method the recorder does not implement?)", path, p)
				}
			}()
			if _, err := s.serve(ctx, rec, r); err != nil {
				t.Errorf("route %s: %v", path, err)
			}
		}()
		if got := rec.take(); !slices.Equal(got, []string{s.method}) {
			t.Errorf("route %s says it carries %s and called %v", path, s.method, got)
		}
	}
}

// TestEachClientMethodReachesItsNamesake calls every method of the client
// over a real socket and checks the daemon called the engine method of the
// same name, once: a client method posting to another method's route fails.
func TestEachClientMethodReachesItsNamesake(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	sockDir, err := os.MkdirTemp("", "kr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	srv, err := Serve(context.Background(), rec, SocketPath(sockDir+"/k.db"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(context.Background()) })
	c, err := Dial(SocketPath(sockDir + "/k.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// Info is read once, at Dial, and kept.
	if got := rec.take(); !slices.Equal(got, []string{"Info"}) {
		t.Errorf("Dial called %v, want [Info]", got)
	}
	cv := reflect.ValueOf(c)
	for _, it := range offered {
		for i := range it.NumMethod() {
			m := it.Method(i)
			if m.Name == "Info" {
				continue
			}
			args := make([]reflect.Value, m.Type.NumIn())
			for j := range args {
				args[j] = argument(m.Type.In(j))
			}
			out := cv.MethodByName(m.Name).Call(args)
			if m.Name == subscribeMethod || m.Name == subscribeScreenMethod {
				out[1].Interface().(func())()
			} else if e, _ := out[len(out)-1].Interface().(error); e != nil {
				t.Errorf("client %s: %v", m.Name, e)
			}
			if got := rec.take(); !slices.Equal(got, []string{m.Name}) {
				t.Errorf("client %s reached %v", m.Name, got)
			}
		}
	}
}

// argument is a harmless value of t: strings are an absolute path, which
// every method takes (backup wants one).
func argument(t reflect.Type) reflect.Value {
	if t == reflect.TypeFor[context.Context]() {
		return reflect.ValueOf(context.Background())
	}
	if t.Kind() == reflect.String {
		return reflect.ValueOf("/abs").Convert(t)
	}
	return reflect.Zero(t)
}

// recorder is an engine that only notes which of its methods were called.
// It embeds a nil engine.API so that a method added to the interface does
// not stop this file compiling: calling it panics, which the tests report.
type recorder struct {
	api.API
	mu    sync.Mutex
	calls []string
}

func (r *recorder) note(m string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, m)
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.calls
	r.calls = nil
	return c
}

func (r *recorder) Workflows(context.Context) ([]api.WorkflowView, error) {
	r.note("Workflows")
	return nil, nil
}

func (r *recorder) Workflow(context.Context, string) (*api.WorkflowDetail, error) {
	r.note("Workflow")
	return nil, nil
}

func (r *recorder) Inputs(context.Context, string, api.Page) ([]api.InputView, error) {
	r.note("Inputs")
	return nil, nil
}

func (r *recorder) Events(context.Context, string, api.EventFilter) ([]api.EventView, error) {
	r.note("Events")
	return nil, nil
}

func (r *recorder) Runs(context.Context, string, api.Page) ([]api.RunView, error) {
	r.note("Runs")
	return nil, nil
}

func (r *recorder) Mutations(context.Context, string, string) ([]api.MutationView, error) {
	r.note("Mutations")
	return nil, nil
}

func (r *recorder) Trace(context.Context, string) ([]api.TraceLine, error) {
	r.note("Trace")
	return nil, nil
}

func (r *recorder) Attention(context.Context) ([]api.AttentionItem, error) {
	r.note("Attention")
	return nil, nil
}

func (r *recorder) Grants(context.Context, string) ([]api.GrantView, error) {
	r.note("Grants")
	return nil, nil
}

func (r *recorder) Deploy(context.Context, string, []byte, string) (*api.DeployResult, error) {
	r.note("Deploy")
	return nil, nil
}

func (r *recorder) RunNow(context.Context, string) error { r.note("RunNow"); return nil }
func (r *recorder) Pause(context.Context, string) error  { r.note("Pause"); return nil }
func (r *recorder) Resume(context.Context, string) error { r.note("Resume"); return nil }
func (r *recorder) Retry(context.Context, string) error  { r.note("Retry"); return nil }
func (r *recorder) Reject(context.Context, string) error { r.note("Reject"); return nil }
func (r *recorder) ApproveWide(context.Context, string) error {
	r.note("ApproveWide")
	return nil
}
func (r *recorder) SkipInput(context.Context, string) error { r.note("SkipInput"); return nil }

func (r *recorder) Approve(context.Context, string, bool) error {
	r.note("Approve")
	return nil
}

func (r *recorder) Resolve(context.Context, string, api.Answer) error {
	r.note("Resolve")
	return nil
}

func (r *recorder) SkipEvents(context.Context, []string) error {
	r.note("SkipEvents")
	return nil
}

func (r *recorder) Grant(context.Context, string, api.GrantView) error {
	r.note("Grant")
	return nil
}

func (r *recorder) GrantReleasing(context.Context, string, api.GrantView) (int, error) {
	r.note("GrantReleasing")
	return 0, nil
}

func (r *recorder) DryRun(context.Context, string, api.TryOptions) (*api.TryReport, error) {
	r.note("DryRun")
	return nil, nil
}

func (r *recorder) Script(context.Context, string) (*api.ScriptView, error) {
	r.note("Script")
	return nil, nil
}

func (r *recorder) Propose(context.Context, api.ProposalRequest) (*api.ProposalView, error) {
	r.note("Propose")
	return nil, nil
}

func (r *recorder) AcceptProposal(context.Context, string) (*api.DeployResult, error) {
	r.note("AcceptProposal")
	return nil, nil
}

func (r *recorder) RejectProposal(context.Context, string) error {
	r.note("RejectProposal")
	return nil
}

func (r *recorder) Subscribe() (<-chan api.Notification, func()) {
	r.note("Subscribe")
	return make(chan api.Notification), func() {}
}

func (r *recorder) SubscribeScreen() (<-chan api.Notification, func()) {
	r.note("SubscribeScreen")
	return make(chan api.Notification), func() {}
}

func (r *recorder) Info() api.Info {
	r.note("Info")
	return api.Info{}
}

func (r *recorder) Accounts(context.Context) ([]engine.AccountView, error) {
	r.note("Accounts")
	return nil, nil
}

func (r *recorder) TryChange(context.Context, string, string, []byte, api.TryOptions) (*api.TryReport, error) {
	r.note("TryChange")
	return nil, nil
}

func (r *recorder) GC(context.Context) (engine.GCReport, error) {
	r.note("GC")
	return engine.GCReport{}, nil
}

func (r *recorder) Backup(context.Context, string) error {
	r.note("Backup")
	return nil
}
