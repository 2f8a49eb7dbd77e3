package ledger

// Transitions the engine makes inside one of its transactions, each a few
// moves that go together: a run's failure, an uncertain mutation settled,
// a block lifted, a run taken over by its retry or by recovery. Each
// returns the decision the engine acts on; none calls back into it.

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"keep/storage"
)

// ResultSkipped is what a run's mutate step sees of a skipped mutation.
var ResultSkipped = json.RawMessage(`{"status":"skipped"}`)

// PastMutation: the run's phase says its mutation was applied or skipped
// (chapter 16: phase >= mutated).
func PastMutation(run *storage.Run) bool {
	return run.Phase.Rank() >= storage.PhaseMutated.Rank()
}

// Fail records run, its error set on it, as a failure of class c (DESIGN.md
// §7.2): the run's status is the class's (Class.RunStatus), a logic failure
// asks for a repair (Decision.Repair), and its events are disposed of: after the mutation
// (applied or skipped) they stay reserved for a retry at emitting; before
// it, they are released for a fresh prepare. A transient failure waits a
// back-off (p.Resend) until the workflow's failures pass p.Limit. w must
// have been read in tx.
func (l *Ledger) Fail(ctx context.Context, tx *storage.Tx, w *storage.Workflow, run *storage.Run, c Class, p Retry) (Decision, error) {
	now := l.now()
	behind, err := waitsBehind(ctx, tx, w, run, c)
	if err != nil {
		return Decision{}, err
	}
	run.Status = c.RunStatus()
	if behind && !PastMutation(run) {
		run.ClosedAt = &now
		Ended(run)
	}
	d, err := l.MoveRun(ctx, tx, w, run, ByScheduler, "")
	if err != nil {
		return d, err
	}
	if behind && PastMutation(run) && run.HandlerType == "consumer" {
		_, r, err := l.RetryForward(ctx, tx, run, "retry", ByScheduler)
		d.add(r)
		if err != nil {
			return d, err
		}
	}
	if c == ClassLogic {
		d.Repair = run
	}
	if !PastMutation(run) {
		if _, err := tx.Release(ctx, run.ID, now); err != nil {
			return d, err
		}
	}
	reason := run.Handler + ": " + run.Error
	var retryAt *time.Time
	if c == ClassTransient {
		w.TransientFailures++
		if err := tx.SetCounters(ctx, w.ID, w.TransientFailures, w.Repairs); err != nil {
			return d, err
		}
		if w.TransientFailures <= p.Limit {
			t := now.Add(p.Resend)
			retryAt = &t
		} else {
			reason = fmt.Sprintf("gave up after %d attempts: %s", w.TransientFailures, reason)
		}
	}
	b, err := l.MoveBlock(ctx, tx, w, c.BlockKind(), reason, run.ID, retryAt)
	d.add(b)
	if err != nil {
		return d, err
	}
	d.journal("run.failed", map[string]any{"run": run.ID, "handler": run.Handler, "error": run.Error, "class": string(c)})
	return d, nil
}

// Settle resolves an open mutation (ev is MApplied, MFailed or MSkip; by
// the reconciler or the user) and moves the run that carries it on
// (Carrier): applied or skipped, the run resumes at next; failed, its
// events are released, the run ends, and the consumers are to be marked so
// a fresh run prepares again — after a back-off (p.Resend) when the
// reconciler found the call did not go through. w must have been read in tx.
func (l *Ledger) Settle(ctx context.Context, tx *storage.Tx, w *storage.Workflow, mut *storage.Mutation, ev MutationEvent, by string, result json.RawMessage, why string, p Retry) (Decision, error) {
	run, err := Carrier(ctx, tx.Q, mut)
	if err != nil {
		return Decision{}, err
	}
	return l.settle(ctx, tx, w, mut, run, ev, by, result, why, p)
}

