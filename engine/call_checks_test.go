package engine

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"keep/connectors"
	"keep/engine/api"
	"keep/engine/config"
	"keep/engine/enginetest/kit"
	"keep/storage"
)

// gateConnector is a mutation connector whose test decides when a call's
// scope is known: scope runs where the engine works out what a grant may
// be narrowed to, after the run's mutate and before the call's checks are
// decided, so a test can hold a run there.
type gateConnector struct {
	scope func(id string) string
	mu    sync.Mutex
	calls []string
}

func (g *gateConnector) Name() string { return "gate" }

func (g *gateConnector) Methods() []connectors.Method {
	return []connectors.Method{{
		Name: "post", Kind: connectors.Mutate, Doc: "Posts an item past the gate.",
		Args: []connectors.Arg{{Name: "id", Type: "string", Required: true, Doc: "the item"},
			{Name: "to", Type: "string", Doc: "where it goes (arguments_test.go)"}},
		Scope: func(p map[string]any) string { id, _ := p["id"].(string); return g.scope(id) },
	}}
}

func (g *gateConnector) Do(ctx context.Context, call connectors.Call) (any, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	id, _ := call.Params["id"].(string)
	g.calls = append(g.calls, id)
	return map[string]any{"ok": true}, nil
}

func (g *gateConnector) made() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.calls...)
}

// gateWorkflow publishes the items ids (a JavaScript array) and posts each
// through the gate, up to conc runs at once.
func gateWorkflow(ids string, conc int) string {
	return fanWorkflow("gated", ids, conc, `await ctx.gate.post({ id: p.data.id });`)
}

