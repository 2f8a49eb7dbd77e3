package engine

// The user's answers as transitions (DESIGN.md §7.0, §7.1): each is one
// transaction, accepted only while its subject still waits for it, and
// recorded as an answer (history, never overwritten).

import (
	"context"
	"errors"
	"fmt"

	"keep/engine/api"
	"keep/engine/ledger"
	"keep/storage"
)

func (e *Engine) recordAnswer(ctx context.Context, tx *storage.Tx, workflowID int64, subject string, id int64, answer string) error {
	return tx.AddAnswer(ctx, storage.AnswerRecord{WorkflowID: workflowID, Subject: subject, SubjectID: id, Answer: answer,
		AnsweredBy: "user", CreatedAt: e.now()})
}

// tAnswerApproval checks that a mutation still waits for approval, records
// the answer and applies fn to it, in one transaction.
func (e *Engine) tAnswerApproval(ctx context.Context, mid int64, answer string,
	fn func(*storage.Tx, *storage.Workflow, *storage.Mutation, *storage.Run) error) (*storage.Workflow, error) {
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
		run, err := carrier(ctx, tx.Q, m)
		if err != nil {
			return err
		}
		if run.Status != RunPausedApproval {
			return refusedf("mutation %d was already answered", mid)
		}
		if w, err = tx.WorkflowByID(ctx, m.WorkflowID); err != nil {
			return err
		}
		if err := e.recordAnswer(ctx, tx, w.ID, "mutation", m.ID, answer); err != nil {
			return err
		}
		return fn(tx, w, m, run)
	})
	return w, err
}

// tApprove lets the carrying run go on to perform the captured call;
// always also allows, from now on, calls in the scope the approval card
// showed (alwaysScope): that file, that host, not the whole capability.
// wide allows what the grant that decided it covers (decidingGrant), or the
// whole capability when none did. A daily limit, if the deciding grant has
// one, stays: a limit is the person's own bound, and approving one call
// past it does not lift it. Other calls already waiting that the new grant
// allows are released with it (releaseAllowed).
func (e *Engine) tApprove(ctx context.Context, tx *storage.Tx, w *storage.Workflow, m *storage.Mutation, run *storage.Run, always, wide bool) error {
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
		scope := scopeOf(meth, paramsOf(m))
		g := storage.Grant{WorkflowID: w.ID, Capability: m.Connector + "." + m.Method, Mode: GrantAllow, Scope: scope}
		if best := decidingGrant(grants, ledgerGrant, g.Capability, scope); best != nil {
			// an allow grant asked only past its limit: it stays as it is
			g.DailyLimit = best.DailyLimit
			if wide || best.Mode == GrantAllow {
				g.Scope = best.Scope
			}
		} else if wide {
			g.Scope = ""
		}
		if err := tx.PutGrant(ctx, g, e.now()); err != nil {
			return err
		}
		put = true
	}
	d, err := e.led.Approve(ctx, tx, w, m, run)
	if err != nil {
		return err
	}
	if err := e.act(ctx, tx, w, d); err != nil {
		return err
	}
	if put {
		_, err = e.releaseAllowed(ctx, tx, w)
	}
	return err
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
		run, err := carrier(ctx, tx.Q, m)
		if err != nil || run.Status != RunPausedApproval {
			continue
		}
		if err := tx.AddAnswer(ctx, storage.AnswerRecord{WorkflowID: w.ID, Subject: "mutation", SubjectID: m.ID, Answer: "approve",
			AnsweredBy: "grant", CreatedAt: e.now()}); err != nil {
			return n, err
		}
		d, err := e.led.Approve(ctx, tx, w, m, run)
		if err != nil {
			return n, err
		}
		if err := e.act(ctx, tx, w, d); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// tResolve applies an answer to an uncertain mutation.