// Reject is the person's "no" to a call waiting for their approval: the
// mutation is skipped and the run that carries it, still waiting
// (answered already: refused), resumes at next with {status:'skipped'}.
// w must have been read in tx.
func (l *Ledger) Reject(ctx context.Context, tx *storage.Tx, w *storage.Workflow, m *storage.Mutation) (Decision, error) {
	run, err := waiting(ctx, tx.Q, m)
	if err != nil {
		return Decision{}, err
	}
	// a skip never waits a back-off: no retry policy applies
	return l.settle(ctx, tx, w, m, run, MSkip, "user", nil, "rejected by the user", Retry{})
}

// settle is Settle on run, the one that carries mut.
func (l *Ledger) settle(ctx context.Context, tx *storage.Tx, w *storage.Workflow, mut *storage.Mutation, run *storage.Run, ev MutationEvent, by string, result json.RawMessage, why string, p Retry) (Decision, error) {
	now := l.now()
	cancel := mut.ReminderID // the prompt is answered
	mut.NextAttemptAt, mut.ReminderID = nil, 0
	if why != "" {
		mut.Error = why
	}
	if ev == MApplied {
		// the outcome, not the error of the call that left it uncertain
		// (the trace keeps that)
		mut.Result, mut.Error = result, ""
	}
	d, err := l.MoveMutation(ctx, tx, w, mut, ev, by)
	d.cancel(cancel)
	if err != nil {
		return d, err
	}
	switch mut.Status {
	case storage.MutationApplied:
		run.Phase, run.Status, run.MutationResult = storage.PhaseMutated, storage.RunActive, AppliedResult(result)
	case storage.MutationSkipped:
		run.Phase, run.Status, run.MutationResult = storage.PhaseMutated, storage.RunActive, ResultSkipped
	case storage.MutationFailed:
		run.ClosedAt = &now
		Ended(run)
		if run.Error == "" {
			run.Error = "the mutation did not happen: " + why
		}
		if _, err := tx.Release(ctx, run.ID, now); err != nil {
			return d, err
		}
		d.MarkConsumers = true
	}
	r, err := l.MoveRun(ctx, tx, w, run, by+":"+string(ev), "")
	d.add(r)
	if err != nil {
		return d, err
	}
	block := func(kind storage.BlockKind, reason string, runID int64, retryAt *time.Time) (Decision, error) {
		b, err := l.MoveBlock(ctx, tx, w, kind, reason, runID, retryAt)
		d.add(b)
		return d, err
	}
	if mut.Status == storage.MutationFailed && by == "reconciler" {
		// the call failed on the way (a reset, a 5xx): the fresh attempt
		// waits a back-off and counts toward the transient limit, so a
		// service that always fails cannot make us spin
		w.TransientFailures++
		if err := tx.SetCounters(ctx, w.ID, w.TransientFailures, w.Repairs); err != nil {
			return d, err
		}
		if w.TransientFailures > p.Limit {
			return block(storage.BlockTransient, fmt.Sprintf("gave up after %d attempts: %s did not go through", w.TransientFailures, Title(mut)), run.ID, nil)
		}
		t := now.Add(p.Resend)
		return block(storage.BlockTransient, Title(mut)+" did not go through; trying again later", run.ID, &t)
	}
	return block(storage.BlockNone, "", run.ID, nil)
}

// RetryForward starts the retry of a run that failed after its mutation:
// a new run at emitting with the prepare and mutation results copied, the
// old run's events taken over (chapter 16 phase reset). The retry runs the
// workflow's current script: after a repair, the fix.
func (l *Ledger) RetryForward(ctx context.Context, tx *storage.Tx, old *storage.Run, trigger, by string) (*storage.Run, Decision, error) {
	now := l.now()
	w, err := tx.WorkflowByID(ctx, old.WorkflowID)
	if err != nil {
		return nil, Decision{}, err
	}
	old.ClosedAt, old.UpdatedAt = &now, now
	d, err := l.MoveRun(ctx, tx, w, old, by, "")
	if err != nil {
		return nil, d, err
	}
	r := &storage.Run{WorkflowID: old.WorkflowID, Handler: old.Handler, HandlerType: old.HandlerType, ScriptVersion: w.Version,
		RetryOf: old.ID, MutationID: old.MutationID, Trigger: trigger, Phase: storage.PhaseEmitting, Status: storage.RunActive,
		PrepareResult: old.PrepareResult, MutationResult: old.MutationResult, CreatedAt: now, UpdatedAt: now}
	if _, err := l.MoveRun(ctx, tx, w, r, by, ""); err != nil {
		return nil, d, err
	}
	return r, d, tx.TakeOver(ctx, old.ID, r.ID, now)
}

