package engine

// The run loop's transactions (DESIGN.md §7.0): each function here is one,
// writing what a phase came to (inputs, events, mutations, the run's next
// phase) and moving statuses through the ledger's movers (machine.go), which
// decide every move and are the only writers of a status. The person's
// answers are transitions_answers.go, restart recovery
// transitions_recovery.go, pause, resume and skip ops.go.

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"keep/connectors"
	"keep/engine/ledger"
	"keep/sandbox"
	"keep/storage"
)

func (e *Engine) tCommitProducer(ctx context.Context, w *storage.Workflow, run *storage.Run, out *sandbox.Outcome, h *host, next *time.Time, tr *trace) error {
	now := e.now()
	return e.writeRun(ctx, run, func(tx *storage.Tx) error {
		run.Phase, run.Status, run.ClosedAt = PhaseCommitted, RunCommitted, &now
		if err := e.moveRunSaying(ctx, tx, w, run, ledger.ByScheduler, fmt.Sprintf("%d new inputs", len(h.inputs))); err != nil {
			return err
		}
		for _, in := range h.inputs {
			in.CreatedBy = run.ID
		}
		if err := tx.InsertInputs(ctx, h.inputs); err != nil {
			return fmt.Errorf("register input: %w", err)
		}
		if err := tx.PublishAll(ctx, w.ID, h.pubs, run.ID, now); err != nil {
			return err
		}
		if out.StateReturned {
			if err := tx.SetHandlerState(ctx, w.ID, run.Handler, out.State, now); err != nil {
				return err
			}
		}
		if err := tx.SetNextRun(ctx, w.ID, run.Handler, next); err != nil {
			return err
		}
		if err := e.clearAfterSuccess(ctx, tx, w); err != nil {
			return err
		}
		return tx.AddTrace(ctx, tr.take(run.ID))
	})
}

// writeRun runs fn in one transaction; if it fails, run is put back as it
// was, so a failure path that follows writes from what the database holds
// (the compare-and-set would refuse a move from a state that was rolled back).
func (e *Engine) writeRun(ctx context.Context, run *storage.Run, fn func(*storage.Tx) error) error {
	return e.writeRunWith(ctx, run, e.db.Write, fn)
}

// writeRunWith is writeRun with the kind of commit chosen: e.db.Write, or
// e.db.WriteUnsynced for a checkpoint whose loss keep can redo or check.
func (e *Engine) writeRunWith(ctx context.Context, run *storage.Run, write func(context.Context, func(*storage.Tx) error) error, fn func(*storage.Tx) error) error {
	saved := *run
	err := write(ctx, fn)
	if err != nil {
		*run = saved
	}
	return err
}

// clearAfterSuccess resets the persisted retry counters after a success.
func (e *Engine) clearAfterSuccess(ctx context.Context, tx *storage.Tx, w *storage.Workflow) error {
	if w.TransientFailures == 0 && w.Repairs == 0 {
		return nil
	}
	w.TransientFailures, w.Repairs = 0, 0
	return tx.SetCounters(ctx, w.ID, 0, 0)
}

// tStarted records a run the moment its handler starts: active, in phase
// preparing, so a process killed during prepare leaves a run that recovery
// marks crashed (chapter 16 "Restart Recovery"). The record need not wait
// for the disk: a killed process keeps it, and a power cut that takes it
// takes the run's later checkpoints too — up to its in_flight row, which
// is synced — so the run is simply started again.
func (e *Engine) tStarted(ctx context.Context, run *storage.Run) error {
	_, err := e.apply(ctx, e.db.WriteUnsynced, nil, func(tx *storage.Tx) (ledger.Decision, error) {
		return e.led.MoveRun(ctx, tx, nil, run, ledger.ByScheduler, "") // a new run: not announced
	})
	return err
}

