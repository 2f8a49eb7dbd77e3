package authoring

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"keep/connectors"
	"keep/engine"
	"keep/engine/api"
	"keep/engine/ledger"
	"keep/sandbox"
	"keep/storage"
)

// A dry run (`keep try`, the TUI's "what would it do") runs a workflow on a
// throw-away engine: a temporary database that starts empty, the real
// connectors for reads, and every mutation captured instead of performed.
// Its report is the ledger the run would have written.

// Try dry-runs a workflow file with the connectors of reg (reads are real;
// mutations are captured) on a database that starts empty. pol is the real
// policy: its default mutation mode says what a new workflow's mutations
// would need, unless opts carries a deployed workflow's grants.
func Try(ctx context.Context, reg *connectors.Registry, pol engine.Policy, fileName string, src []byte, opts api.TryOptions) (*api.TryReport, error) {
	return dryRun(ctx, reg, pol, opts, nil, func(te *engine.Engine) (*sandbox.Script, string, error) {
		sc, err := te.Validate(fileName, src)
		if err != nil {
			return nil, "", err
		}
		if err := checkProducer(sc, opts.Producer); err != nil {
			return nil, "", err
		}
		dep, err := te.Deploy(ctx, fileName, src, "")
		if err != nil {
			return nil, "", err
		}
		return sc, dep.Workflow, nil
	})
}

// DryRun implements API: what a deployed workflow's next runs would do, on
// a snapshot of the database (its events, state and grants as they are),
// with every producer due now. The database itself is only read.
func (a Author) DryRun(ctx context.Context, workflow string, opts api.TryOptions) (*api.TryReport, error) {
	return a.dryRunDeployed(ctx, workflow, "", nil, opts)
}

// TryChange is DryRun of src as the workflow's next version: a proposal's
// or keep edit's draft starts from the deployed workflow's events, state
// and grants. A workflow blocked on a failed run retries it, as an accepted
// repair would.
func (a Author) TryChange(ctx context.Context, workflow, fileName string, src []byte, opts api.TryOptions) (*api.TryReport, error) {
	return a.dryRunDeployed(ctx, workflow, fileName, src, opts)
}

func (a Author) dryRunDeployed(ctx context.Context, workflow, fileName string, src []byte, opts api.TryOptions) (*api.TryReport, error) {
	e := a.E
	sv, err := e.Script(ctx, workflow)
	if err != nil {
		return nil, err
	}
	d, err := e.Deployed(ctx, workflow)
	if err != nil {
		return nil, err
	}
	var cur *sandbox.Script
	if d != nil {
		cur = d.Script
	}
	if src == nil {
		fileName, src = sv.FileName, []byte(sv.Source)
	}
	if opts.Grants, err = e.Grants(ctx, workflow); err != nil {
		return nil, err
	}
	if opts.CallsToday, err = e.CallsToday(ctx, workflow, opts.Grants); err != nil {
		return nil, err
	}
	opts.Deployed = true
	snapshot := func(path string) error { return e.Backup(ctx, path) }
	return dryRun(ctx, e.Registry(), e.Policy(), opts, snapshot, func(te *engine.Engine) (*sandbox.Script, string, error) {
		sc, err := te.Validate(fileName, src)
		if err != nil {
			return nil, "", err
		}
		if !keepsName(sc, cur, workflow) {
			return nil, "", refusedf("the new script is named %q, not %q: a change may not rename the workflow", sc.Workflow.Name, workflow)
		}
		if err := checkProducer(sc, opts.Producer); err != nil {
			return nil, "", err
		}
		if fileName != sv.FileName || string(src) != sv.Source {
			if _, err := te.Deploy(ctx, fileName, src, workflow); err != nil {
				return nil, "", err
			}
			if w, err := te.Workflow(ctx, workflow); err == nil && w.Block != nil && w.Block.Kind == engine.BlockRepair {
				if err := te.Retry(ctx, workflow); err != nil {
					return nil, "", err
				}
			}
		}
		wfs, err := te.Workflows(ctx)
		if err != nil {
			return nil, "", err
		}
		for _, w := range wfs {
			if w.Name != workflow && w.Status == engine.WorkflowActive {
				if err := te.Pause(ctx, w.Name); err != nil {
					return nil, "", err
				}
			}
		}
		// Every call is captured whatever the grants say; which would wait
		// for approval is worked out from the real grants afterwards.
		for _, g := range opts.Grants {
			if err := te.Grant(ctx, workflow, api.GrantView{Capability: g.Capability, Scope: g.Scope, Mode: engine.GrantAllow}); err != nil {
				return nil, "", err
			}
		}
		for _, c := range sc.Capabilities {
			if err := te.Grant(ctx, workflow, api.GrantView{Capability: c, Mode: engine.GrantAllow}); err != nil {
				return nil, "", err
			}
		}
		return sc, workflow, te.DueNow(ctx, workflow, sc, "")
	})
}

