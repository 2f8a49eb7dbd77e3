package engine

// The user's answers as transitions (DESIGN.md §7.0, §7.1): each is one
// transaction, accepted only while its subject still waits for it, and
// recorded as an answer (history, never overwritten).

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"keep/connectors"
	"keep/engine/api"
	"keep/engine/ledger"
	"keep/storage"
)

// recordAnswer appends the person's answer to the history; attempt is the
// attempt of the subject it answers (a mutation's: attempts), 0 for a
// subject without attempts.
func (e *Engine) recordAnswer(ctx context.Context, tx *storage.Tx, workflowID int64, subject string, id int64, attempt int, answer string) error {
	return tx.AddAnswer(ctx, storage.AnswerRecord{WorkflowID: workflowID, Subject: subject, SubjectID: id, Answer: answer,
		AnsweredBy: "user", Attempt: attempt, CreatedAt: e.now()})
}

// askedNow refuses an answer given to another attempt of m than the one
// m is asked about now: the same row is asked again when its call is sent
// again and is uncertain again, and an answer to the earlier question (a
// card shown before, an answer sent over the socket before the resend) is
// not one to this. attempt 0 names none: the answer is to m as it is
// asked now.
func askedNow(m *storage.Mutation, attempt int) error {
	if attempt != 0 && attempt != attempts(m) {
		return refusedf("mutation %d is asked about its attempt %d now, and the answer was to attempt %d: nothing was changed; answer the question as it is now (keep attention)",
			m.ID, attempts(m), attempt)
	}
	return nil
}

// tAnswerApproval checks that a mutation still waits for approval, records
// the answer and applies fn to it, in one transaction; fn's ledger move
// (Approve, Reject) finds the run that carries it and refuses one already
// answered. One db.Write, not apply: an approval's grant releases other
// waiting calls in the same transaction, each acted on as it is made.
func (e *Engine) tAnswerApproval(ctx context.Context, mid int64, attempt int, answer string,
	fn func(*storage.Tx, *storage.Workflow, *storage.Mutation) error) (*storage.Workflow, error) {
	var w *storage.Workflow
	err := e.db.Write(ctx, func(tx *storage.Tx) error {
		m, err := tx.MutationByID(ctx, mid)
		if errors.Is(err, storage.ErrNotFound) {
			return notFoundf("no mutation %d", mid)
		}
		if err != nil {
			return err
		}
		if m.Status != MutationAwaitingApproval {
			return refusedf("mutation %d is %s, not waiting for approval", mid, m.Status)
		}
		if err := askedNow(m, attempt); err != nil {
			return err
		}
		if w, err = tx.WorkflowByID(ctx, m.WorkflowID); err != nil {
			return err
		}
		if err := e.recordAnswer(ctx, tx, w.ID, "mutation", m.ID, attempts(m), answer); err != nil {
			return err
		}
		return fn(tx, w, m)
	})
	return w, err
}

// tApprove lets the carrying run go on to perform the captured call;
// always also allows, from now on, calls in the scope the approval card
// showed (alwaysGrants): that file, that host, not the whole capability.
// wide allows what the grant that decided it covers, or the whole
// capability when none did. Other calls already waiting that the new
// grants allow are released with them (releaseAllowed).
func (e *Engine) tApprove(ctx context.Context, tx *storage.Tx, w *storage.Workflow, m *storage.Mutation, always, wide bool) error {
	var put bool
	if always || wide {
		_, meth, err := e.reg.Lookup(m.Connector, m.Method)
		if err != nil {
			return err
		}
		grants, err := tx.Grants(ctx, w.ID)
		if err != nil {
			return err
		}
		capability := m.Connector + "." + m.Method
		add, denied := alwaysGrants(grants, w.ID, capability, scopeOf(meth, paramsOf(m)), meth.ScopeKind, wide)
		for _, g := range add {
			if err := tx.PutGrant(ctx, g, e.now()); err != nil {
				return err
			}
		}
		if len(denied) > 0 {
			e.log.Info("approved always, but not where a deny of yours holds: that call alone was allowed there",
				"workflow", w.Name, "mutation", m.ID, "capability", capability, "denied", denied)
		}
		put = len(add) > 0
	}
	d, err := e.led.Approve(ctx, tx, w, m)
	if err != nil {
		return err
	}
	if err := e.act(ctx, tx, w, d); err != nil { // act: tAnswerApproval's transaction goes on
		return err
	}
	if put {
		_, err = e.releaseAllowed(ctx, tx, w)
	}
	return err
}