// tPrepared records a consumer run at its first checkpoint: its prepare
// result and its reservations, pinned together. A run whose mutate calls a
// mutator writes it with the in_flight row instead (tInFlight); this is
// for every other way on. mutating: mutate has run, so the run moves on to
// mutating in the same transaction (chapter 06b: prepared → mutating
// before any connector call). Unless the run is parked here, the
// checkpoint need not wait for the disk: a power cut that takes it loses
// only the prepare, which chapter 16 lets keep run again, and what follows
// is synced (a failure, an approval) or is the run's own commit. A run
// parked at prepared waits durably.
func (e *Engine) tPrepared(ctx context.Context, w *storage.Workflow, run *storage.Run, eventIDs []int64, mutating bool, tr *trace) error {
	now := e.now()
	write := e.db.WriteUnsynced
	if !mutating && len(eventIDs) > 0 {
		write = e.db.Write // parked at prepared, holding its reservations
	}
	return e.writeRunWith(ctx, run, write, func(tx *storage.Tx) error {
		run.Phase, run.UpdatedAt = PhasePrepared, now
		if mutating {
			run.Phase = PhaseMutating
		}
		if err := e.moveRun(ctx, tx, w, run, ledger.ByScheduler); err != nil {
			return err
		}
		if err := tx.Reserve(ctx, w.ID, run.ID, eventIDs, now); err != nil {
			return err
		}
		return tx.AddTrace(ctx, tr.take(run.ID))
	})
}

// tMutating moves a run parked at prepared on to mutating as mutate starts.
func (e *Engine) tMutating(ctx context.Context, run *storage.Run) error {
	_, err := e.apply(ctx, e.db.Write, nil, func(tx *storage.Tx) (ledger.Decision, error) {
		run.Phase, run.UpdatedAt = PhaseMutating, e.now()
		return e.led.MoveRun(ctx, tx, nil, run, ledger.ByScheduler, "") // a phase: not announced
	})
	return err
}

// tFail records a failed run and disposes of its events (ledger.Fail).
// Runs with an unresolved mutation never come here: they are paused, not
// failed.
func (e *Engine) tFail(ctx context.Context, w *storage.Workflow, run *storage.Run, cl class, tr *trace) error {
	_, err := e.apply(ctx, e.db.Write, w, func(tx *storage.Tx) (ledger.Decision, error) {
		if err := reread(ctx, tx, w); err != nil {
			return ledger.Decision{}, err
		}
		d, err := e.led.Fail(ctx, tx, w, run, cl, e.retry(w.TransientFailures+1))
		if err != nil {
			return d, err
		}
		return d, tx.AddTrace(ctx, tr.take(run.ID))
	})
	return err
}

// retry is the policy's retry limit and the back-off before attempt n.
func (e *Engine) retry(n int) ledger.Retry {
	return ledger.Retry{Limit: e.pol.TransientRetries, FirstCheck: e.backoff(1), Resend: e.backoff(n)}
}

// blockingMutation is the status of the mutation the blocking run carries
// (ledger.BlockingMutation).
func blockingMutation(ctx context.Context, q storage.Q, w *storage.Workflow) (MutationStatus, error) {
	return ledger.BlockingMutation(ctx, q, w)
}

// needsUser: the block waits on a person (ledger.NeedsUser).
func needsUser(w *storage.Workflow, mutation MutationStatus) bool {
	return ledger.NeedsUser(w, mutation)
}

// userClearable: resume or retry may lift the block. Pending approvals and
// uncertain mutations are lifted only by answering them.
func userClearable(w *storage.Workflow, mutation MutationStatus) bool {
	switch w.BlockKind {
	case BlockRepair, BlockInternal, BlockTransient:
		return true // the user may also cut a back-off short
	case BlockAuth, BlockPermission:
		// a refused credential or permission the user has since fixed
		return true
	case BlockApproval:
		// blocks written before auth and permission had kinds of their own
		return mutation != MutationAwaitingApproval
	}
	return false
}

// tAwaitApproval holds the call for the person's approval (ledger.Ask).
func (e *Engine) tAwaitApproval(ctx context.Context, w *storage.Workflow, run *storage.Run, mut *storage.Mutation, reason string, tr *trace) error {
	_, err := e.apply(ctx, e.db.Write, w, func(tx *storage.Tx) (ledger.Decision, error) {
		if err := reread(ctx, tx, w); err != nil {
			return ledger.Decision{}, err
		}
		d, err := e.led.Ask(ctx, tx, w, run, mut, reason)
		if err != nil {
			return d, err
		}
		tr.note("mutate", "waiting for approval: "+reason)
		return d, tx.AddTrace(ctx, tr.take(run.ID))
	})
	return err
}

