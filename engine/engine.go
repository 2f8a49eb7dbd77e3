// Package engine is keep's host: it deploys workflows, schedules and runs
// their handlers, performs their mutations, reconciles, asks for approval
// and recovers after a restart. Which move a run, event, mutation or
// workflow may make, and the only writes of a status, are engine/ledger's;
// the engine asks it for each move and acts on the decision it returns
// (machine.go), in the transactions of transitions*.go, ops.go and
// deploy.go. Dry runs, drafts, proposals made and repairs asked of a model
// are engine/authoring's, above this package: the run loop reaches them
// only through the Repairer it is given (Opts.Repairer). The API front
// ends hold, and its types, are engine/api's.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"keep/connectors"
	"keep/connectors/accounts"
	"keep/engine/api"
	"keep/engine/bus"
	"keep/engine/config"
	"keep/engine/ledger"
	"keep/engine/reference"
	"keep/sandbox"
	"keep/storage"
)

// Policy is DESIGN.md §8: every number a config key.
type Policy struct {
	MinProducerInterval time.Duration
	MinWake, MaxWake    time.Duration
	BackoffBase         time.Duration
	BackoffMax          time.Duration
	TransientRetries    int
	ReconcileAttempts   int
	Repairs             int
	HandlerTimeout      time.Duration
	StaleAfter          time.Duration
	DefaultMutationMode GrantMode
	ApprovalReminder    time.Duration
	CrashLimit          int
	Limits              sandbox.Limits
	// MaxOpenProposals and MaxProposalBytes bound proposals (proposal.go);
	// zero: the defaults.
	MaxOpenProposals, MaxProposalBytes int
}

// PolicyFrom turns the config file's [policy] into a Policy.
func PolicyFrom(p config.Policy) Policy {
	limits := sandbox.DefaultLimits()
	limits.WallTime = p.HandlerTimeout.Duration
	return Policy{
		MinProducerInterval: p.MinProducerInterval.Duration,
		MinWake:             p.MinWake.Duration,
		MaxWake:             p.MaxWake.Duration,
		BackoffBase:         p.BackoffBase.Duration,
		BackoffMax:          p.BackoffMax.Duration,
		TransientRetries:    p.TransientRetries,
		ReconcileAttempts:   p.ReconcileAttempts,
		Repairs:             p.Repairs,
		HandlerTimeout:      p.HandlerTimeout.Duration,
		StaleAfter:          p.StaleAfter.Duration,
		DefaultMutationMode: p.DefaultMutationMode,
		ApprovalReminder:    p.ApprovalReminder.Duration,
		CrashLimit:          p.CrashLimit,
		Limits:              limits,
		MaxOpenProposals:    p.MaxOpenProposals,
		MaxProposalBytes:    p.MaxProposalBytes,
	}
}

// DefaultPolicy is DESIGN.md §8's defaults.
func DefaultPolicy() Policy { return PolicyFrom(config.Default().Policy) }

// Opts configures New.
type Opts struct {
	DB         *storage.DB
	Connectors *connectors.Registry
	// Policy defaults to DefaultPolicy() when zero.
	Policy Policy
	// Now is the clock; defaults to time.Now. Scheduling tests inject one.
	Now    func() time.Time
	Logger *slog.Logger
	// Repairer, if set, is handed logic failures (DESIGN.md §7.2, repair.go):
	// engine/authoring's; nil, and a failure stays with the person.
	Repairer Repairer
	// Events receives the journaled notifications of DESIGN.md §9 (the bus);
	// nil: they only reach Subscribe.
	Events EventSink
	// Accounts, if set, are listed by Accounts (auth.go).
	Accounts *accounts.Store
	// ConfigDigest names the config the engine runs on (Info.Config).
	ConfigDigest string
	// Subscribers are the front ends the engine tells of changes; nil: its
	// own. A host passes the one its notify connector and notify_user
	// already tell, so those reach the same screens.
	Subscribers *Subscribers
}

