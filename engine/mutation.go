package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"time"

	"keep/connectors"
	"keep/engine/ledger"
	"keep/sandbox"
	"keep/storage"
)

// startMutation takes over the script's terminal call: checks every local
// precondition, asks for approval where the grants say so, and otherwise
// writes the in_flight row durably before performing the call.
//
// h, when not nil, is the run's prepared checkpoint, still to be written:
// the in_flight row takes it along, and any other way out writes it first.
func (e *Engine) startMutation(ctx context.Context, ws *wfState, w *storage.Workflow, run *storage.Run, call *sandbox.MutationCall, tr *trace, h *held) error {
	_, m, err := e.reg.Lookup(call.Connector, call.Method)
	var params []byte
	if err != nil {
		err = connectors.Errorf(connectors.Logic, "%v", err)
	} else if params, err = json.Marshal(call.Params); err != nil {
		err = connectors.Errorf(connectors.Logic, "mutation parameters: %v", err)
	} else {
		// what the running version's manifest does not name is not made,
		// nor a call holding a field its method does not declare
		err = e.checkCall(ctx, run.WorkflowID, run.ScriptVersion, call.Connector, call.Method, sandbox.PhaseMutate, call.Params)
	}
	if err != nil {
		if done, cerr := e.checkpoint(ctx, w, run, h, tr, true); done || cerr != nil {
			return cerr
		}
		return e.failRun(ctx, w, run, err, tr)
	}
	now := e.now()
	mut := &storage.Mutation{RunID: run.ID, WorkflowID: w.ID, Connector: call.Connector, Method: call.Method,
		Params: params, Preview: preview(m, call.Params), UITitle: uiTitle(run.PrepareResult), CreatedAt: now, UpdatedAt: now}
	cc := &callCheck{capability: call.Connector + "." + call.Method, scope: scopeOf(m, call.Params), inHand: ws.hand.inHand(run.ID)}
	var ask *askError
	switch err := e.tInFlight(ctx, w, run, mut, tr, h, cc); {
	case errors.Is(err, errNotNow):
		// it waits at its checkpoint: resumed, or the block lifted, it goes
		// on from there (continueRun)
		ws.markDirty(run.Handler)
		_, err := e.checkpoint(ctx, w, run, h, tr, false)
		return err
	case errors.As(err, &ask):
		if done, err := e.checkpoint(ctx, w, run, h, tr, true); done || err != nil {
			return err
		}
		return e.tAwaitApproval(ctx, w, run, mut, ask.reason, tr)
	case errors.Is(err, storage.ErrNotReservable):
		return e.notReservable(ctx, w, run, err, tr)
	case err != nil:
		return err // keep's own error: the run stays at preparing, and is recovered
	}
	return e.perform(ctx, ws, w, run, mut, tr)
}

// callCheck is what a new mutation's call must pass before it goes out:
// the workflow active (not paused), for a run in hand of a concurrent
// consumer no block of another run's, and the workflow's grants. It is
// decided in the transaction that writes the call's in_flight row
// (mayCall), so the row is written under what it was decided on: runs at
// once cannot each find one call left under a daily limit and all make it,
// nor a call go out under a pause, a block or a revoked grant that was
// committed after it was read.
type callCheck struct {
	capability, scope string
	inHand            bool
}

// askError is a callCheck the grants did not pass: the call waits for the
// person, for reason.
type askError struct{ reason string }

func (a *askError) Error() string { return "the call waits for approval: " + a.reason }

// errNotNow: the workflow was paused, or (for a run in hand of a
// concurrent consumer) waits on another run's block — its approval, a
// check, a failure — when the run came to its call. It makes no call then.
var errNotNow = errors.New("the workflow is paused or waits on another run")