// Unblock lifts w's block, its cause over (a back-off that ran out, a
// repair, the user's retry): a run whose mutation is still open (waiting
// to be sent again, checked, or asked about) keeps it and takes the block
// back, due at once; a run past its mutation is retried forward;
// otherwise the failed run is closed (its events were released when it
// failed). resetCounters (the user's answer) clears the retry counters.
// Once it commits every consumer is marked: triggers accumulated while the
// workflow was blocked. w must have been read in tx.
func (l *Ledger) Unblock(ctx context.Context, tx *storage.Tx, w *storage.Workflow, trigger string, resetCounters bool) (Decision, error) {
	d := Decision{MarkConsumers: true}
	by := ByScheduler + ":" + trigger // a back-off ran out, a repair
	if resetCounters {
		by = "user:" + trigger // the user's retry, resume or sign-in
	}
	if w.BlockRunID != 0 {
		run, err := tx.RunByID(ctx, w.BlockRunID)
		if err != nil {
			return d, err
		}
		if run.ClosedAt == nil && run.Status != storage.RunActive {
			open, err := openMutation(ctx, tx.Q, run)
			if err != nil {
				return d, err
			}
			if open != nil {
				// What the block stood over (a call waiting to be sent
				// again, a check, a question) is not over with it: the run
				// stays open, and lifting the block hands it back to the
				// run (queuedBlock) — closed, its call and events would be
				// left with no owner. The person asked for now: what waits
				// on a timer of ours is due at once.
				if open.Status == storage.MutationInFlight || open.Status == storage.MutationNeedsReconcile {
					now := l.now()
					open.NextAttemptAt = &now
					if err := l.TouchMutation(ctx, tx, open); err != nil {
						return d, err
					}
				}
			} else if PastMutation(run) && run.HandlerType == "consumer" {
				_, r, err := l.RetryForward(ctx, tx, run, trigger, by)
				d.add(r)
				if err != nil {
					return d, err
				}
			} else {
				now := l.now()
				run.ClosedAt, run.UpdatedAt = &now, now
				Ended(run)
				r, err := l.MoveRun(ctx, tx, w, run, by, "")
				d.add(r)
				if err != nil {
					return d, err
				}
			}
		}
	}
	if resetCounters {
		w.TransientFailures, w.Repairs = 0, 0
		if err := tx.SetCounters(ctx, w.ID, 0, 0); err != nil {
			return d, err
		}
	}
	b, err := l.MoveBlock(ctx, tx, w, storage.BlockNone, "", 0, nil)
	d.add(b)
	return d, err
}

// openMutation is the mutation run carries while it is still open — in
// flight, being checked, or waiting for the person — and nil when it has
// none or it is settled (applied, failed, skipped).
func openMutation(ctx context.Context, q storage.Q, run *storage.Run) (*storage.Mutation, error) {
	if run.MutationID == 0 || PastMutation(run) {
		return nil, nil
	}
	m, err := q.MutationByID(ctx, run.MutationID)
	if err != nil {
		return nil, err
	}
	switch m.Status {
	case storage.MutationInFlight, storage.MutationNeedsReconcile, storage.MutationIndeterminate,
		storage.MutationAwaitingApproval:
		return m, nil
	}
	return nil, nil
}