// EventSink is how the engine hands a journaled notification to the bus,
// inside the transaction that made the change.
type EventSink interface {
	EmitTx(tx *storage.Tx, topic, source string, payload any, correlationID string) (int64, error)
	ScheduleAtTx(tx *storage.Tx, delay time.Duration, topic, source string, payload any, correlationID string) (int64, error)
	CancelTx(tx *storage.Tx, id int64) (bool, error)
	Subscribe(topic string, h bus.Handler)
	Wake()
}

// Repairer is handed a logic failure within the workflow's budget of
// repairs in a row (DESIGN.md §7.2) and answers with the proposal it filed
// for the person: engine/authoring's, which asks a model for a new script.
// The engine is given one at construction (Opts.Repairer); without one a
// logic failure stays with the person (repair.go).
type Repairer interface {
	Repair(ctx context.Context, e *Engine, f FailedRun) (*api.ProposalView, error)
}

// FailedRun is what a repairer is told of a logic failure.
type FailedRun struct {
	RunID                      int64
	Workflow, FileName, Script string // the version that failed
	Error, Handler, Phase      string
	// Trace is the end of the run's trace, a line an entry.
	Trace []string
}

// Engine is the host. The zero value is not usable; call New.
type Engine struct {
	db     *storage.DB
	reg    *connectors.Registry
	pol    Policy
	now    func() time.Time
	log    *slog.Logger
	repair Repairer
	events EventSink
	// accounts: see auth.go
	accounts *accounts.Store
	// configDigest: Info.Config
	configDigest string

	keyPrefix string
	inputSeq  atomic.Int64

	// idleStep, when set (tests), is called after a scheduler step that
	// found nothing to do, before the loop decides whether it is idle.
	idleStep func(ws *wfState)
	// armed, when set (tests), is called when a loop has armed its timer
	// for d, before it waits on it.
	armed func(ws *wfState, d time.Duration)
	// clockCheck, when set (tests), replaces the interval at which
	// watchClock looks for a jump of the wall clock (scheduler.go).
	clockCheck time.Duration

	// proposalMu: one decision on a proposal at a time (proposal.go)
	proposalMu sync.Mutex
	// beforeAccept, when set (tests), is called once AcceptProposal has
	// read the proposal and its workflow, before the transaction that
	// accepts it.
	beforeAccept func()

	mu      sync.Mutex
	wfs     map[int64]*wfState
	scripts map[scriptKey]*sandbox.Script

	subs *Subscribers
	// statuses: each workflow's status as last committed (parked); this
	// engine is the database's one writer and moveWorkflow its one mover.
	statuses sync.Map       // int64 → WorkflowStatus
	led      *ledger.Ledger // the one writer of statuses

	runCtx  context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	started bool
	folders *folders // watch.go: while started
}

type scriptKey struct {
	workflow int64
	version  int
}

// ErrRefused is returned when an operation is not allowed in the current
// state (a run is active, a prompt was already answered). The CLI maps it
// to exit code 3.
var ErrRefused = ledger.ErrRefused

// ErrNotFound is returned for an unknown workflow, run, mutation, event or input.
var ErrNotFound = errors.New("not found")

func refusedf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrRefused}, args...)...)
}

func notFoundf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrNotFound}, args...)...)
}

// Info implements API.
func (e *Engine) Info() api.Info {
	return api.Info{Mode: "in-process", DBPath: e.db.Path(), PID: os.Getpid(), Config: e.configDigest}
}

// wfState is the in-memory scheduler state of one workflow (chapter 16
// "In-Memory State"): lost on restart and recovered from the database.
type wfState struct {
	id     int64
	wake   chan struct{}
	stepMu sync.Mutex // held while a step runs

	mu     sync.Mutex
	dirty  map[string]bool // consumers with new events since their last run
	queued map[string]bool // producers queued by "run now"
	// why: handlers a person made due (a deploy: a new producer, every
	// consumer; run-now: the producers), and why, which their next run
	// reports as its trigger
	why     map[string]string
	running bool // a handler of this workflow executes now

	hand hand // concurrent.go: runs of concurrent consumers under way
	// ahead: by concurrent consumer, the prepare started for its next run;
	// aheadScore: how those went (ahead.go)
	ahead      map[string]*prepareAhead
	aheadScore map[string]aheadScore
}