func (e *Engine) tResolve(ctx context.Context, mid int64, answer api.Answer) (*storage.Workflow, error) {
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
		cur, err := tx.WorkflowByID(ctx, m.WorkflowID)
		if err != nil {
			return none, err
		}
		*w = *cur
		run, err := carrier(ctx, tx.Q, m)
		if err != nil {
			return none, err
		}
		if err := e.recordAnswer(ctx, tx, w.ID, "mutation", m.ID, string(answer)); err != nil {
			return none, err
		}
		switch answer {
		case api.TryAgain, api.NotHappened:
			return e.led.Recheck(ctx, tx, w, m, run, answer == api.NotHappened)
		case api.Happened:
			return e.led.Settle(ctx, tx, w, m, run, ledger.MApplied, "user", nil, "", e.retry(w.TransientFailures+1))
		default:
			return e.led.Settle(ctx, tx, w, m, run, ledger.MSkip, "user", nil, "skipped by the user", e.retry(w.TransientFailures+1))
		}
	})
	return w, err
}

// tSkipEvents marks pending, unreserved events skipped, all or none.
func (e *Engine) tSkipEvents(ctx context.Context, ids []int64) ([]string, error) {
	var names []string
	err := e.db.Write(ctx, func(tx *storage.Tx) error {
		for _, id := range ids {
			ev, err := tx.EventByID(ctx, id)
			if errors.Is(err, storage.ErrNotFound) {
				return notFoundf("no event %d", id)
			}
			if err != nil {
				return err
			}
			if ev.Status != EventPending || ev.ReservedBy != 0 {
				what := string(ev.Status)
				if ev.ReservedBy != 0 {
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
			if err := e.recordAnswer(ctx, tx, w.ID, "event", id, "skip"); err != nil {
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
// kept and complete, and the input's other pending events become skipped.
func (e *Engine) tSkipInput(ctx context.Context, in *storage.Input) (*storage.Workflow, error) {
	w := new(storage.Workflow) // read in the transaction
	_, err := e.apply(ctx, e.db.Write, w, func(tx *storage.Tx) (ledger.Decision, error) {
		var none ledger.Decision
		now := e.now()
		cur, err := tx.WorkflowByID(ctx, in.WorkflowID)
		if err != nil {
			return none, err
		}
		*w = *cur
		holders, err := tx.RunsHoldingInput(ctx, in.ID)
		if err != nil {
			return none, err
		}
		var keep []int64
		for _, rid := range holders {
			run, err := tx.RunByID(ctx, rid)
			if err != nil {
				return none, err
			}
			var m *storage.Mutation
			if run.MutationID != 0 {
				if m, err = tx.MutationByID(ctx, run.MutationID); err != nil {
					return none, err
				}
			}
			if ledger.PastMutation(run) || (m != nil && m.Status != MutationAwaitingApproval && m.Status != MutationApproved && m.Status != MutationFailed) {
				keep = append(keep, rid) // it may have happened: it completes
				continue
			}
			if m != nil {
				if err := e.cancelReminder(tx, m); err != nil {
					return none, err
				}
				m.Error = "its input was skipped"
				if err := e.moveMutation(ctx, tx, w, m, ledger.MSkip, "user"); err != nil {
					return none, err
				}
			}
			run.ClosedAt, run.UpdatedAt = &now, now
			if run.Status == RunActive {
				run.Status = RunCrashed
			}
			run.Error = "abandoned: the user skipped its input"
			if err := e.moveRun(ctx, tx, w, run, "user:skip"); err != nil {
				return none, err
			}
			if _, err := tx.Release(ctx, rid, now); err != nil {
				return none, err
			}
			if w.BlockRunID == rid {
				if err := e.setBlock(ctx, tx, w, BlockNone, "", 0, nil); err != nil {
					return none, err
				}
			}
		}
		// only now is every run to keep known: their events are not skipped
		if err := e.led.SkipInputEvents(ctx, tx, in.ID, keep, now); err != nil {
			return none, err
		}
		if err := tx.MarkInputSkipped(ctx, in.ID, now); err != nil {
			return none, err
		}
		// the abandoned runs' events are back in the queue: every consumer
		// is marked once it commits
		return ledger.Decision{MarkConsumers: true}, e.recordAnswer(ctx, tx, w.ID, "input", in.ID, "skip")
	})
	return w, err
}