// alwaysGrants are the grants an "approve always" of a call in scope
// stores: one allow for each part of it (a host, a path: a move's source
// and destination each), so that a grant covers what the card showed and
// nothing wider, and the narrowness of each is that of what it names
// (ledger.DecidingGrant), never that of a list. wide widens each to the
// scope of the grant that decided that part (the whole capability when
// none did). A daily limit of the deciding grant stays: a limit is the
// person's own bound, and approving one call past it does not lift it.
//
// No grant is stored for a part a deny of the person's covers: the
// approval answers this call, and an allow stored there would outrank,
// or overwrite, the deny for every call after it. Those parts are denied.
func alwaysGrants(grants []storage.Grant, workflowID int64, capability, scope string, kind connectors.ScopeKind, wide bool) (add []storage.Grant, denied []string) {
	for _, part := range connectors.ScopeParts(scope, kind) {
		if slices.ContainsFunc(grants, func(g storage.Grant) bool {
			return g.Capability == capability && g.Mode == GrantDeny && ledger.DenyMatches(g.Scope, part, kind)
		}) {
			denied = append(denied, part)
			continue
		}
		g := storage.Grant{WorkflowID: workflowID, Capability: capability, Mode: GrantAllow, Scope: part}
		if best := decidingGrant(grants, ledgerGrant, capability, part, kind); best != nil {
			// an allow grant asked only past its limit: it stays as it is
			g.DailyLimit = best.DailyLimit
			if wide || best.Mode == GrantAllow {
				g.Scope = best.Scope
			}
		} else if wide {
			g.Scope = ""
		}
		if !slices.ContainsFunc(add, func(a storage.Grant) bool { return a.Scope == g.Scope }) {
			add = append(add, g)
		}
	}
	return add, denied
}

// tReject skips a call waiting for approval (ledger.Reject): next gets
// {status:'skipped'}. act, not apply: it runs in tAnswerApproval's
// transaction.
func (e *Engine) tReject(ctx context.Context, tx *storage.Tx, w *storage.Workflow, m *storage.Mutation) error {
	d, err := e.led.Reject(ctx, tx, w, m)
	if err != nil {
		return err
	}
	return e.act(ctx, tx, w, d)
}

