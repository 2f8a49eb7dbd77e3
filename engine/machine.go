package engine

// The state machines (DESIGN.md §7.0) are package ledger's: its tables
// decide every move and its movers are the only writers of a status. The
// engine's movers below call them and act on the decision they return —
// announce once the transaction commits (never a move rolled back),
// journal in it, remember a workflow's status. What a decision asks after
// the commit (a repair, the consumers marked) only apply does.

import (
	"context"
	"fmt"
	"time"

	"keep/engine/ledger"
	"keep/storage"
)

// apply is the one executor of the ledger's decisions that ask for more
// than a transaction: it opens one with write (e.db.Write, or
// WriteUnsynced where the disk may wait), runs move in it, does there
// what the decision returned asks inside it (act: notes, journal, status,
// reminders), commits, then does what follows the commit: the repair asked
// for, the consumers marked. Nothing else asks the repairer or marks every
// consumer (executor_test.go holds the package to it). w is the workflow
// moved; the decision move returns must not have been acted on already.
func (e *Engine) apply(ctx context.Context, write func(context.Context, func(*storage.Tx) error) error, w *storage.Workflow, move func(tx *storage.Tx) (ledger.Decision, error)) (ledger.Decision, error) {
	var d ledger.Decision
	err := write(ctx, func(tx *storage.Tx) error {
		var err error
		if d, err = move(tx); err != nil {
			return err
		}
		return e.actIn(ctx, tx, w, d)
	})
	if err != nil {
		return d, err
	}
	if d.Repair != nil {
		e.maybeRepair(ctx, w, d.Repair)
	}
	if d.MarkConsumers {
		e.markAllConsumers(ctx, e.state(w.ID), w)
	}
	return d, nil
}

// act does what a move's decision asks of the engine inside tx: its notes
// are announced once tx commits, its entries journaled in tx, a workflow's
// new status remembered once committed, a prompt's reminder scheduled or
// cancelled. (A repair and the consumers' marking wait for the commit:
// apply's: act refuses a decision that asks for them, which would
// otherwise be dropped.) w is the workflow moved (nil only for
// a decision with nothing to journal).
func (e *Engine) act(ctx context.Context, tx *storage.Tx, w *storage.Workflow, d ledger.Decision) error {
	if d.Repair != nil || d.MarkConsumers {
		return fmt.Errorf("a decision asking for a repair or its consumers marked once it commits is apply's to act on")
	}
	return e.actIn(ctx, tx, w, d)
}

// actIn is act for apply, which does the rest once the transaction commits.
func (e *Engine) actIn(ctx context.Context, tx *storage.Tx, w *storage.Workflow, d ledger.Decision) error {
	if w == nil && len(d.Journal) > 0 {
		return fmt.Errorf("%d entries to journal: their workflow is needed", len(d.Journal))
	}
	if d.Status != "" {
		id, to := d.StatusOf, d.Status
		tx.AfterCommit(func() { e.statuses.Store(id, to) })
	}
	for _, n := range d.Notes {
		e.announce(tx, n.Kind, n.Workflow, n.Text)
	}
	for _, j := range d.Journal {
		if err := e.journal(tx, w, j.Topic, j.Payload); err != nil {
			return err
		}
	}
	for _, id := range d.CancelReminders {
		if e.events == nil {
			break
		}
		if _, err := e.events.CancelTx(tx, id); err != nil {
			return err
		}
	}
	if d.Remind != nil {
		if w == nil {
			return fmt.Errorf("mutation %d: a reminder needs its workflow", d.Remind.ID)
		}
		return e.scheduleReminder(ctx, tx, w, d.Remind, e.pol.ApprovalReminder)
	}
	return nil
}

// journal hands a notification to the bus inside the transaction that made
// the change (DESIGN.md §9), and schedules its reminder where one is due.
func (e *Engine) journal(tx *storage.Tx, w *storage.Workflow, topic string, payload map[string]any) error {
	if e.events == nil {
		return nil
	}
	payload["workflow"] = w.Name
	_, err := e.events.EmitTx(tx, topic, "engine", payload, fmt.Sprint(w.ID))
	return err
}

// markAllConsumers marks every consumer of a workflow dirty (deploy,
// recovery, after an unblock: triggers accumulated meanwhile).
func (e *Engine) markAllConsumers(ctx context.Context, ws *wfState, w *storage.Workflow) {
	sc, err := e.script(ctx, w.ID, w.Version)
	if err != nil {
		return
	}
	for _, c := range sc.Workflow.Consumers {
		ws.markDirty(c.Name)
	}
}

// moveMutation performs ev on m, a mutation of w, in tx (ledger.MoveMutation).
// The movers below act, not apply: each is one move among the other writes
// of a transaction its caller opened; a move alone in its transaction goes
// through apply.
func (e *Engine) moveMutation(ctx context.Context, tx *storage.Tx, w *storage.Workflow, m *storage.Mutation, ev ledger.MutationEvent, by string) error {
	d, err := e.led.MoveMutation(ctx, tx, w, m, ev, by)
	if err != nil {
		return err
	}
	return e.act(ctx, tx, w, d)
}

// announce tells the front ends of a move once tx commits: a move rolled
// back is never announced.
func (e *Engine) announce(tx *storage.Tx, kind, workflow, text string) {
	tx.AfterCommit(func() { e.notify(kind, workflow, text) })
}

// touchMutation writes a mutation's other fields (a reminder, a count of
// checks), its status unchanged.
func (e *Engine) touchMutation(ctx context.Context, tx *storage.Tx, m *storage.Mutation) error {
	return e.led.TouchMutation(ctx, tx, m)
}

// moveRun writes run, a run of w, its new status and phase set on it
// (ledger.MoveRun). w may be nil only for a move never announced: a new
// run, or a phase.
func (e *Engine) moveRun(ctx context.Context, tx *storage.Tx, w *storage.Workflow, run *storage.Run, by string) error {
	return e.moveRunSaying(ctx, tx, w, run, by, "")
}

// moveRunSaying is moveRun with news for the announcement of a commit.
func (e *Engine) moveRunSaying(ctx context.Context, tx *storage.Tx, w *storage.Workflow, run *storage.Run, by, news string) error {
	d, err := e.led.MoveRun(ctx, tx, w, run, by, news)
	if err != nil {
		return err
	}
	return e.act(ctx, tx, w, d)
}

// moveWorkflow performs ev on w in tx (ledger.MoveWorkflow).
func (e *Engine) moveWorkflow(ctx context.Context, tx *storage.Tx, w *storage.Workflow, ev ledger.WorkflowEvent) error {
	d, err := e.led.MoveWorkflow(ctx, tx, w, ev)
	if err != nil {
		return err
	}
	return e.act(ctx, tx, w, d)
}

// setBlock moves w's block to kind, BlockNone lifting it (ledger.MoveBlock);
// w must have been read in tx (reread).
func (e *Engine) setBlock(ctx context.Context, tx *storage.Tx, w *storage.Workflow, kind BlockKind, reason string, runID int64, retryAt *time.Time) error {
	d, err := e.led.MoveBlock(ctx, tx, w, kind, reason, runID, retryAt)
	if err != nil {
		return err
	}
	return e.act(ctx, tx, w, d)
}

// reread brings a workflow read before tx up to date from inside it: a
// block is moved, and the retry counters counted, from what the row holds
// now, not from what it held when the caller looked.
func reread(ctx context.Context, tx *storage.Tx, w *storage.Workflow) error {
	cur, err := tx.WorkflowByID(ctx, w.ID)
	if err != nil {
		return err
	}
	*w = *cur
	return nil
}
