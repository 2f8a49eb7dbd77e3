package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"keep/connectors"
	"keep/storage"
)

// The user's operations (DESIGN.md §7.1). Each is a call into the
// transitions module, accepted only while the thing it answers waits.

func (e *Engine) workflowByName(ctx context.Context, name string) (*storage.Workflow, error) {
	w, err := e.db.Read().WorkflowByName(ctx, name)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, notFoundf("no workflow %q", name)
	}
	return w, err
}

// RunNow queues every producer (chapter 16 "Manual Trigger"): each is made
// due now, durably, so the queue survives this process.
func (e *Engine) RunNow(ctx context.Context, name string) error {
	w, err := e.workflowByName(ctx, name)
	if err != nil {
		return err
	}
	if w.Status != "active" {
		return refusedf("workflow %s is %s; resume it first", name, w.Status)
	}
	ws := e.state(w.ID)
	if ws.isRunning() {
		return refusedf("workflow %s has a run in progress; try again when it finishes", name)
	}
	if _, err := e.db.Read().ActiveRun(ctx, w.ID); err == nil {
		return refusedf("workflow %s has a run in progress; try again when it finishes", name)
	}
	sc, err := e.script(ctx, w.ID, w.Version)
	if err != nil {
		return err
	}
	now := e.now()
	err = e.db.Write(ctx, func(tx *storage.Tx) error {
		for _, p := range sc.Workflow.Producers {
			if err := tx.SetNextRun(ctx, w.ID, p.Name, &now); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		ws.poke()
	}
	return err
}

// Pause stops scheduling; the run in hand reaches its next checkpoint and a
// mutation in flight completes. It is never a failure.
func (e *Engine) Pause(ctx context.Context, name string) error {
	w, err := e.workflowByName(ctx, name)
	if err != nil {
		return err
	}
	if w.Status == "paused" {
		return refusedf("workflow %s is already paused", name)
	}
	err = e.db.Write(ctx, func(tx *storage.Tx) error {
		if err := tx.SetWorkflowStatus(ctx, w.ID, "paused", e.now()); err != nil {
			return err
		}
		return e.journal(tx, w, "workflow.paused", map[string]any{"text": w.Name + " paused"})
	})
	if err == nil {
		e.notify(NoteWorkflowPaused, name, name+" paused")
	}
	return err
}

// Resume sets the workflow active again and clears a block the user can
// clear (a give-up after retries, a failure waiting for repair, a refused
// credential the user has since fixed). Approvals and uncertain mutations
// are cleared only by answering them.
func (e *Engine) Resume(ctx context.Context, name string) error {
	w, err := e.workflowByName(ctx, name)
	if err != nil {
		return err
	}
	mutation, err := blockingMutation(ctx, e.db.Read(), w)
	if err != nil {
		return err
	}
	clearable := userClearable(w, mutation)
	if w.Status == "active" && !clearable {
		return refusedf("workflow %s is not paused and has nothing the user can clear", name)
	}
	err = e.db.Write(ctx, func(tx *storage.Tx) error {
		if err := tx.SetWorkflowStatus(ctx, w.ID, "active", e.now()); err != nil {
			return err
		}
		return e.journal(tx, w, "workflow.resumed", map[string]any{"text": w.Name + " resumed"})
	})
	if err != nil {
		return err
	}
	if clearable {
		if err := e.unblockByUser(ctx, w); err != nil {
			return err
		}
	}
	e.notify(NoteWorkflowResumed, name, name+" resumed")
	e.state(w.ID).poke()
	return nil
}

// Retry answers a blocked workflow: the failed run is retried per the
// disposition rules (forward at emitting after its mutation, else afresh).
func (e *Engine) Retry(ctx context.Context, name string) error {
	w, err := e.workflowByName(ctx, name)
	if err != nil {
		return err
	}
	mutation, err := blockingMutation(ctx, e.db.Read(), w)
	if err != nil {
		return err
	}
	if !userClearable(w, mutation) {
		if w.BlockKind == "" {
			return refusedf("workflow %s is not blocked; nothing to retry", name)
		}
		return refusedf("workflow %s waits on %s: answer that instead (keep attention)", name, w.BlockKind)
	}
	if err := e.unblockByUser(ctx, w); err != nil {
		return err
	}
	e.state(w.ID).poke()
	return nil
}

func (e *Engine) unblockByUser(ctx context.Context, w *storage.Workflow) error {
	if err := e.tUnblock(ctx, w, "retry", true); err != nil {
		return err
	}
	e.markAllConsumers(ctx, e.state(w.ID), w)
	e.notify(NoteChanged, w.Name, w.Name+": retrying")
	return nil
}

// Approve performs a mutation waiting for approval: the host makes the
// captured call; mutate is not run again. always also turns the grant to allow.
func (e *Engine) Approve(ctx context.Context, id string, always bool) error {
	answer := "approve"
	if always {
		answer = "approve-always"
	}
	return e.answerApproval(ctx, id, answer, func(ctx context.Context, tx *storage.Tx, w *storage.Workflow, m *storage.Mutation, run *storage.Run) error {
		if always {
			_, meth, err := e.reg.Lookup(m.Connector, m.Method)
			if err != nil {
				return err
			}
			cap := m.Connector + "." + m.Method
			scope := ""
			grants, err := tx.Grants(ctx, w.ID)
			if err != nil {
				return err
			}
			callScope := scopeOf(meth, paramsOf(m))
			for _, g := range grants {
				if g.Capability == cap && scopeMatches(g.Scope, callScope) && len(g.Scope) > len(scope) {
					scope = g.Scope
				}
			}
			if err := tx.PutGrant(ctx, storage.Grant{WorkflowID: w.ID, Capability: cap, Scope: scope, Mode: "allow"}, e.now()); err != nil {
				return err
			}
		}
		run.Status, run.UpdatedAt = "active", e.now()
		if err := tx.UpdateRun(ctx, run); err != nil {
			return err
		}
		return e.setBlock(ctx, tx, w, "", "", 0, nil)
	})
}

// Reject skips a mutation waiting for approval: next gets {status:'skipped'}
// and the run's events become skipped.
func (e *Engine) Reject(ctx context.Context, id string) error {
	return e.answerApproval(ctx, id, "reject", func(ctx context.Context, tx *storage.Tx, w *storage.Workflow, m *storage.Mutation, run *storage.Run) error {
		return e.settleTx(ctx, tx, w, m, run, "skipped", "user", nil, "rejected by the user")
	})
}

func (e *Engine) answerApproval(ctx context.Context, id, answer string,
	fn func(context.Context, *storage.Tx, *storage.Workflow, *storage.Mutation, *storage.Run) error) error {
	mid, err := parseID("mutation", id)
	if err != nil {
		return err
	}
	var w *storage.Workflow
	err = e.db.Write(ctx, func(tx *storage.Tx) error {
		m, err := tx.MutationByID(ctx, mid)
		if errors.Is(err, storage.ErrNotFound) {
			return notFoundf("no mutation %s", id)
		}
		if err != nil {
			return err
		}
		if m.Status != "awaiting_approval" {
			return refusedf("mutation %s is %s, not waiting for approval", id, m.Status)
		}
		run, err := carrier(ctx, tx.Q, m)
		if err != nil {
			return err
		}
		if run.Status != "paused:approval" {
			return refusedf("mutation %s was already answered", id)
		}
		if w, err = tx.WorkflowByID(ctx, m.WorkflowID); err != nil {
			return err
		}
		if err := tx.AddAnswer(ctx, storage.AnswerRecord{WorkflowID: w.ID, Subject: "mutation", SubjectID: m.ID, Answer: answer,
			AnsweredBy: "user", CreatedAt: e.now()}); err != nil {
			return err
		}
		return fn(ctx, tx, w, m, run)
	})
	if err != nil {
		return err
	}
	e.notify(NoteChanged, w.Name, "mutation "+id+": "+answer)
	e.state(w.ID).poke()
	return nil
}

// Resolve answers an uncertain mutation (needs_reconcile or indeterminate).
func (e *Engine) Resolve(ctx context.Context, id string, answer Answer) error {
	mid, err := parseID("mutation", id)
	if err != nil {
		return err
	}
	switch answer {
	case TryAgain, Happened, NotHappened, SkipIt:
	default:
		return fmt.Errorf("unknown answer %q: use try-again, happened, not-happened or skip", answer)
	}
	var w *storage.Workflow
	err = e.db.Write(ctx, func(tx *storage.Tx) error {
		m, err := tx.MutationByID(ctx, mid)
		if errors.Is(err, storage.ErrNotFound) {
			return notFoundf("no mutation %s", id)
		}
		if err != nil {
			return err
		}
		if m.Status != "needs_reconcile" && m.Status != "indeterminate" {
			return refusedf("mutation %s is %s: there is nothing uncertain to answer", id, m.Status)
		}
		if w, err = tx.WorkflowByID(ctx, m.WorkflowID); err != nil {
			return err
		}
		run, err := carrier(ctx, tx.Q, m)
		if err != nil {
			return err
		}
		now := e.now()
		if err := tx.AddAnswer(ctx, storage.AnswerRecord{WorkflowID: w.ID, Subject: "mutation", SubjectID: m.ID, Answer: string(answer),
			AnsweredBy: "user", CreatedAt: now}); err != nil {
			return err
		}
		switch answer {
		case TryAgain:
			m.Status, m.ReconcileAttempts, m.NextAttemptAt, m.UpdatedAt = "needs_reconcile", 0, &now, now
			if err := tx.UpdateMutation(ctx, m); err != nil {
				return err
			}
			return e.setBlock(ctx, tx, w, "reconciliation", "checking again whether "+titleOr(m)+" happened", run.ID, nil)
		case Happened:
			return e.settleTx(ctx, tx, w, m, run, "applied", "user", nil, "")
		case NotHappened:
			return e.settleTx(ctx, tx, w, m, run, "failed", "user", nil, "the user said it did not happen")
		default:
			return e.settleTx(ctx, tx, w, m, run, "skipped", "user", nil, "skipped by the user")
		}
	})
	if err != nil {
		return err
	}
	ws := e.state(w.ID)
	if answer == NotHappened {
		e.markAllConsumers(ctx, ws, w)
	}
	e.notify(NoteChanged, w.Name, "mutation "+id+": "+string(answer))
	ws.poke()
	return nil
}

// SkipEvents marks pending, unreserved events skipped.
func (e *Engine) SkipEvents(ctx context.Context, ids []string) error {
	var names []string
	err := e.db.Write(ctx, func(tx *storage.Tx) error {
		for _, s := range ids {
			id, err := parseID("event", s)
			if err != nil {
				return err
			}
			ev, err := tx.EventByID(ctx, id)
			if errors.Is(err, storage.ErrNotFound) {
				return notFoundf("no event %s", s)
			}
			if err != nil {
				return err
			}
			if ev.Status != "pending" || ev.ReservedBy != 0 {
				what := ev.Status
				if ev.ReservedBy != 0 {
					what = fmt.Sprintf("reserved by run %d", ev.ReservedBy)
				}
				return refusedf("event %s is %s; only pending, unreserved events can be skipped", s, what)
			}
			if err := tx.SkipEvent(ctx, id, e.now()); err != nil {
				return err
			}
			w, err := tx.WorkflowByID(ctx, ev.WorkflowID)
			if err != nil {
				return err
			}
			if err := tx.AddAnswer(ctx, storage.AnswerRecord{WorkflowID: w.ID, Subject: "event", SubjectID: id, Answer: "skip",
				AnsweredBy: "user", CreatedAt: e.now()}); err != nil {
				return err
			}
			names = append(names, w.Name)
		}
		return nil
	})
	for _, n := range names {
		e.notify(NoteChanged, n, "events skipped")
	}
	return err
}

// SkipInput skips an input and the work it caused (DESIGN.md §7.1): its
// pending events become skipped; a run holding one that has not mutated is
// abandoned and its other events released; work past its mutation completes.
func (e *Engine) SkipInput(ctx context.Context, id string) error {
	iid, err := parseID("input", id)
	if err != nil {
		return err
	}
	in, err := e.db.Read().InputByID(ctx, iid)
	if errors.Is(err, storage.ErrNotFound) {
		return notFoundf("no input %s", id)
	}
	if err != nil {
		return err
	}
	if in.SkippedAt != nil {
		return refusedf("input %s is already skipped", id)
	}
	ws := e.state(in.WorkflowID)
	if ws.isRunning() {
		return refusedf("a run of this workflow is in progress; try again in a moment")
	}
	var w *storage.Workflow
	err = e.db.Write(ctx, func(tx *storage.Tx) error {
		now := e.now()
		if w, err = tx.WorkflowByID(ctx, in.WorkflowID); err != nil {
			return err
		}
		holders, err := tx.RunsHoldingInput(ctx, iid)
		if err != nil {
			return err
		}
		var keep []int64
		for _, rid := range holders {
			run, err := tx.RunByID(ctx, rid)
			if err != nil {
				return err
			}
			var m *storage.Mutation
			if run.MutationID != 0 {
				if m, err = tx.MutationByID(ctx, run.MutationID); err != nil {
					return err
				}
			}
			if pastMutation(run) || (m != nil && m.Status != "awaiting_approval" && m.Status != "failed") {
				keep = append(keep, rid) // it may have happened: it completes
				continue
			}
			if m != nil {
				m.Status, m.ResolvedBy, m.UpdatedAt, m.Error = "skipped", "user", now, "its input was skipped"
				if err := tx.UpdateMutation(ctx, m); err != nil {
					return err
				}
			}
			run.ClosedAt, run.UpdatedAt = &now, now
			if run.Status == "active" || run.Status == "paused:approval" {
				run.Status, run.Error = "crashed", "abandoned: the user skipped its input"
			}
			if err := tx.UpdateRun(ctx, run); err != nil {
				return err
			}
			if err := tx.SkipEventsOfInput(ctx, iid, keep, now); err != nil {
				return err
			}
			if _, err := tx.Release(ctx, rid, now); err != nil {
				return err
			}
			if w.BlockRunID == rid {
				if err := e.setBlock(ctx, tx, w, "", "", 0, nil); err != nil {
					return err
				}
			}
		}
		if err := tx.SkipEventsOfInput(ctx, iid, keep, now); err != nil {
			return err
		}
		if err := tx.MarkInputSkipped(ctx, iid, now); err != nil {
			return err
		}
		return tx.AddAnswer(ctx, storage.AnswerRecord{WorkflowID: w.ID, Subject: "input", SubjectID: iid, Answer: "skip",
			AnsweredBy: "user", CreatedAt: now})
	})
	if err != nil {
		return err
	}
	e.markAllConsumers(ctx, ws, w)
	e.notify(NoteChanged, w.Name, "input skipped: "+in.Title)
	ws.poke()
	return nil
}

// Grant sets a workflow's grant for a capability (DESIGN.md §7.4).
func (e *Engine) Grant(ctx context.Context, name string, g GrantView) error {
	w, err := e.workflowByName(ctx, name)
	if err != nil {
		return err
	}
	conn, meth, ok := strings.Cut(g.Capability, ".")
	if !ok {
		return fmt.Errorf("capability %q: write it as connector.method, e.g. files.write", g.Capability)
	}
	_, m, err := e.reg.Lookup(conn, meth)
	if err != nil {
		return fmt.Errorf("capability %q: %v", g.Capability, err)
	}
	if m.Kind != connectors.Mutate {
		return fmt.Errorf("capability %q is a read; reads of configured accounts are allowed by default", g.Capability)
	}
	if g.Mode == "" {
		g.Mode = "allow"
	}
	switch g.Mode {
	case "allow", "ask", "deny":
	default:
		return fmt.Errorf("mode %q: use allow, ask or deny", g.Mode)
	}
	if g.DailyLimit < 0 {
		return fmt.Errorf("daily limit %d may not be negative", g.DailyLimit)
	}
	err = e.db.Write(ctx, func(tx *storage.Tx) error {
		return tx.PutGrant(ctx, storage.Grant{WorkflowID: w.ID, Capability: g.Capability, Scope: g.Scope, Mode: g.Mode, DailyLimit: g.DailyLimit}, e.now())
	})
	if err == nil {
		e.notify(NoteChanged, name, "grant "+g.Capability+" "+g.Mode)
	}
	return err
}