// titleOr is ledger.Title, for the one caller (views.go's Attention) that
// other work of this round edits around; it goes once that has landed.
func titleOr(m *storage.Mutation) string { return ledger.Title(m) }

// tInFlight writes the ledger row durably before the external call. A new
// mutation is inserted; an approved one moves on from awaiting_approval.
// h is the run's prepared checkpoint when it is not written yet: it goes
// into the same transaction, so a run that calls a mutator right after
// prepare commits once between its start and its call, not twice. cc, for
// a new mutation, is decided first in the same transaction (mayCall): a
// call held back writes nothing and returns why.
func (e *Engine) tInFlight(ctx context.Context, w *storage.Workflow, run *storage.Run, mut *storage.Mutation, tr *trace, h *held, cc *callCheck) error {
	now := e.now()
	return e.writeRun(ctx, run, func(tx *storage.Tx) error {
		if cc != nil {
			if err := e.mayCall(ctx, tx.Q, w, cc); err != nil {
				return err
			}
		}
		if h != nil {
			// the prepared checkpoint, written with the row it led to: the
			// run moves from preparing straight on to mutating, below, and
			// its reservations are pinned with it
			if err := tx.Reserve(ctx, w.ID, run.ID, h.ids, now); err != nil {
				return err
			}
		}
		// NextAttemptAt nil: in flight now, not waiting to be sent again
		mut.NextAttemptAt = nil
		mut.Attempts++
		if err := e.moveMutation(ctx, tx, w, mut, ledger.MSend, ""); err != nil {
			return err
		}
		run.Phase, run.Status, run.MutationID, run.UpdatedAt = PhaseMutating, RunActive, mut.ID, now
		if err := e.moveRun(ctx, tx, w, run, ledger.ByScheduler); err != nil {
			return err
		}
		return tx.AddTrace(ctx, tr.take(run.ID))
	})
}

