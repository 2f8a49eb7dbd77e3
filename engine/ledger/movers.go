package ledger

// The movers: each performs one move in the caller's transaction, checked
// against its table and written compare-and-set, so a row another
// transition moved first is a conflict, never overwritten. Every write of
// a run's status or phase, of a mutation's status, of a workflow's status
// (deploy and run-now included), of its block and of an event's
// consumed/skipped status goes through them.

import (
	"context"
	"fmt"
	"time"

	"keep/storage"
)

// mutationNotes: what the front ends are told of a mutation's move, by
// event (the notification's kind; its words are mutationNote's). The
// host's sends, back-offs and checks are not news, nor is the outcome of a
// call it just made: applied, the run goes on; refused, the run's failure
// is announced (runNotes).
var mutationNotes = map[MutationEvent]string{
	MAsk:       NoteApproval,
	MUncertain: NoteNeedsReconcile,
	MGiveUp:    NoteIndeterminate,
	MApprove:   NoteChanged,
	MTryAgain:  NoteChanged,
	MResend:    NoteChanged,
	MApplied:   NoteChanged, // settled by the reconciler or the user
	MFailed:    NoteChanged,
	MSkip:      NoteChanged,
}

// Title is how a mutation is named to the person.
func Title(m *storage.Mutation) string {
	if m.UITitle != "" {
		return m.UITitle
	}
	return m.Connector + "." + m.Method + " " + m.Preview
}

// MutationNote is the kind and words of m's move by ev from from, or ""
// when it is not announced.
func MutationNote(workflow string, m *storage.Mutation, from storage.MutationStatus, ev MutationEvent) (kind, text string) {
	kind = mutationNotes[ev]
	switch {
	case kind == "":
		return "", ""
	case from == storage.MutationInFlight && (ev == MApplied || ev == MFailed):
		return "", "" // the call's own outcome
	case kind == NoteApproval:
		return kind, workflow + ": approve " + Title(m) + "?"
	case kind == NoteIndeterminate:
		return kind, "did " + Title(m) + " happen? " + m.Error
	case kind == NoteNeedsReconcile:
		return kind, Title(m) + ": " + m.Error
	}
	return kind, Title(m) + ": " + string(m.Status)
}

// MoveMutation performs ev on m, a mutation of w, in tx: the table decides
// the new status, by (host, reconciler, user) is recorded where it settles
// the row; a new row is inserted, an existing one written compare-and-set.
func (l *Ledger) MoveMutation(ctx context.Context, tx *storage.Tx, w *storage.Workflow, m *storage.Mutation, ev MutationEvent, by string) (Decision, error) {
	var d Decision
	from := m.WasStatus
	to, err := NextMutation(from, ev)
	if err != nil {
		return d, fmt.Errorf("mutation %d: %w", m.ID, err)
	}
	m.Status, m.UpdatedAt = to, l.now()
	switch to {
	case storage.MutationApplied, storage.MutationFailed, storage.MutationSkipped:
		m.ResolvedBy = by
	}
	if m.ID == 0 {
		err = tx.InsertMutation(ctx, m, l.keyPrefix)
	} else {
		err = tx.UpdateMutation(ctx, m)
	}
	if err != nil {
		return d, err
	}
	if kind, text := MutationNote(w.Name, m, from, ev); kind != "" {
		d.note(kind, w.Name, text)
	}
	return d, nil
}

// TouchMutation writes a mutation's other fields (a reminder, a count of
// checks), its status unchanged.
func (l *Ledger) TouchMutation(ctx context.Context, tx *storage.Tx, m *storage.Mutation) error {
	if m.Status != m.WasStatus {
		return fmt.Errorf("mutation %d: %s → %s outside MoveMutation", m.ID, m.WasStatus, m.Status)
	}
	m.UpdatedAt = l.now()
	return tx.UpdateMutation(ctx, m)
}

// runNotes: what the front ends are told when a run's status changes to
// one of these (the notification's kind; its words are runNote's). A run
// that starts, goes on, passes a checkpoint or is found crashed is not
// news; one that waits on its mutation's question (an approval, a check)
// is announced by the mutation's move.
var runNotes = map[storage.RunStatus]string{
	storage.RunCommitted:      NoteRunCommitted,
	storage.RunFailedLogic:    NoteRunFailed,
	storage.RunFailedInternal: NoteRunFailed,
	// RunPausedTransient is not news: the engine tries again after a
	// back-off, and the person is told when it gives up (the block's
	// reason then asks for them).
	// a refused credential or permission; an approval asked for is the
	// mutation's to announce, and leaves the run without an error
	storage.RunPausedApproval: NoteRunFailed,
}