// RecoveryRun creates the run that takes over a crashed run's mutation and
// events (its retry_of points to the crashed run), at status.
func (l *Ledger) RecoveryRun(ctx context.Context, tx *storage.Tx, old *storage.Run, status storage.RunStatus) (*storage.Run, error) {
	now := l.now()
	w, err := tx.WorkflowByID(ctx, old.WorkflowID)
	if err != nil {
		return nil, err
	}
	r := &storage.Run{WorkflowID: old.WorkflowID, Handler: old.Handler, HandlerType: old.HandlerType, ScriptVersion: w.Version,
		RetryOf: old.ID, MutationID: old.MutationID, Trigger: "recovery", Phase: old.Phase, Status: status,
		PrepareResult: old.PrepareResult, MutationResult: old.MutationResult, CreatedAt: now, UpdatedAt: now}
	if _, err := l.MoveRun(ctx, tx, w, r, ByRecovery, ""); err != nil {
		return nil, err
	}
	return r, tx.TakeOver(ctx, old.ID, r.ID, now)
}

// Uncertain hands a mutation that may have happened (keep stopped while
// its call was in flight) to the reconciler, blocking w on it for run.
func (l *Ledger) Uncertain(ctx context.Context, tx *storage.Tx, w *storage.Workflow, m *storage.Mutation, run *storage.Run) (Decision, error) {
	// the first check is due at once: the stop already gave the service
	// its moment; back-off applies from the second check
	now := l.now()
	m.NextAttemptAt = &now
	m.Error = "keep stopped while the call was in flight"
	ev := MUncertain
	if m.Status == storage.MutationNeedsReconcile {
		ev = MCheckLater
	}
	d, err := l.MoveMutation(ctx, tx, w, m, ev, "host")
	if err != nil {
		return d, err
	}
	b, err := l.MoveBlock(ctx, tx, w, storage.BlockReconciliation, "checking whether "+Title(m)+" happened", run.ID, nil)
	d.add(b)
	if err != nil {
		return d, err
	}
	d.journal("mutation.needs_reconcile", map[string]any{"run": run.ID, "mutation": m.ID, "error": m.Error})
	return d, nil
}

// Ask holds mut, run's call, for the person's approval (the grants ask
// first): the run waits paused at mutating, the workflow blocked on it,
// and the prompt is journaled and to be reminded of. w must have been read
// in tx.
func (l *Ledger) Ask(ctx context.Context, tx *storage.Tx, w *storage.Workflow, run *storage.Run, mut *storage.Mutation, reason string) (Decision, error) {
	now := l.now()
	d, err := l.MoveMutation(ctx, tx, w, mut, MAsk, "")
	if err != nil {
		return d, err
	}
	d.Remind = mut
	run.Phase, run.Status, run.MutationID, run.UpdatedAt = storage.PhaseMutating, storage.RunPausedApproval, mut.ID, now
	r, err := l.MoveRun(ctx, tx, w, run, ByScheduler, "")
	d.add(r)
	if err != nil {
		return d, err
	}
	b, err := l.MoveBlock(ctx, tx, w, storage.BlockApproval, "waiting for approval: "+reason, run.ID, nil)
	d.add(b)
	if err != nil {
		return d, err
	}
	d.journal("approval.requested", map[string]any{"run": run.ID, "mutation": mut.ID,
		"text": fmt.Sprintf("%s wants to %s", w.Name, Title(mut)), "preview": mut.Preview})
	return d, nil
}

// GiveUp hands an uncertain mutation the checks could not settle to the
// person (indeterminate), saying why; the prompt is journaled and to be
// reminded of. w must have been read in tx.
func (l *Ledger) GiveUp(ctx context.Context, tx *storage.Tx, w *storage.Workflow, mut *storage.Mutation, why string) (Decision, error) {
	mut.NextAttemptAt = nil
	mut.Error = why
	d, err := l.MoveMutation(ctx, tx, w, mut, MGiveUp, "")
	if err != nil {
		return d, err
	}
	d.Remind = mut
	b, err := l.MoveBlock(ctx, tx, w, storage.BlockReconciliation, "did "+Title(mut)+" happen? "+why, w.BlockRunID, nil)
	d.add(b)
	if err != nil {
		return d, err
	}
	d.journal("mutation.indeterminate", map[string]any{"mutation": mut.ID, "text": "Did " + Title(mut) + " happen?", "reason": why})
	return d, nil
}