// releaseAllowed approves, in tx, each call of w still waiting for
// approval that w's grants now allow: a grant answers the calls already
// asking as it answers those to come, so allowing a capability does not
// leave its waiting calls to be approved one by one. Each release is
// recorded as an answer of the grant's. It returns how many it released.
func (e *Engine) releaseAllowed(ctx context.Context, tx *storage.Tx, w *storage.Workflow) (int, error) {
	open, err := tx.OpenMutations(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, m := range open {
		if m.WorkflowID != w.ID || m.Status != MutationAwaitingApproval {
			continue
		}
		_, meth, err := e.reg.Lookup(m.Connector, m.Method)
		if err != nil {
			continue // a connector no longer configured: the person answers it
		}
		mode, _, err := e.decide(ctx, tx.Q, w, m.Connector+"."+m.Method, scopeOf(meth, paramsOf(m)))
		if err != nil {
			return n, err
		}
		if mode != GrantAllow {
			continue
		}
		if waits, err := ledger.AwaitsApproval(ctx, tx.Q, m); err != nil || !waits {
			continue
		}
		if err := tx.AddAnswer(ctx, storage.AnswerRecord{WorkflowID: w.ID, Subject: "mutation", SubjectID: m.ID, Answer: "approve",
			AnsweredBy: "grant", Attempt: attempts(m), CreatedAt: e.now()}); err != nil {
			return n, err
		}
		d, err := e.led.Approve(ctx, tx, w, m)
		if err != nil {
			return n, err
		}
		if err := e.act(ctx, tx, w, d); err != nil { // act: the approval's transaction goes on
			return n, err
		}
		n++
	}
	return n, nil
}

// tResolve applies an answer to an uncertain mutation.
func (e *Engine) tResolve(ctx context.Context, mid int64, attempt int, answer api.Answer) (*storage.Workflow, error) {
	w := new(storage.Workflow) // read in the transaction
	_, err := e.apply(ctx, e.db.Write, w, func(tx *storage.Tx) (ledger.Decision, error) {
		var none ledger.Decision
		m, err := tx.MutationByID(ctx, mid)
		if errors.Is(err, storage.ErrNotFound) {
			return none, notFoundf("no mutation %d", mid)
		}
		if err != nil {
			return none, err
		}
		if m.Status != MutationNeedsReconcile && m.Status != MutationIndeterminate {
			return none, refusedf("mutation %d is %s: there is nothing uncertain to answer", mid, m.Status)
		}
		if err := askedNow(m, attempt); err != nil {
			return none, err
		}
		cur, err := tx.WorkflowByID(ctx, m.WorkflowID)
		if err != nil {
			return none, err
		}
		*w = *cur
		if err := e.recordAnswer(ctx, tx, w.ID, "mutation", m.ID, attempts(m), string(answer)); err != nil {
			return none, err
		}
		switch answer {
		case api.TryAgain, api.NotHappened:
			return e.led.Recheck(ctx, tx, w, m, answer == api.NotHappened)
		case api.Happened:
			return e.led.Settle(ctx, tx, w, m, ledger.MApplied, "user", nil, "", e.retry(w.TransientFailures+1))
		default:
			return e.led.Settle(ctx, tx, w, m, ledger.MSkip, "user", nil, "skipped by the user", e.retry(w.TransientFailures+1))
		}
	})
	return w, err
}

// tSkipEvents marks pending, unreserved events skipped, all or none.
func (e *Engine) tSkipEvents(ctx context.Context, ids []int64) ([]string, error) {
	var names []string
	err := e.db.Write(ctx, func(tx *storage.Tx) error {
		seen := map[int64]bool{}
		for _, id := range ids {
			if seen[id] {
				// named twice: the second would find the first's skip
				// and refuse the whole answer as if it were not pending
				continue
			}
			seen[id] = true
			ev, err := tx.EventByID(ctx, id)
			if errors.Is(err, storage.ErrNotFound) {
				return notFoundf("no event %d", id)
			}
			if err != nil {
				return err
			}
			if ev.Status != EventPending || ev.ReservedBy != 0 {
				// a consumed or skipped event keeps its last reservation:
				// its status says what it is
				what := string(ev.Status)
				if ev.Status == EventPending {
					what = fmt.Sprintf("reserved by run %d", ev.ReservedBy)
				}
				return refusedf("event %d is %s; only pending, unreserved events can be skipped", id, what)
			}
			if err := e.led.SkipPendingEvent(ctx, tx, id, e.now()); err != nil {
				return err
			}
			w, err := tx.WorkflowByID(ctx, ev.WorkflowID)
			if err != nil {
				return err
			}
			if err := e.recordAnswer(ctx, tx, w.ID, "event", id, 0, "skip"); err != nil {
				return err
			}
			names = append(names, w.Name)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return names, nil
}

// tSkipInput skips an input: runs holding its events that have not mutated
// are abandoned (their events released), runs that may have mutated are
// kept and complete, and the input's other pending events become skipped
// (ledger.SkipInput, which finds the runs). Once it commits every consumer
// is marked.
func (e *Engine) tSkipInput(ctx context.Context, in *storage.Input) (*storage.Workflow, error) {
	w := new(storage.Workflow) // read in the transaction
	_, err := e.apply(ctx, e.db.Write, w, func(tx *storage.Tx) (ledger.Decision, error) {
		cur, err := tx.WorkflowByID(ctx, in.WorkflowID)
		if err != nil {
			return ledger.Decision{}, err
		}
		*w = *cur
		// what the answer is to is read in the transaction that applies
		// it, so a second answer, or one to an input whose work is all
		// done, is refused rather than rewriting its history as skipped
		now, err := tx.InputByID(ctx, in.ID)
		if err != nil {
			return ledger.Decision{}, err
		}
		if now.SkippedAt != nil {
			return ledger.Decision{}, refusedf("input %d is already skipped", in.ID)
		}
		facts, err := tx.InputFacts(ctx, []int64{in.ID})
		if err != nil {
			return ledger.Decision{}, err
		}
		if st, _ := inputStatus(now, facts[in.ID], e.now(), e.pol.StaleAfter); st == api.InputDone {
			return ledger.Decision{}, refusedf("input %d is done: nothing it caused is pending or waits for you, so there is nothing to skip", in.ID)
		}
		d, err := e.led.SkipInput(ctx, tx, w, in.ID)
		if err != nil {
			return d, err
		}
		return d, e.recordAnswer(ctx, tx, w.ID, "input", in.ID, 0, "skip")
	})
	return w, err
}