// RunNote is the kind and words of run's move to its status, or "" when it
// is not announced. news, where the mover has some, is what a commit says
// after the handler's name (a producer: how many inputs it found).
func RunNote(run *storage.Run, news string) (kind, text string) {
	kind = runNotes[run.Status]
	switch {
	case kind == "":
		return "", ""
	case kind == NoteRunCommitted && news != "":
		return kind, run.Handler + ": " + news
	case kind == NoteRunCommitted:
		return kind, run.Handler + " committed"
	case run.Error == "":
		return "", "" // waits on its mutation, which announced why
	}
	return kind, run.Handler + " failed: " + run.Error
}

// MoveRun writes run, a run of w — its new status and phase set on it —
// checked against the tables from where it was read (run.Was) and
// compare-and-set in tx, with by (the scheduler, recovery, the user's
// answer) recorded as who made the move. A new run (id 0) is inserted at
// the status and phase it starts in, unannounced. w may be nil only for a
// move never announced: a new run, or a phase. news is what a commit's
// announcement says (RunNote).
func (l *Ledger) MoveRun(ctx context.Context, tx *storage.Tx, w *storage.Workflow, run *storage.Run, by, news string) (Decision, error) {
	var d Decision
	if run.Status == storage.RunActive && run.ClosedAt != nil {
		// the index of open runs is where the active ones are found
		// (storage/runs.go): a closed active run would be lost to it
		return d, fmt.Errorf("%w: run %d is active and closed: an active run is an open matter", ErrRefused, run.ID)
	}
	run.UpdatedAt, run.MovedBy = l.now(), by
	if run.Was == (storage.RunState{}) {
		// never recorded: its id, if it has one, was given ahead of its
		// record (storage.NewRunID)
		_, err := tx.InsertRun(ctx, run)
		return d, err
	}
	from, fromPhase := run.Was.Status, run.Was.Phase
	if run.Via != (storage.RunState{}) {
		// a move made in memory only (RecordOutcomeUnwritten): both are
		// checked, and written in the one update below
		if err := CheckRunMove(from, fromPhase, run.Via.Status, run.Via.Phase); err != nil {
			return d, fmt.Errorf("run %d: %w", run.ID, err)
		}
		from, fromPhase = run.Via.Status, run.Via.Phase
	}
	if err := CheckRunMove(from, fromPhase, run.Status, run.Phase); err != nil {
		return d, fmt.Errorf("run %d: %w", run.ID, err)
	}
	if err := tx.UpdateRun(ctx, run); err != nil {
		return d, err
	}
	if from == run.Status {
		return d, nil
	}
	if kind, text := RunNote(run, news); kind != "" {
		if w == nil {
			return d, fmt.Errorf("run %d: %s → %s is announced: its workflow is needed", run.ID, from, run.Status)
		}
		d.note(kind, w.Name, text)
	}
	return d, nil
}

// workflowNotes: the journaled topic (also the front ends' notification
// kind) and words of a change of status.
var workflowNotes = map[storage.WorkflowStatus][2]string{
	storage.WorkflowActive:   {NoteWorkflowResumed, " resumed"},
	storage.WorkflowPaused:   {NoteWorkflowPaused, " paused"},
	storage.WorkflowArchived: {"workflow.archived", " archived"},
}

// MoveWorkflow performs ev on w in tx: the table decides the new status; a
// new workflow (id 0) is inserted, an existing one written compare-and-set,
// and a change of status is journaled and announced.
func (l *Ledger) MoveWorkflow(ctx context.Context, tx *storage.Tx, w *storage.Workflow, ev WorkflowEvent) (Decision, error) {
	var d Decision
	from := w.Status
	if w.ID == 0 {
		from = ""
	}
	to, ok := NextWorkflow(from, ev)
	if !ok {
		return d, fmt.Errorf("%w: workflow %s is %s: cannot %s", ErrRefused, w.Name, orNew(string(from)), ev)
	}
	now := l.now()
	if w.ID == 0 {
		// CreateWorkflow inserts the row active, which is the table's answer
		id, err := tx.CreateWorkflow(ctx, w.Name, now)
		if err != nil {
			return d, err
		}
		w.ID, w.Status = id, to
		return d, nil
	}
	if err := tx.SetWorkflowStatus(ctx, w.ID, from, to, now); err != nil {
		return d, err
	}
	w.Status = to
	d.Status, d.StatusOf = to, w.ID
	if from == to {
		return d, nil
	}
	note := workflowNotes[to]
	d.note(note[0], w.Name, w.Name+note[1])
	d.journal(note[0], map[string]any{"text": w.Name + note[1]})
	return d, nil
}