// answered takes a prompt's reminder off m (the person answered it): the
// decision cancels it.
func answered(m *storage.Mutation) int64 {
	id := m.ReminderID
	m.ReminderID = 0
	return id
}

// Approve lets the run that carries m, waiting for approval (answered
// already: refused), go on to perform the call; the block is lifted. w
// must have been read in tx.
func (l *Ledger) Approve(ctx context.Context, tx *storage.Tx, w *storage.Workflow, m *storage.Mutation) (Decision, error) {
	run, err := waiting(ctx, tx.Q, m)
	if err != nil {
		return Decision{}, err
	}
	cancel := answered(m)
	d, err := l.MoveMutation(ctx, tx, w, m, MApprove, "user")
	d.cancel(cancel)
	if err != nil {
		return d, err
	}
	run.Status = storage.RunActive
	r, err := l.MoveRun(ctx, tx, w, run, "user:approve", "")
	d.add(r)
	if err != nil {
		return d, err
	}
	b, err := l.MoveBlock(ctx, tx, w, storage.BlockNone, "", run.ID, nil)
	d.add(b)
	return d, err
}

// Recheck is the person's answer to an uncertain mutation that is not a
// settlement: check again, or (resend) it did not happen, so the same call
// goes again under the same key — a receiver that did get it drops the
// copy; the scheduler sends it as it sends a call a 429 put off. Either is
// due at once, its checks counted afresh; a resend marks every consumer
// once it commits. The workflow stays blocked on the run that carries m
// (Carrier). w must have been read in tx.
func (l *Ledger) Recheck(ctx context.Context, tx *storage.Tx, w *storage.Workflow, m *storage.Mutation, resend bool) (Decision, error) {
	run, err := Carrier(ctx, tx.Q, m)
	if err != nil {
		return Decision{}, err
	}
	now := l.now()
	cancel := answered(m)
	m.ReconcileAttempts, m.NextAttemptAt = 0, &now
	ev, reason := MTryAgain, "checking again whether "+Title(m)+" happened"
	if resend {
		m.Error = "the user said it did not happen: sending it again"
		ev, reason = MResend, "sending "+Title(m)+" again"
	}
	d, err := l.MoveMutation(ctx, tx, w, m, ev, "user")
	d.cancel(cancel)
	d.MarkConsumers = resend
	if err != nil {
		return d, err
	}
	b, err := l.MoveBlock(ctx, tx, w, storage.BlockReconciliation, reason, run.ID, nil)
	d.add(b)
	return d, err
}

// ResendNotApplied is a check's finding that m did not happen, for a
// connector that sends the same call again under its idempotency key (MCP
// carries it in _meta): m goes back in flight, due now, its checks counted
// afresh, and the workflow stays blocked on the run that carries it
// (Carrier). The history shows one call retried, not a failed one and a
// new one. w must have been read in tx.
func (l *Ledger) ResendNotApplied(ctx context.Context, tx *storage.Tx, w *storage.Workflow, m *storage.Mutation) (Decision, error) {
	run, err := Carrier(ctx, tx.Q, m)
	if err != nil {
		return Decision{}, err
	}
	now := l.now()
	m.ReconcileAttempts, m.NextAttemptAt = 0, &now
	m.Error = "the check found it did not happen: sending it again under the same key"
	d, err := l.MoveMutation(ctx, tx, w, m, MResend, "reconciler")
	if err != nil {
		return d, err
	}
	b, err := l.MoveBlock(ctx, tx, w, storage.BlockReconciliation, "sending "+Title(m)+" again", run.ID, nil)
	d.add(b)
	return d, err
}