// mayCall decides cc inside the transaction q reads: nil lets the call go
// out; errNotNow or an *askError hold it back.
// The status, the block and the grants are read in one statement.
func (e *Engine) mayCall(ctx context.Context, q storage.Q, w *storage.Workflow, cc *callCheck) error {
	cur, err := q.CallReads(ctx, w.ID)
	if err != nil {
		return err
	}
	if cur.Status != WorkflowActive || cc.inHand && cur.BlockKind != BlockNone {
		return errNotNow
	}
	mode, reason, err := e.decideWith(ctx, q, w, cur.Grants, cc.capability, cc.scope)
	if err != nil {
		return err
	}
	if mode != GrantAllow {
		return &askError{reason: reason}
	}
	return nil
}

// perform makes the external call of an in_flight mutation and records its
// outcome. Neither a pause nor a shutdown interrupts it: only the handler
// deadline does, and a deadline during the call is uncertain, not failed.
func (e *Engine) perform(ctx context.Context, ws *wfState, w *storage.Workflow, run *storage.Run, mut *storage.Mutation, tr *trace) error {
	var params map[string]any
	_ = json.Unmarshal(mut.Params, &params)
	// checked again: a call approved, or to be sent again after it was
	// not sent, may have been taken in by a keep that did not refuse
	// undeclared fields; it is refused, not sent
	conn, _, err := e.reg.Resolve(mut.Connector, mut.Method, params)
	if err != nil {
		return e.tMutationOutcome(ctx, w, run, mut, nil, err, tr)
	}
	callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.pol.HandlerTimeout)
	defer cancel()
	// A call whose effect has only to reach the disk hands its sync over:
	// it runs alongside what follows, and no sync of the ledger, which
	// will record the outcome, starts before it has succeeded.
	syncLater := func(sync func() error) { e.db.SyncAfter(sync) }
	start := time.Now()
	res, err := e.reg.Held().Scrub(connectors.Do(callCtx, conn, connectors.Call{Method: mut.Method, Params: params, IdempotencyKey: mut.IdempotencyKey, SyncLater: syncLater}, true))
	tr.call("mutate", mut.Connector, mut.Method, connectors.Shown(conn, mut.Method, params), res, time.Since(start), err)
	if err != nil && callCtx.Err() != nil && connectors.ClassOf(err) != connectors.Uncertain {
		err = &connectors.Error{Class: connectors.Uncertain, Err: fmt.Errorf("the handler deadline passed during the call: %w", err)}
	}
	if err == nil && e.emptyNext(ctx, run) && !e.parked(ctx, w) {
		// no next to run: the outcome and the run's commit are one
		return e.tAppliedCommitted(ctx, w, run, mut, res, tr)
	}
	if err == nil {
		// overlap.go: next runs while the outcome commits, with the
		// call's result
		defer e.startNext(ctx, w, run, ledger.AppliedResult(mustJSON(res)))()
		runtime.Gosched() // next gets this core, the outcome's commit the next one free (runConsumer)
	}
	if err := e.tMutationOutcome(ctx, w, run, mut, res, err, tr); err != nil {
		return err
	}
	if run.Phase == PhaseMutated && run.Status == RunActive && !e.parked(ctx, w) {
		return e.continueRun(ctx, ws, w, run)
	}
	return nil
}