// gated is a bundle whose engine has a gate connector besides the
// configured ones.
func gated(t *testing.T, g connectors.Connector) *bundle {
	ctx := context.Background()
	db, err := storage.Open(ctx, storage.Opts{Path: t.TempDir() + "/keep.db"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	b := &bundle{t: t, clock: kit.NewClock(time.Time{}), db: db, cfg: config.Default()}
	reg, err := Connectors(b.cfg, ConnectorOpts{Now: b.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	reg.Register(g)
	if b.e, err = New(ctx, Opts{DB: db, Connectors: reg, Policy: PolicyFrom(b.cfg.Policy), Now: b.clock.Now}); err != nil {
		t.Fatal(err)
	}
	return b
}

// A daily limit holds for runs that decide at the same moment: four runs of
// a concurrent consumer reach their calls together under a limit of two a
// day, and two calls are made; the next asks the person, past its limit.
// Decided on a read before the in_flight row's transaction, each run found
// no call made yet, and all four went out.
func TestDailyLimitUnderConcurrency(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var arrived atomic.Int32
	open := make(chan struct{})
	var once sync.Once
	g := &gateConnector{scope: func(string) string {
		if arrived.Add(1) >= 4 {
			once.Do(func() { close(open) })
		}
		select {
		case <-open:
		case <-time.After(5 * time.Second):
		}
		return ""
	}}
	b := gated(t, g)
	b.deploy("gated", gateWorkflow(`["i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7"]`, 4))
	if err := b.e.Grant(ctx, "gated", api.GrantView{Capability: "gate.post", Mode: "allow", DailyLimit: 2}); err != nil {
		t.Fatal(err)
	}
	b.drain()
	if got := g.made(); len(got) != 2 {
		t.Errorf("calls %v made under a daily limit of 2", got)
	}
	att, err := b.e.Attention(ctx)
	if err != nil {
		t.Fatal(err)
	}
	asked := false
	for _, a := range att {
		asked = asked || (a.Kind == api.AttentionApproval && strings.Contains(a.Reason, "past its limit of 2 a day"))
	}
	if !asked {
		t.Errorf("attention = %+v, want an approval past the limit", att)
	}
}

// A run of a concurrent consumer makes no call once another run's question
// blocks the workflow, even when it had looked before the block was set:
// runs "a" (not granted) and "b" (granted) meet where their calls' scopes
// are worked out; "b" is held there until "a" has asked and blocked the
// workflow, and then waits at its checkpoint; both go out once "a" is
// approved. Checked before the in_flight row's transaction, "b" found no
// block and made its call while the workflow waited on "a".
func TestConcurrentCallWaitsForABlockSetMeanwhile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var b *bundle
	var aHeld, bHeld atomic.Bool
	bThere := make(chan struct{})
	g := &gateConnector{scope: func(id string) string {
		switch {
		case id == "a" && !aHeld.Swap(true):
			select {
			case <-bThere:
			case <-time.After(10 * time.Second):
				t.Error("b never reached its call beside a")
			}
			return "elsewhere"
		case id == "b" && !bHeld.Swap(true):
			close(bThere)
			for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
				if w, err := b.e.Workflow(ctx, "gated"); err == nil && w.Block != nil {
					return "granted"
				}
			}
			t.Error("the workflow never blocked on a's question")
			return "granted"
		case id == "b":
			return "granted"
		}
		return "elsewhere"
	}}
	b = gated(t, g)
	b.deploy("gated", gateWorkflow(`["a", "b"]`, 2))
	if err := b.e.Grant(ctx, "gated", api.GrantView{Capability: "gate.post", Scope: "granted", Mode: "allow"}); err != nil {
		t.Fatal(err)
	}
	b.drain()
	if got := g.made(); len(got) != 0 {
		t.Fatalf("calls %v made while the workflow waited on a's question", got)
	}
	ids := b.approvals()
	if len(ids) != 1 {
		t.Fatalf("approvals %v, want a's one question", ids)
	}
	if err := b.e.Approve(ctx, ids[0], false); err != nil {
		t.Fatal(err)
	}
	b.drain()
	if got := g.made(); len(got) != 2 {
		t.Errorf("calls %v after the approval, want a's and b's", got)
	}
}

// A daily limit on a grant narrowed to a scope counts the calls in that
// scope only: with "x" limited to one call a day and everything else
// allowed, a call outside "x" leaves x's one call to x1, and x2 asks.
// Counted over the whole capability, y1 used up x's limit and x1 asked.
func TestScopedDailyLimitCountsItsScope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := &gateConnector{scope: func(id string) string { return id[:1] }}
	b := gated(t, g)
	b.deploy("gated", gateWorkflow(`["y1", "x1", "x2"]`, 1))
	for _, gr := range []api.GrantView{{Capability: "gate.post", Scope: "x", Mode: "allow", DailyLimit: 1}, {Capability: "gate.post", Mode: "allow"}} {
		if err := b.e.Grant(ctx, "gated", gr); err != nil {
			t.Fatal(err)
		}
	}
	b.drain()
	if got := g.made(); strings.Join(got, " ") != "y1 x1" {
		t.Errorf("calls %v, want y1 and x1", got)
	}
	att, err := b.e.Attention(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(att) != 1 || !strings.Contains(att[0].Reason, "past its limit of 1 a day") {
		t.Errorf("attention = %+v, want x2 asked past x's limit", att)
	}
}

// A pause the person makes while a run is on its way to its call holds the
// call: run a is paused between its mutate and its call (where the call's
// scope is worked out), waits at its checkpoint, and makes its call once
// the workflow is resumed. Checked before the in_flight row's transaction,
// the pause came too late and the call went out on a paused workflow.
func TestPauseMeanwhileHoldsTheCall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var b *bundle
	var paused atomic.Bool
	g := &gateConnector{scope: func(string) string {
		if !paused.Swap(true) {
			if err := b.e.Pause(ctx, "gated"); err != nil {
				t.Error(err)
			}
		}
		return ""
	}}
	b = gated(t, g)
	b.deploy("gated", gateWorkflow(`["a"]`, 1))
	if err := b.e.Grant(ctx, "gated", api.GrantView{Capability: "gate.post", Mode: "allow"}); err != nil {
		t.Fatal(err)
	}
	b.drain()
	if got := g.made(); len(got) != 0 {
		t.Fatalf("calls %v made on a paused workflow", got)
	}
	if err := b.e.Resume(ctx, "gated"); err != nil {
		t.Fatal(err)
	}
	b.drain()
	if got := g.made(); strings.Join(got, " ") != "a" {
		t.Errorf("calls %v after the resume, want a's", got)
	}
}

// A grant revoked while a run is on its way to its call holds the call:
// a's call goes out under the grant; b's grant is revoked between b's step
// and b's call (where its scope is worked out), and b asks instead. The
// grants are read in the transaction that writes the call's in_flight
// row: carried from a's check, or from b's step, b's call went out.
func TestGrantRevokedMeanwhileHoldsTheCall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var b *bundle
	var revoked atomic.Bool
	g := &gateConnector{scope: func(id string) string {
		if id == "b" && !revoked.Swap(true) {
			if err := b.e.Grant(ctx, "gated", api.GrantView{Capability: "gate.post", Mode: "deny"}); err != nil {
				t.Error(err)
			}
		}
		return ""
	}}
	b = gated(t, g)
	b.deploy("gated", gateWorkflow(`["a", "b"]`, 1))
	if err := b.e.Grant(ctx, "gated", api.GrantView{Capability: "gate.post", Mode: "allow"}); err != nil {
		t.Fatal(err)
	}
	b.drain()
	if got := g.made(); strings.Join(got, " ") != "a" {
		t.Fatalf("calls %v, want a's only: b's grant was revoked before its call", got)
	}
	if ids := b.approvals(); len(ids) != 1 {
		t.Fatalf("approvals %v, want b's call held for the person", ids)
	}
}

// pausingGate is the gate connector whose call of an item may do
// something first (a pause), while the call is under way.
type pausingGate struct {
	gateConnector
	during func(id string)
}