// MoveBlock moves w's block to kind (BlockNone lifts it): checked against
// the table from the block w holds, and written compare-and-set on it, so
// w must have been read in tx — a block another transition moved first is
// a conflict, never overwritten. A block that waits on the user is
// journaled. A lift names the run whose wait is over (0: the lift is the
// person's or the timer's, whatever run holds the block); another open
// run's block stays (liftedByOther).
func (l *Ledger) MoveBlock(ctx context.Context, tx *storage.Tx, w *storage.Workflow, kind storage.BlockKind, reason string, runID int64, retryAt *time.Time) (Decision, error) {
	var d Decision
	if kind == storage.BlockNone {
		other, err := liftedByOther(ctx, tx, w, runID)
		if err != nil || other {
			return d, err
		}
		runID = 0 // no block holds no run
	}
	// blockqueue.go: concurrent runs take turns holding the block
	queued, err := queuedBehind(ctx, tx, w, kind, runID)
	if err != nil {
		return d, err
	}
	if queued {
		return d, nil
	}
	from := w.BlockKind
	if kind == storage.BlockNone && w.BlockKind != storage.BlockNone {
		if kind, reason, runID, retryAt, err = queuedBlock(ctx, tx, w); err != nil {
			return d, err
		}
		from = storage.BlockNone // lifted, then handed on
	}
	if err := CheckBlockMove(from, kind); err != nil {
		return d, fmt.Errorf("workflow %s: %w", w.Name, err)
	}
	to, now := storage.Block{Kind: kind, Reason: reason, RunID: runID, RetryAt: retryAt}, l.now()
	if err := tx.SetBlock(ctx, w.ID, w.BlockKind, w.BlockRunID, to, now); err != nil {
		return d, err
	}
	w.BlockKind, w.BlockReason, w.BlockRunID, w.RetryAt, w.BlockedAt = kind, reason, runID, retryAt, nil
	if kind != storage.BlockNone {
		w.BlockSeq, w.BlockedAt = w.BlockSeq+1, &now // as SetBlock numbered it
	}
	mutation, err := BlockingMutation(ctx, tx.Q, w)
	if err != nil {
		return d, err
	}
	if NeedsUser(w, mutation) {
		d.journal("workflow.needs_attention", map[string]any{"run": runID, "kind": kind, "reason": reason})
	}
	return d, nil
}

// BlockingMutation is the status of the mutation the blocking run carries
// ("" when it carries none): the facts a block's meaning is derived from.
func BlockingMutation(ctx context.Context, q storage.Q, w *storage.Workflow) (storage.MutationStatus, error) {
	if w.BlockRunID == 0 {
		return "", nil
	}
	run, err := q.RunByID(ctx, w.BlockRunID)
	if err != nil || run.MutationID == 0 {
		return "", err
	}
	m, err := q.MutationByID(ctx, run.MutationID)
	if err != nil {
		return "", err
	}
	return m.Status, nil
}

// NeedsUser: the block waits on a person, not on a timer of ours. An
// uncertain mutation is the reconciler's until it gives up (indeterminate).
func NeedsUser(w *storage.Workflow, mutation storage.MutationStatus) bool {
	switch w.BlockKind {
	case storage.BlockNone:
		return false
	case storage.BlockTransient:
		return w.RetryAt == nil
	case storage.BlockReconciliation:
		return mutation == storage.MutationIndeterminate
	}
	return true
}

// ConsumeEvents marks the pending events run holds consumed, or skipped (its
// mutation was skipped): the consumer's commit.
func (l *Ledger) ConsumeEvents(ctx context.Context, tx *storage.Tx, runID int64, status storage.EventStatus, now time.Time) error {
	if status != storage.EventConsumed && status != storage.EventSkipped {
		return fmt.Errorf("%w: events of run %d cannot become %q", ErrRefused, runID, status)
	}
	return tx.Consume(ctx, runID, status, now)
}

// SkipPendingEvent marks one pending, unreserved event skipped (the user's answer).
func (l *Ledger) SkipPendingEvent(ctx context.Context, tx *storage.Tx, id int64, now time.Time) error {
	return tx.SkipEvent(ctx, id, now)
}

// SkipInputEvents marks an input's pending events skipped, but for those
// the runs in keep hold (they may have mutated: they complete).
func (l *Ledger) SkipInputEvents(ctx context.Context, tx *storage.Tx, inputID int64, keep []int64, now time.Time) error {
	return tx.SkipEventsOfInput(ctx, inputID, keep, now)
}