// reconcile asks the connector whether an uncertain mutation happened.
func (e *Engine) reconcile(ctx context.Context, ws *wfState, w *storage.Workflow, mut *storage.Mutation) error {
	conn, _, err := e.reg.Lookup(mut.Connector, mut.Method)
	verdict, result := connectors.Unknown, any(nil)
	var why string
	rec, ok := conn.(connectors.Reconciler)
	switch {
	case err != nil:
		why = err.Error()
	case !ok:
		why = "the " + mut.Connector + " connector cannot check whether this happened"
		return e.tIndeterminate(ctx, w, mut, why)
	default:
		var params map[string]any
		_ = json.Unmarshal(mut.Params, &params)
		rctx, cancel := context.WithTimeout(ctx, e.pol.HandlerTimeout)
		verdict, result, err = connectors.Reconcile(rctx, rec, mut.Connector, connectors.Call{Method: mut.Method, Params: params, IdempotencyKey: mut.IdempotencyKey})
		cancel()
		result, err = e.reg.Held().Scrub(result, err)
		if errors.Is(err, connectors.ErrCannotCheck) {
			why := "this call offers no way to check whether it happened"
			if err != connectors.ErrCannotCheck {
				why = err.Error() // the connector says why it cannot tell
			}
			return e.tIndeterminate(ctx, w, mut, why)
		}
		if err != nil {
			why = err.Error()
			verdict = connectors.Unknown
		}
	}
	err = e.tReconciled(ctx, ws, w, mut, verdict, result, why)
	if errors.Is(err, storage.ErrConflict) {
		// the mutation moved while the check ran — the person answered
		// "did it happen?" meanwhile: their answer stands, the verdict is
		// dropped (nothing of it was written), and the workflow goes on
		// from the answer
		e.log.Info("a check's verdict came after the mutation moved on", "workflow", w.Name, "mutation", mut.ID, "verdict", verdict)
		ws.poke()
		return nil
	}
	return err
}

// decide applies the workflow's grants, read through q, to a mutation
// (DESIGN.md §7.4): allow performs it; anything else waits for the user
// with a reason.
func (e *Engine) decide(ctx context.Context, q storage.Q, w *storage.Workflow, capability, scope string) (mode GrantMode, reason string, err error) {
	grants, err := q.Grants(ctx, w.ID)
	if err != nil {
		return "", "", err
	}
	return e.decideWith(ctx, q, w, grants, capability, scope)
}

// decideWith is decide with w's grants already read; a daily limit is
// counted through q. The rule is the ledger's (ledger.DecideGrant).
func (e *Engine) decideWith(ctx context.Context, q storage.Q, w *storage.Workflow, grants []storage.Grant, capability, scope string) (mode GrantMode, reason string, err error) {
	v, err := ledger.DecideGrant(grants, capability, scope, e.reg.ScopeKindOf(capability), func(g *storage.Grant) (int, error) {
		return e.callsToday(ctx, q, w.ID, capability, g.Scope)
	})
	return v.Mode, v.Why, err
}

// callsToday counts the workflow's calls of capability in the last day
// that lie in scope, as a grant's daily limit counts them: a grant
// narrowed to a scope (a host, a path) counts only the calls it covers a
// part of (ledger.CoversAPart: a move out of its folder, a send to its
// domain among others), worked out from each call's parameters by the
// connector.
func (e *Engine) callsToday(ctx context.Context, q storage.Q, workflowID int64, capability, scope string) (int, error) {
	conn, meth, ok := e.reg.Capability(capability)
	if !ok {
		return 0, nil
	}
	since := e.now().Add(-24 * time.Hour)
	if scope == "" {
		return q.CountMutationsSince(ctx, workflowID, conn, meth, since)
	}
	_, m, err := e.reg.Lookup(conn, meth)
	if err != nil {
		return 0, err
	}
	all, err := q.MutationParamsSince(ctx, workflowID, conn, meth, since)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, raw := range all {
		var params map[string]any
		_ = json.Unmarshal(raw, &params)
		if ledger.CoversAPart(scope, scopeOf(m, params), m.ScopeKind) {
			n++
		}
	}
	return n, nil
}

// decidingGrant is the ledger's rule
// (engine/ledger/grants.go), named here for the callers of the engine.
func decidingGrant[G any](grants []G, of func(*G) (capability, scope string, deny bool), capability, scope string, kind connectors.ScopeKind) *G {
	return ledger.DecidingGrant(grants, of, capability, scope, kind)
}

func ledgerGrant(g *storage.Grant) (string, string, bool) {
	return g.Capability, g.Scope, g.Mode == GrantDeny
}