// tMutationOutcome records what the call did: its row of the outcome map
// (ledger.RecordOutcome, DESIGN.md §6).
func (e *Engine) tMutationOutcome(ctx context.Context, w *storage.Workflow, run *storage.Run, mut *storage.Mutation, res any, callErr error, tr *trace) error {
	cls := connectors.ClassOf(callErr)
	// An applied call the run goes straight on from need not wait for the
	// disk: a power cut that takes it leaves the durable in_flight row,
	// which start-up checks with the connector (reconciled, never sent
	// again). Anything else waits for the disk: a failure, a back-off, a
	// question, a parked run.
	write := e.db.Write
	if cls == "" && !e.parked(ctx, w) {
		write = e.db.WriteUnsynced
	}
	_, err := e.apply(ctx, write, w, func(tx *storage.Tx) (ledger.Decision, error) {
		if cls != "" {
			// a block follows: moved from what the row holds now (an
			// applied call moves none, and reads nothing more)
			if err := reread(ctx, tx, w); err != nil {
				return ledger.Decision{}, err
			}
		}
		d, err := e.led.RecordOutcome(ctx, tx, w, run, mut, ledger.Call{Result: mustJSON(res), Err: callErr}, e.retry(mut.Attempts))
		if err != nil {
			return d, err
		}
		return d, tx.AddTrace(ctx, tr.take(run.ID))
	})
	return err
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// tIndeterminate hands an uncertain mutation to the user.
func (e *Engine) tIndeterminate(ctx context.Context, w *storage.Workflow, mut *storage.Mutation, why string) error {
	_, err := e.apply(ctx, e.db.Write, w, func(tx *storage.Tx) (ledger.Decision, error) {
		if err := reread(ctx, tx, w); err != nil {
			return ledger.Decision{}, err
		}
		return e.led.GiveUp(ctx, tx, w, mut, why)
	})
	return err
}

// tReconciled records one reconciliation attempt.
func (e *Engine) tReconciled(ctx context.Context, ws *wfState, w *storage.Workflow, mut *storage.Mutation, v connectors.Verdict, result any, why string) error {
	switch v {
	case connectors.Applied:
		return e.settle(ctx, ws, w, mut, ledger.MApplied, "reconciler", mustJSON(result), "")
	case connectors.NotApplied:
		if e.resendsInPlace(mut) { // connect_mcp.go
			return e.tResendNotApplied(ctx, ws, w, mut)
		}
		return e.settle(ctx, ws, w, mut, ledger.MFailed, "reconciler", nil, "the connector found it did not happen")
	}
	mut.ReconcileAttempts++
	if why == "" {
		why = "the connector could not tell yet"
	}
	if mut.ReconcileAttempts >= e.pol.ReconcileAttempts {
		return e.tIndeterminate(ctx, w, mut, fmt.Sprintf("%d checks could not confirm it (%s)", mut.ReconcileAttempts, why))
	}
	now := e.now()
	t := now.Add(e.backoff(mut.ReconcileAttempts))
	mut.NextAttemptAt, mut.Error = &t, why
	_, err := e.apply(ctx, e.db.Write, w, func(tx *storage.Tx) (ledger.Decision, error) {
		return e.led.MoveMutation(ctx, tx, w, mut, ledger.MCheckLater, "reconciler")
	})
	return err
}

// settle resolves an open mutation (by the reconciler or the user) and
// moves the run that carries it on (ledger.Settle, which finds that run).
func (e *Engine) settle(ctx context.Context, ws *wfState, w *storage.Workflow, mut *storage.Mutation, ev ledger.MutationEvent, by string, result json.RawMessage, why string) error {
	_, err := e.apply(ctx, e.db.Write, w, func(tx *storage.Tx) (ledger.Decision, error) {
		if err := reread(ctx, tx, w); err != nil {
			return ledger.Decision{}, err
		}
		return e.led.Settle(ctx, tx, w, mut, ev, by, result, why, e.retry(w.TransientFailures+1))
	})
	if err == nil {
		ws.poke() // the consumers marked, where the settlement ended the run (apply)
	}
	return err
}

func paramsOf(m *storage.Mutation) map[string]any {
	var p map[string]any
	_ = json.Unmarshal(m.Params, &p)
	return p
}

// tCommitConsumer is the consumer's commit: events consumed (or skipped),
// state, the run committed, published events with inherited causes, and
// wakeAt (cleared when prepare gave none), all in one transaction.
//
// The commit does not wait for the disk: its mutation, if it had one, was
// durably in_flight before the call, so a power cut that takes the commit
// leaves that row for start-up to check with the connector (never sent
// again); without a mutation the run simply runs again. The next synced
// commit, or the scheduler's Sync when it runs out of work, makes it
// durable.
func (e *Engine) tCommitConsumer(ctx context.Context, w *storage.Workflow, run *storage.Run, out *sandbox.Outcome, pubs []storage.Publication, wake *time.Time, tr *trace) error {
	return e.writeRunWith(ctx, run, e.db.WriteUnsynced, func(tx *storage.Tx) error {
		return e.commitConsumerTx(ctx, tx, w, run, out, pubs, wake, tr)
	})
}

// tAppliedCommitted records an applied call and commits its run in one
// transaction, for a consumer whose next is empty (sandbox/noop.go): with
// no next to run between them, the outcome's own commit (tMutationOutcome)
// would guard nothing. A process killed before it leaves the durable
// in_flight row, which start-up checks with the connector, as a kill before
// the outcome's commit does.
func (e *Engine) tAppliedCommitted(ctx context.Context, w *storage.Workflow, run *storage.Run, mut *storage.Mutation, res any, tr *trace) error {
	wake := e.wakeFrom(run.PrepareResult, tr)
	return e.writeRunWith(ctx, run, e.db.WriteUnsynced, func(tx *storage.Tx) error {
		// the run's row is written once, by the commit below
		d, err := e.led.RecordOutcomeUnwritten(ctx, tx, w, run, mut, ledger.Call{Result: mustJSON(res)}, e.retry(mut.Attempts))
		if err != nil {
			return err
		}
		// act, not apply: the run's commit follows in this same transaction
		if err := e.act(ctx, tx, w, d); err != nil {
			return err
		}
		if run.Phase != PhaseMutated || run.Status != RunActive {
			return fmt.Errorf("run %d: an applied call left it %s in %s", run.ID, run.Status, run.Phase)
		}
		return e.commitConsumerTx(ctx, tx, w, run, &sandbox.Outcome{}, nil, wake, tr)
	})
}

// commitConsumerTx is a consumer run's commit inside tx: its events
// consumed (or skipped), its state and publications written, its wake set.
func (e *Engine) commitConsumerTx(ctx context.Context, tx *storage.Tx, w *storage.Workflow, run *storage.Run, out *sandbox.Outcome, pubs []storage.Publication, wake *time.Time, tr *trace) error {
	now := e.now()
	status := EventConsumed
	if string(run.MutationResult) == string(resultSkipped) {
		status = EventSkipped
	}
	if err := e.led.ConsumeEvents(ctx, tx, run.ID, status, now); err != nil {
		return err
	}
	if out.StateReturned {
		if err := tx.SetHandlerState(ctx, w.ID, run.Handler, out.State, now); err != nil {
			return err
		}
	}
	if len(pubs) > 0 {
		// next's events are caused by the inputs of the events it reserved
		causes, err := tx.CausesOfRun(ctx, run.ID)
		if err != nil {
			return err
		}
		for i := range pubs {
			pubs[i].Causes = causes
		}
		if err := tx.PublishAll(ctx, w.ID, pubs, run.ID, now); err != nil {
			return err
		}
	}
	run.Phase, run.Status, run.ClosedAt = PhaseCommitted, RunCommitted, &now
	if err := e.moveRun(ctx, tx, w, run, ledger.ByScheduler); err != nil {
		return err
	}
	if err := tx.SetWake(ctx, w.ID, run.Handler, wake); err != nil {
		return err
	}
	if err := e.clearAfterSuccess(ctx, tx, w); err != nil {
		return err
	}
	return tx.AddTrace(ctx, tr.take(run.ID))
}

// tUnblock lifts a block whose cause is over (a back-off that ran out, the
// user's retry): a run past its mutation is retried forward; otherwise the
// failed run is closed (its events were released when it failed).
func (e *Engine) tUnblock(ctx context.Context, w *storage.Workflow, trigger string, resetCounters bool) error {
	_, err := e.apply(ctx, e.db.Write, w, func(tx *storage.Tx) (ledger.Decision, error) {
		if err := reread(ctx, tx, w); err != nil {
			return ledger.Decision{}, err
		}
		return e.led.Unblock(ctx, tx, w, trigger, resetCounters)
	})
	return err
}

// tRepaired stores an accepted repair as the workflow's new minor version
// and retries the failed run under it, in one transaction. The repair adds no
// grants: a capability the old script lacked still waits for the user.
// also runs in the same transaction (the accepted proposal's decision).
// Once it commits, every consumer is marked (ledger.Unblock).
func (e *Engine) tRepaired(ctx context.Context, w *storage.Workflow, v storage.ScriptVersion, topics []string, also func(tx *storage.Tx) error) error {
	_, err := e.apply(ctx, e.db.Write, w, func(tx *storage.Tx) (ledger.Decision, error) {
		if err := reread(ctx, tx, w); err != nil {
			return ledger.Decision{}, err
		}
		if err := also(tx); err != nil {
			return ledger.Decision{}, err
		}
		if err := tx.AddScriptVersion(ctx, v); err != nil {
			return ledger.Decision{}, err
		}
		if err := tx.SetWorkflowVersion(ctx, w.ID, v.Version, v.CreatedAt); err != nil {
			return ledger.Decision{}, err
		}
		for _, t := range topics {
			if err := tx.EnsureTopic(ctx, w.ID, t); err != nil {
				return ledger.Decision{}, err
			}
		}
		w.Version = v.Version
		w.Repairs++
		if err := tx.SetCounters(ctx, w.ID, w.TransientFailures, w.Repairs); err != nil {
			return ledger.Decision{}, err
		}
		return e.led.Unblock(ctx, tx, w, triggerRepair, false)
	})
	return err
}

// tSetBlockCleared lifts a block before the host re-sends a mutation.
func (e *Engine) tSetBlockCleared(ctx context.Context, w *storage.Workflow) error {
	_, err := e.apply(ctx, e.db.Write, w, func(tx *storage.Tx) (ledger.Decision, error) {
		if err := reread(ctx, tx, w); err != nil {
			return ledger.Decision{}, err
		}
		return e.led.MoveBlock(ctx, tx, w, BlockNone, "", 0, nil)
	})
	return err
}