func (e *Engine) state(id int64) *wfState {
	e.mu.Lock()
	defer e.mu.Unlock()
	ws, ok := e.wfs[id]
	if !ok {
		ws = &wfState{id: id, wake: make(chan struct{}, 1), dirty: map[string]bool{}, queued: map[string]bool{}, why: map[string]string{}}
		e.wfs[id] = ws
	}
	return ws
}

func (ws *wfState) markDirty(consumers ...string) {
	ws.mu.Lock()
	for _, c := range consumers {
		ws.dirty[c] = true
	}
	ws.mu.Unlock()
}

func (ws *wfState) isDirty(c string) bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.dirty[c]
}

func (ws *wfState) clearDirty(c string) {
	ws.mu.Lock()
	delete(ws.dirty, c)
	ws.mu.Unlock()
}

// triggerOf is the trigger a run of handler started now reports: what a
// person did to make it due (deploy, run-now), else the scheduler's own
// reason (schedule, event, wakeAt).
func (ws *wfState) triggerOf(handler, reason string) string {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if why := ws.why[handler]; why != "" {
		return why
	}
	return reason
}

// madeDue records that a person's why (deploy, run-now) made handlers due.
func (ws *wfState) madeDue(why string, handlers ...string) {
	ws.mu.Lock()
	for _, h := range handlers {
		ws.why[h] = why
	}
	ws.mu.Unlock()
}

func (ws *wfState) ranFor(handler string) {
	ws.mu.Lock()
	delete(ws.why, handler)
	ws.mu.Unlock()
}

func (ws *wfState) isQueued(p string) bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.queued[p]
}

func (ws *wfState) setRunning(v bool) {
	ws.mu.Lock()
	ws.running = v
	ws.mu.Unlock()
}

func (ws *wfState) isRunning() bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.running || ws.hand.count() > 0
}

// poke wakes the workflow's scheduler goroutine without blocking.
func (ws *wfState) poke() {
	select {
	case ws.wake <- struct{}{}:
	default:
	}
}

// script returns the compiled script of a workflow version, loading it from
// the database once per version.
func (e *Engine) script(ctx context.Context, workflowID int64, version int) (*sandbox.Script, error) {
	return e.scriptIn(ctx, e.db.Read(), workflowID, version)
}

// scriptIn is script reading through q: inside a read transaction (the
// scheduler's step), which holds its pool connection, a read on the pool
// would need another.
func (e *Engine) scriptIn(ctx context.Context, q storage.Q, workflowID int64, version int) (*sandbox.Script, error) {
	key := scriptKey{workflowID, version}
	e.mu.Lock()
	sc, ok := e.scripts[key]
	e.mu.Unlock()
	if ok {
		return sc, nil
	}
	v, err := q.ScriptVersion(ctx, workflowID, version)
	if err != nil {
		return nil, fmt.Errorf("script version %d: %w", version, err)
	}
	o := e.loadOptions()
	o.WatchFolder = nil // checked at deploy; a folder gone since is the rescan's (watch.go)
	sc, err = sandbox.Load(v.FileName, []byte(v.Source), o)
	if err != nil {
		return nil, fmt.Errorf("script version %d no longer loads: %w", version, err)
	}
	// the manifest stored with the version is what it was approved with
	// (host_manifest.go); one stored before manifests is named now
	if m, err := sandbox.ParseManifest(v.Manifest); err != nil {
		return nil, fmt.Errorf("script version %d: %w", version, err)
	} else if m != nil {
		sc.Manifest, sc.Capabilities = m, m.Names(true)
	}
	e.mu.Lock()
	e.scripts[key] = sc
	e.mu.Unlock()
	return sc, nil
}

// scriptLoaded says whether version's script of the workflow is loaded.
func (e *Engine) scriptLoaded(workflowID int64, version int) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.scripts[scriptKey{workflowID, version}]
	return ok
}

func (e *Engine) loadOptions() sandbox.LoadOptions {
	return reference.LoadOptions(e.reg, e.pol.MinProducerInterval)
}