func checkProducer(sc *sandbox.Script, producer string) error {
	if producer == "" || slices.ContainsFunc(sc.Workflow.Producers, func(p sandbox.Producer) bool { return p.Name == producer }) {
		return nil
	}
	var names []string
	for _, p := range sc.Workflow.Producers {
		names = append(names, p.Name)
	}
	return fmt.Errorf("try: workflow %s has no producer %q (it has: %s)", sc.Workflow.Name, producer, strings.Join(names, ", "))
}

// dryRun is the body of Try and DryRun: a temporary database (empty, or
// the snapshot writes it), an engine on it behind the capture, setup's
// workflow drained, and the report of what that did.
func dryRun(ctx context.Context, reg *connectors.Registry, pol engine.Policy, opts api.TryOptions, snapshot func(path string) error,
	setup func(te *engine.Engine) (*sandbox.Script, string, error)) (*api.TryReport, error) {
	if opts.Limit <= 0 {
		opts.Limit = api.DefaultTryLimit
	}
	dir, err := os.MkdirTemp("", "keep-try-")
	if err != nil {
		return nil, fmt.Errorf("try: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "try.db")
	startedFrom := "empty"
	if snapshot != nil {
		if err := snapshot(path); err != nil {
			return nil, fmt.Errorf("try: %w", err)
		}
		startedFrom = "from a copy of the database"
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := storage.Open(ctx, storage.Opts{Path: path, Logger: quiet})
	if err != nil {
		return nil, fmt.Errorf("try: %w", err)
	}
	defer db.Close()

	cap := &capture{limit: opts.Limit, readsOff: opts.CaptureReads}
	tpol := pol
	if tpol.HandlerTimeout == 0 {
		tpol = engine.DefaultPolicy()
	}
	tpol.DefaultMutationMode = engine.GrantAllow // approvals are worked out from the real grants below
	tpol.Repairs = 0
	te, err := engine.New(ctx, engine.Opts{DB: db, Connectors: cap.wrap(reg), Policy: tpol, Logger: quiet})
	if err != nil {
		return nil, fmt.Errorf("try: %w", err)
	}
	sc, name, err := setup(te)
	if err != nil {
		return nil, err
	}
	if snapshot == nil && opts.Producer != "" {
		if err := te.DueNow(ctx, name, sc, opts.Producer); err != nil {
			return nil, fmt.Errorf("try: %w", err)
		}
	}
	base, err := marksOf(ctx, te, name)
	if err != nil {
		return nil, fmt.Errorf("try: %w", err)
	}
	note, err := stillNote(ctx, te, name)
	if err != nil {
		return nil, fmt.Errorf("try: %w", err)
	}
	dctx, cancel := context.WithTimeout(ctx, DryRunTime(tpol))
	err = te.Drain(dctx)
	cancel()
	if err != nil && ctx.Err() == nil && dctx.Err() != nil {
		return nil, fmt.Errorf("try: the dry run did not end within %s: its runs were still going (do consumers publish to each other without end?)",
			DryRunTime(tpol))
	}
	if err != nil {
		return nil, fmt.Errorf("try: %w", err)
	}

	grants := opts.Grants
	if !opts.Deployed {
		for _, c := range sc.Capabilities {
			grants = append(grants, api.GrantView{Capability: c, Mode: pol.DefaultMutationMode})
		}
	}
	rep := &api.TryReport{Workflow: name, StartedFrom: startedFrom, Note: note, LimitReached: cap.reached(), Inputs: []api.TryInput{},
		Mutations: []api.TryMutation{}, Runs: []api.TryRun{}, Capabilities: []api.GrantView{},
		ApprovalsFrom: "the deployed workflow's grants", Manifest: sc.Manifest}
	rep.Reads, rep.Hosts = cap.readsSeen()
	if !opts.Deployed {
		rep.ApprovalsFrom = fmt.Sprintf("the default mode of a newly deployed workflow (%s)", pol.DefaultMutationMode)
	}
	for _, c := range sc.Capabilities {
		g := api.GrantView{Capability: c, Mode: engine.GrantAsk, Used: true}
		if best := ledger.DecidingGrant(grants, viewGrant, c, "", connectors.ScopeName); best != nil {
			g.Mode, g.Scope = best.Mode, best.Scope
		}
		rep.Capabilities = append(rep.Capabilities, g)
	}
	if err := fillReport(ctx, rep, te, reg, grants, opts.CallsToday, base); err != nil {
		return nil, fmt.Errorf("try: %w", err)
	}
	return rep, nil
}

// DryRunTime bounds a dry run's drain under pol: twice the time one run
// may take. A workflow whose consumers feed each other without end would
// otherwise never end its dry run, and a model can write one: keep mcp
// serve's try and propose, a repair's proposal (made on the workflow's own
// loop) and keep new would spin, and fill the temporary database, until
// their caller gave up.
func DryRunTime(pol engine.Policy) time.Duration { return 2 * pol.HandlerTimeout }

// stillNote says why a workflow would not run now, or "".
func stillNote(ctx context.Context, e *engine.Engine, name string) (string, error) {
	w, err := e.Workflow(ctx, name)
	switch {
	case err != nil:
		return "", err
	case w.Status != engine.WorkflowActive:
		return "the workflow is " + string(w.Status) + ": nothing runs until you resume it", nil
	case w.Block != nil:
		return "the workflow waits for you (" + w.Block.Reason + "): nothing new runs until that is answered", nil
	}
	return "", nil
}

// marks are the newest ids of a workflow's rows before a dry run drains
// it: what the report shows is what comes after.
type marks struct{ mutation, run, input int64 }

func marksOf(ctx context.Context, e *engine.Engine, name string) (marks, error) {
	var m marks
	muts, err := e.Mutations(ctx, name, "")
	if err != nil {
		return m, err
	}
	for _, x := range muts {
		m.mutation = max(m.mutation, idOf(x.ID))
	}
	runs, err := e.Runs(ctx, name, api.Page{Limit: 1})
	if err != nil {
		return m, err
	}
	ins, err := e.Inputs(ctx, name, api.Page{Limit: 1})
	if err != nil {
		return m, err
	}
	if len(runs) > 0 {
		m.run = idOf(runs[0].ID)
	}
	if len(ins) > 0 {
		m.input = idOf(ins[0].InputID)
	}
	return m, nil
}

func idOf(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// fillReport fills rep with what te's drain did after base.
func fillReport(ctx context.Context, rep *api.TryReport, te *engine.Engine, reg *connectors.Registry, grants []api.GrantView, callsToday map[string]int, base marks) error {
	inputs, err := te.Inputs(ctx, rep.Workflow, api.Page{Limit: 10000})
	if err != nil {
		return err
	}
	causes := map[string][]string{} // mutation id → input titles
	for i := len(inputs) - 1; i >= 0; i-- {
		in := inputs[i]
		for _, o := range in.Outputs {
			causes[o.MutationID] = append(causes[o.MutationID], in.Title)
		}
		if idOf(in.InputID) > base.input {
			rep.Inputs = append(rep.Inputs, api.TryInput{Source: in.Source, Type: in.Type, ExternalID: in.ExternalID, Title: in.Title})
		}
	}
	muts, err := te.Mutations(ctx, rep.Workflow, string(engine.MutationApplied)) // only a capture "applies" here
	if err != nil {
		return err
	}
	slices.SortFunc(muts, func(a, b api.MutationView) int { return a.CreatedAt.Compare(b.CreatedAt) })
	today := maps.Clone(callsToday)
	if today == nil {
		today = map[string]int{}
	}
	for _, m := range muts {
		if idOf(m.ID) <= base.mutation {
			continue
		}
		tm := api.TryMutation{Connector: m.Connector, Method: m.Method, Params: m.Params, Preview: m.Preview, Title: m.UITitle,
			RunID: m.RunID, CausedBy: orNone(causes[m.ID]), Approval: "allowed"}
		var params map[string]any
		_ = json.Unmarshal(m.Params, &params)
		scope, kind := "", connectors.ScopeName
		if _, meth, err := reg.Lookup(m.Connector, m.Method); err == nil && meth.Scope != nil {
			scope, kind = meth.Scope(params), meth.ScopeKind
		}
		capability := m.Connector + "." + m.Method
		if mode, why := engine.GrantModeOf(grants, capability, scope, kind, today); mode != engine.GrantAllow {
			tm.NeedsApproval, tm.Approval = true, why
		} else {
			// made: it counts against every limit that covers it
			for _, g := range grants {
				if g.DailyLimit > 0 && g.Capability == capability && ledger.CoversAPart(g.Scope, scope, kind) {
					today[api.LimitKey(g.Capability, g.Scope)]++
				}
			}
		}
		rep.Mutations = append(rep.Mutations, tm)
	}
	runs, err := te.Runs(ctx, rep.Workflow, api.Page{Limit: 10000})
	if err != nil {
		return err
	}
	for i := len(runs) - 1; i >= 0; i-- {
		if idOf(runs[i].ID) <= base.run {
			continue
		}
		tr, err := te.Trace(ctx, runs[i].ID)
		if err != nil {
			return err
		}
		rep.Runs = append(rep.Runs, api.TryRun{RunView: runs[i], Trace: orNone(tr)})
	}
	evs, err := te.Events(ctx, rep.Workflow, api.EventFilter{Status: string(engine.EventPending), Limit: 10000})
	if err != nil {
		return err
	}
	rep.PendingEvents = len(evs)
	return nil
}

// viewGrant names a grant of the API for the ledger's rule.
func viewGrant(g *api.GrantView) (string, string, bool) {
	return g.Capability, g.Scope, g.Mode == engine.GrantDeny
}

func orNone[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// capture stands between a dry run and the real connectors: reads pass
// through, mutations are counted and answered as if done, never performed.
type capture struct {
	limit    int
	readsOff bool // CaptureReads
	mu       sync.Mutex
	n        int
	over     bool
	reads    []api.TryRead
	hosts    map[string]bool
}

// read records a read and the hosts its arguments name.
func (c *capture) read(conn string, call connectors.Call, performed bool) {
	args, _ := json.Marshal(call.Params)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads = append(c.reads, api.TryRead{Connector: conn, Method: call.Method, Args: args, Performed: performed})
	if c.hosts == nil {
		c.hosts = map[string]bool{}
	}
	for _, h := range sandbox.HostsIn(string(args)) {
		c.hosts[h] = true
	}
}

func (c *capture) readsSeen() ([]api.TryRead, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	hosts := []string{}
	for h := range c.hosts {
		hosts = append(hosts, h)
	}
	slices.Sort(hosts)
	return append([]api.TryRead{}, c.reads...), hosts
}

// errTryLimit stops a dry run at its limit: transient, so the workflow
// backs off and the drain ends with the call unperformed.
var errTryLimit = errors.New("the dry run's limit of captured mutations is reached")

// take counts one more captured mutation, and says which it is, unless
// the limit is reached.
func (c *capture) take() (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n >= c.limit {
		c.over = true
		return 0, false
	}
	c.n++
	return c.n, true
}

func (c *capture) reached() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.over
}

// wrap returns a registry with the same names, aliases, methods and input
// sources as reg, each connector behind the capture.
func (c *capture) wrap(reg *connectors.Registry) *connectors.Registry {
	out := connectors.NewRegistry()
	out.ShareHeld(reg.Held())
	aliases := map[string][]string{}
	var order []string
	for _, name := range reg.Names() {
		conn, _ := reg.Get(name)
		if conn.Name() != name {
			aliases[conn.Name()] = append(aliases[conn.Name()], name)
			continue
		}
		order = append(order, name)
	}
	for _, name := range order {
		conn, _ := reg.Get(name)
		out.Register(capturing{Connector: conn, c: c}, aliases[name]...)
	}
	for _, s := range reg.Sources() {
		out.AddSource(s.Name, s.Types...)
	}
	return out
}

// capturing is one connector behind the capture. It hides the connector's
// other interfaces (Reconciler, InputSource): nothing captured needs
// reconciling, and the sources are copied by wrap.
type capturing struct {
	connectors.Connector
	c *capture
}

func (k capturing) Do(ctx context.Context, call connectors.Call) (any, error) {
	var meth connectors.Method
	for _, m := range k.Connector.Methods() {
		if m.Name == call.Method {
			meth = m
		}
	}
	// only what says it is a read is performed: a method not found (an MCP
	// server's tools changed since the lookup) or of a kind unknown here
	// is refused, never made for real in a dry run
	switch kind := meth.Kind; {
	case kind == connectors.Read && k.c.readsOff:
		k.c.read(k.Connector.Name(), call, false)
		return []any{}, nil
	case kind == connectors.ReadByID && k.c.readsOff:
		k.c.read(k.Connector.Name(), call, false)
		return nil, nil
	case kind == connectors.Read || kind == connectors.ReadByID:
		k.c.read(k.Connector.Name(), call, true)
		return k.Connector.Do(ctx, call)
	case kind != connectors.Mutate:
		return nil, connectors.Errorf(connectors.Logic, "%s has no method %q a dry run knows (of kind %q): not made", k.Connector.Name(), call.Method, kind)
	}
	n, ok := k.c.take()
	if !ok {
		return nil, &connectors.Error{Class: connectors.Transient, Err: errTryLimit}
	}
	return dryAnswer(meth, call.Params, n), nil
}