func (p *pausingGate) Do(ctx context.Context, call connectors.Call) (any, error) {
	id, _ := call.Params["id"].(string)
	p.during(id)
	return p.gateConnector.Do(ctx, call)
}

// A pause made during one item's call holds the next item: a's call goes
// out and a parks at its checkpoint; b's run does not start until the
// workflow is resumed. The step reads the workflow's status afresh each
// time: carried from a's step, b ran on a paused workflow.
func TestPauseBetweenItemsHoldsTheNext(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var b *bundle
	var paused atomic.Bool
	g := &pausingGate{gateConnector: gateConnector{scope: func(string) string { return "" }}, during: func(id string) {
		if id == "a" && !paused.Swap(true) {
			if err := b.e.Pause(ctx, "gated"); err != nil {
				t.Error(err)
			}
		}
	}}
	b = gated(t, g)
	b.deploy("gated", gateWorkflow(`["a", "b"]`, 1))
	if err := b.e.Grant(ctx, "gated", api.GrantView{Capability: "gate.post", Mode: "allow"}); err != nil {
		t.Fatal(err)
	}
	b.drain()
	if got := g.made(); strings.Join(got, " ") != "a" {
		t.Fatalf("calls %v, want a's only: the workflow was paused during it", got)
	}
	var items []api.RunView // the consumer's runs for an item: not its deploy's
	for _, r := range b.runs("gated") {
		if r.Handler == "push" && r.Trigger == "event" {
			items = append(items, r)
		}
	}
	if len(items) != 1 {
		t.Fatalf("the consumer's runs %+v on a paused workflow, want a's one", items)
	}
	if err := b.e.Resume(ctx, "gated"); err != nil {
		t.Fatal(err)
	}
	b.drain()
	if got := g.made(); strings.Join(got, " ") != "a b" {
		t.Errorf("calls %v after the resume, want a's and b's", got)
	}
}

// uncertainGate is the gate connector whose call's outcome is unknown and
// whose check of it waits for the test.
type uncertainGate struct {
	gateConnector
	checking chan struct{} // closed when the check has started
	answered chan struct{} // the test closes it to let the check answer
}

func (u *uncertainGate) Do(ctx context.Context, call connectors.Call) (any, error) {
	u.gateConnector.Do(ctx, call)
	return nil, connectors.Errorf(connectors.Uncertain, "the connection dropped before the answer")
}

func (u *uncertainGate) Reconcile(ctx context.Context, call connectors.Call) (connectors.Verdict, any, error) {
	close(u.checking)
	select {
	case <-u.answered:
	case <-time.After(10 * time.Second):
	}
	return connectors.Applied, map[string]any{"ok": true}, nil
}

// The person's answer to "did it happen?" stands when the engine's own
// check of the same call ends after it: the check's verdict is dropped, and
// the workflow goes on from the answer. It blocked the workflow on an
// internal error ("the row moved meanwhile") right after the person
// answered.
func TestAnswerDuringACheckStands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := &uncertainGate{gateConnector: gateConnector{scope: func(string) string { return "" }},
		checking: make(chan struct{}), answered: make(chan struct{})}
	b := gated(t, u)
	b.deploy("gated", gateWorkflow(`["a"]`, 1))
	if err := b.e.Grant(ctx, "gated", api.GrantView{Capability: "gate.post", Mode: "allow"}); err != nil {
		t.Fatal(err)
	}
	b.drain() // the call, its outcome unknown; its check waits a little
	b.clock.Advance(time.Hour)
	drained := make(chan error, 1)
	go func() { drained <- b.e.Drain(ctx) }()
	select {
	case <-u.checking:
	case <-time.After(10 * time.Second):
		t.Fatal("the engine never checked the uncertain call")
	}
	muts, err := b.e.Mutations(ctx, "gated", "")
	if err != nil || len(muts) != 1 {
		t.Fatalf("mutations = %+v, %v", muts, err)
	}
	// the answer commits at once, then waits for the check to end; the
	// check ends once the answer is in
	resolved := make(chan error, 1)
	go func() { resolved <- b.e.Resolve(ctx, muts[0].ID, api.Happened) }()
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if m, err := b.e.Mutations(ctx, "gated", ""); err == nil && len(m) == 1 && m[0].Status != MutationNeedsReconcile {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the answer was not recorded")
		}
	}
	close(u.answered)
	if err := <-resolved; err != nil {
		t.Fatal(err)
	}
	if err := <-drained; err != nil {
		t.Fatal(err)
	}
	b.drain()
	if d := b.workflow("gated"); d.Block != nil {
		t.Errorf("blocked after the answer: %+v", *d.Block)
	}
	muts, _ = b.e.Mutations(ctx, "gated", "")
	if len(muts) != 1 || muts[0].Status != MutationApplied {
		t.Errorf("mutations = %+v, want the one applied, as answered", muts)
	}
}