func scopeOf(m connectors.Method, params map[string]any) string {
	if m.Scope == nil {
		return ""
	}
	return m.Scope(params)
}

func preview(m connectors.Method, params map[string]any) string {
	if m.Preview != nil {
		return m.Preview(params)
	}
	return clip(jsonText(params), 300)
}

func uiTitle(prepared json.RawMessage) string {
	var pr struct {
		UI struct {
			Title string `json:"title"`
		} `json:"ui"`
	}
	_ = json.Unmarshal(prepared, &pr)
	return pr.UI.Title
}

// emptyNext says whether run's consumer has an empty next (sandbox/noop.go).
func (e *Engine) emptyNext(ctx context.Context, run *storage.Run) bool {
	if run.HandlerType != "consumer" {
		return false
	}
	sc, err := e.script(ctx, run.WorkflowID, run.ScriptVersion)
	if err != nil {
		return false
	}
	c, ok := consumerNamed(sc, run.Handler)
	return ok && c.EmptyNext
}

// continueRun carries an active run on from its phase: a prepare that was
// interrupted runs again, an approved mutation is performed, an applied or
// skipped one goes on to next.
func (e *Engine) continueRun(ctx context.Context, ws *wfState, w *storage.Workflow, run *storage.Run) error {
	tr := e.newTrace()
	if run.HandlerType == "consumer" && run.Phase == PhaseMutating && run.MutationID != 0 {
		// the call is the host's from here: its script is not needed
		m, err := e.db.Read().MutationByID(ctx, run.MutationID)
		if err != nil {
			return fmt.Errorf("run %d: %w", run.ID, err)
		}
		if m.Status != MutationApproved {
			return fmt.Errorf("run %d is active in mutating with its mutation %s", run.ID, m.Status)
		}
		if err := e.tInFlight(ctx, w, run, m, tr, nil, nil); err != nil {
			return err
		}
		return e.perform(ctx, ws, w, run, m, tr)
	}
	sc, err := e.script(ctx, w.ID, run.ScriptVersion)
	if err != nil {
		// A run its script cannot carry on (a newer keep may refuse what an
		// older one loaded) fails, as one whose handler is gone does: left
		// active, every step would continue it and fail again, at once and
		// without end. Failed, its events are disposed of by its phase and
		// the person's retry runs it under the version they deploy.
		return e.failRun(ctx, w, run, fmt.Errorf("run %d: %w", run.ID, err), tr)
	}
	if run.HandlerType == "producer" {
		for _, p := range sc.Workflow.Producers {
			if p.Name == run.Handler && run.Phase == PhasePreparing {
				return e.producerPhase(ctx, ws, w, sc, p, run)
			}
		}
		return e.failRun(ctx, w, run, fmt.Errorf("run %d: producer %q cannot continue from phase %s in script version %d", run.ID, run.Handler, run.Phase, run.ScriptVersion), tr)
	}
	c, ok := consumerNamed(sc, run.Handler)
	if !ok {
		return e.failRun(ctx, w, run, fmt.Errorf("run %d: handler %q is not in script version %d", run.ID, run.Handler, run.ScriptVersion), tr)
	}
	switch run.Phase {
	case PhasePreparing:
		// prepare has no side effects: it runs again under the same record
		return e.preparePhase(ctx, ws, w, sc, c, run, tr)
	case PhaseMutating:
		// mutate was interrupted before any call (a call is above): it is
		// a function of the prepare result, so it runs again
		return e.mutatePhase(ctx, ws, w, sc, c, run, tr)
	case PhaseMutated, PhaseEmitting:
		return e.nextPhase(ctx, ws, w, sc, c, run, tr)
	case PhasePrepared:
		// parked after prepare (a pause or a stop): go on to mutate
		return e.mutatePhase(ctx, ws, w, sc, c, run, tr)
	}
	return fmt.Errorf("run %d: cannot continue from phase %s", run.ID, run.Phase)
}
