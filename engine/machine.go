package engine

// The state machines (DESIGN.md §7.0): one table of allowed moves per
// machine and one function per machine that performs a move — it checks
// the table, writes the row compare-and-set in the caller's transaction,
// so a row another transition moved first is a conflict, never
// overwritten, and tells the front ends what they are told of it once the
// transaction commits (never of a move rolled back). Every write of a run's
// status or phase, of a mutation's status, of a workflow's status (deploy
// and run-now included) and of its block goes through them.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"keep/storage"
)

// The states, declared once in storage and re-exported for the TUI.
type (
	RunStatus      = storage.RunStatus
	Phase          = storage.Phase
	MutationStatus = storage.MutationStatus
	BlockKind      = storage.BlockKind
	WorkflowStatus = storage.WorkflowStatus
	EventStatus    = storage.EventStatus
	GrantMode      = storage.GrantMode
)

// Every value of a state type, for flags and filters.
var (
	RunStatuses      = storage.RunStatuses
	MutationStatuses = storage.MutationStatuses
	EventStatuses    = storage.EventStatuses
	GrantModes       = storage.GrantModes
)

const (
	RunActive               = storage.RunActive
	RunPausedTransient      = storage.RunPausedTransient
	RunPausedApproval       = storage.RunPausedApproval
	RunPausedReconciliation = storage.RunPausedReconciliation
	RunFailedLogic          = storage.RunFailedLogic
	RunFailedInternal       = storage.RunFailedInternal
	RunCommitted            = storage.RunCommitted
	RunCrashed              = storage.RunCrashed

	PhasePreparing = storage.PhasePreparing
	PhasePrepared  = storage.PhasePrepared
	PhaseMutating  = storage.PhaseMutating
	PhaseMutated   = storage.PhaseMutated
	PhaseEmitting  = storage.PhaseEmitting
	PhaseCommitted = storage.PhaseCommitted

	MutationAwaitingApproval = storage.MutationAwaitingApproval
	MutationApproved         = storage.MutationApproved
	MutationInFlight         = storage.MutationInFlight
	MutationApplied          = storage.MutationApplied
	MutationFailed           = storage.MutationFailed
	MutationNeedsReconcile   = storage.MutationNeedsReconcile
	MutationIndeterminate    = storage.MutationIndeterminate
	MutationSkipped          = storage.MutationSkipped

	BlockNone           = storage.BlockNone
	BlockApproval       = storage.BlockApproval
	BlockReconciliation = storage.BlockReconciliation
	BlockRepair         = storage.BlockRepair
	BlockTransient      = storage.BlockTransient
	BlockInternal       = storage.BlockInternal
	BlockPermission     = storage.BlockPermission
	BlockAuth           = storage.BlockAuth

	WorkflowActive   = storage.WorkflowActive
	WorkflowPaused   = storage.WorkflowPaused
	WorkflowArchived = storage.WorkflowArchived

	EventPending  = storage.EventPending
	EventConsumed = storage.EventConsumed
	EventSkipped  = storage.EventSkipped

	GrantAllow = storage.GrantAllow
	GrantAsk   = storage.GrantAsk
	GrantDeny  = storage.GrantDeny
)

// ErrConflict: the row was moved by another transition first.
var ErrConflict = storage.ErrConflict

// MutationEvent is what happens to a mutation.
type MutationEvent string

const (
	MAsk        MutationEvent = "ask"         // the grants ask the user first
	MSend       MutationEvent = "send"        // the in_flight row, durably, before the call (again after a 429)
	MApprove    MutationEvent = "approve"     // the user approved it
	MApplied    MutationEvent = "applied"     // the call, a check or the user says it happened
	MFailed     MutationEvent = "failed"      // a definite refusal, or found not to have happened
	MUncertain  MutationEvent = "uncertain"   // it may have reached the other side (or keep stopped mid-call)
	MRetryLater MutationEvent = "retry_later" // the service said not now (429, 503): the same call later
	MCheckLater MutationEvent = "check_later" // a check could not tell yet
	MGiveUp     MutationEvent = "give_up"     // the checks could not tell: the user decides
	MTryAgain   MutationEvent = "try_again"   // the user: check again
	MResend     MutationEvent = "resend"      // the user: it did not happen, send the same call again (same key)
	MSkip       MutationEvent = "skip"        // rejected, skipped by the user, or its input skipped
)

// mutationMoves is every way a mutation can change: from (the empty status
// is a row not yet written), event → to. Anything else is refused.
var mutationMoves = map[MutationStatus]map[MutationEvent]MutationStatus{
	"":                       {MAsk: MutationAwaitingApproval, MSend: MutationInFlight},
	MutationAwaitingApproval: {MApprove: MutationApproved, MSkip: MutationSkipped},
	MutationApproved:         {MSend: MutationInFlight, MSkip: MutationSkipped},
	MutationInFlight: {MApplied: MutationApplied, MFailed: MutationFailed, MUncertain: MutationNeedsReconcile,
		MRetryLater: MutationInFlight, MSend: MutationInFlight},
	MutationNeedsReconcile: {MApplied: MutationApplied, MFailed: MutationFailed, MCheckLater: MutationNeedsReconcile,
		MGiveUp: MutationIndeterminate, MTryAgain: MutationNeedsReconcile, MSkip: MutationSkipped, MResend: MutationInFlight},
	MutationIndeterminate: {MApplied: MutationApplied, MFailed: MutationFailed, MTryAgain: MutationNeedsReconcile,
		MSkip: MutationSkipped, MResend: MutationInFlight},
	// a failed row whose input the user skips is marked skipped with it
	MutationFailed:  {MSkip: MutationSkipped},
	MutationApplied: {},
	MutationSkipped: {},
}

// nextMutation is the table's answer for (from, event).
func nextMutation(from MutationStatus, ev MutationEvent) (MutationStatus, error) {
	to, ok := mutationMoves[from][ev]
	if !ok {
		return "", fmt.Errorf("%w: a mutation that is %q cannot %s", ErrRefused, orNew(string(from)), ev)
	}
	return to, nil
}

func orNew(s string) string {
	if s == "" {
		return "new"
	}
	return s
}

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

// mutationNote is the kind and words of m's move by ev from from, or ""
// when it is not announced.
func mutationNote(workflow string, m *storage.Mutation, from MutationStatus, ev MutationEvent) (kind, text string) {
	kind = mutationNotes[ev]
	switch {
	case kind == "":
		return "", ""
	case from == MutationInFlight && (ev == MApplied || ev == MFailed):
		return "", "" // the call's own outcome
	case kind == NoteApproval:
		return kind, workflow + ": approve " + titleOr(m) + "?"
	case kind == NoteIndeterminate:
		return kind, "did " + titleOr(m) + " happen? " + m.Error
	case kind == NoteNeedsReconcile:
		return kind, titleOr(m) + ": " + m.Error
	}
	return kind, titleOr(m) + ": " + string(m.Status)
}

// moveMutation performs ev on m, a mutation of w, in tx: the table decides
// the new status, by (host, reconciler, user) is recorded where it settles
// the row; a new row is inserted, an existing one written compare-and-set;
// the move is announced (mutationNotes) once tx commits.
func (e *Engine) moveMutation(ctx context.Context, tx *storage.Tx, w *storage.Workflow, m *storage.Mutation, ev MutationEvent, by string) error {
	from := m.WasStatus
	to, err := nextMutation(from, ev)
	if err != nil {
		return fmt.Errorf("mutation %d: %w", m.ID, err)
	}
	m.Status, m.UpdatedAt = to, e.now()
	switch to {
	case MutationApplied, MutationFailed, MutationSkipped:
		m.ResolvedBy = by
	}
	if m.ID == 0 {
		err = tx.InsertMutation(ctx, m, e.keyPrefix)
	} else {
		err = tx.UpdateMutation(ctx, m)
	}
	if err != nil {
		return err
	}
	if kind, text := mutationNote(w.Name, m, from, ev); kind != "" {
		e.announce(tx, kind, w.Name, text)
	}
	return nil
}

// announce tells the front ends of a move once tx commits: a move rolled
// back is never announced.
func (e *Engine) announce(tx *storage.Tx, kind, workflow, text string) {
	tx.AfterCommit(func() { e.notify(kind, workflow, text) })
}

// touchMutation writes a mutation's other fields (a reminder, a count of
// checks), its status unchanged.
func (e *Engine) touchMutation(ctx context.Context, tx *storage.Tx, m *storage.Mutation) error {
	if m.Status != m.WasStatus {
		return fmt.Errorf("mutation %d: %s → %s outside moveMutation", m.ID, m.WasStatus, m.Status)
	}
	m.UpdatedAt = e.now()
	return tx.UpdateMutation(ctx, m)
}

// runMoves: which run status may follow which (chapter 16). Staying put is
// always allowed: a run is closed, or its fields change, at one status.
var runMoves = map[RunStatus][]RunStatus{
	RunActive: {RunPausedTransient, RunPausedApproval, RunPausedReconciliation, RunFailedLogic, RunFailedInternal,
		RunCommitted, RunCrashed},
	RunPausedTransient: {RunActive}, // the same call sent again
	// approved or rejected; or its refused credential or permission was
	// fixed and a new run does the work (ended)
	RunPausedApproval: {RunActive, RunPausedTransient},
	// it happened, or was skipped; or it did not, and a new run does the
	// work (ended)
	RunPausedReconciliation: {RunActive, RunPausedTransient},
	RunFailedLogic:          {}, // a retry is a new run
	RunFailedInternal:       {}, // never retried by itself
	RunCommitted:            {}, // done
	RunCrashed:              {}, // recovery made a new run
}

// ended is the status a paused run closes at when a new run takes its work
// over: chapter 16's paused:transient, the status of an attempt a new run
// follows. A run closed while it still said "waiting for approval" or
// "checking whether it happened" would say so forever; its error stays.
func ended(run *storage.Run) {
	switch run.Status {
	case RunPausedApproval, RunPausedReconciliation:
		run.Status = RunPausedTransient
	}
}

// phaseMoves: phase only moves forward (chapter 06b), along the diagram
// or past checkpoints one transaction goes through at once.
var phaseMoves = map[Phase][]Phase{
	PhasePreparing: {PhasePrepared, PhaseMutating, PhaseEmitting, PhaseCommitted},
	PhasePrepared:  {PhaseMutating, PhaseEmitting, PhaseCommitted},
	PhaseMutating:  {PhaseMutated, PhaseEmitting, PhaseCommitted},
	PhaseMutated:   {PhaseEmitting, PhaseCommitted},
	PhaseEmitting:  {PhaseCommitted},
	PhaseCommitted: {},
}

func allowed[S comparable](table map[S][]S, from, to S) bool {
	if from == to {
		_, known := table[from]
		return known
	}
	for _, s := range table[from] {
		if s == to {
			return true
		}
	}
	return false
}

// checkRunMove is the tables' answer for a run going from (status, phase)
// to (status, phase).
func checkRunMove(from RunStatus, fromPhase Phase, to RunStatus, toPhase Phase) error {
	if !allowed(runMoves, from, to) {
		return fmt.Errorf("%w: a run that is %s cannot become %s", ErrRefused, from, to)
	}
	if !allowed(phaseMoves, fromPhase, toPhase) {
		return fmt.Errorf("%w: a run in phase %s cannot go to %s", ErrRefused, fromPhase, toPhase)
	}
	return nil
}

// Who moves a run, besides the user's answers ("user:approve", ...).
const (
	byScheduler = "scheduler" // the engine running the handler
	byRecovery  = "recovery"  // start-up after a crash
)

// runNotes: what the front ends are told when a run's status changes to
// one of these (the notification's kind; its words are runNote's). A run
// that starts, goes on, passes a checkpoint or is found crashed is not
// news; one that waits on its mutation's question (an approval, a check)
// is announced by the mutation's move.
var runNotes = map[RunStatus]string{
	RunCommitted:      NoteRunCommitted,
	RunFailedLogic:    NoteRunFailed,
	RunFailedInternal: NoteRunFailed,
	// RunPausedTransient is not news: the engine tries again after a
	// back-off, and the person is told when it gives up (the block's
	// reason then asks for them).
	// a refused credential or permission; an approval asked for is the
	// mutation's to announce, and leaves the run without an error
	RunPausedApproval: NoteRunFailed,
}

// runNote is the kind and words of run's move to its status, or "" when it
// is not announced. news, where the mover has some, is what a commit says
// after the handler's name (a producer: how many inputs it found).
func runNote(run *storage.Run, news string) (kind, text string) {
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

// moveRun writes run, a run of w — its new status and phase set on it —
// checked against the tables from where it was read (run.Was) and
// compare-and-set in tx, with by (the scheduler, recovery, the user's
// answer) recorded as who made the move; a change of status is announced
// (runNotes) once tx commits. A new run (id 0) is inserted at the status
// and phase it starts in, unannounced. w may be nil only for a move never
// announced: a new run, or a phase.
func (e *Engine) moveRun(ctx context.Context, tx *storage.Tx, w *storage.Workflow, run *storage.Run, by string) error {
	return e.moveRunSaying(ctx, tx, w, run, by, "")
}

// moveRunSaying is moveRun with news for the announcement of a commit.
func (e *Engine) moveRunSaying(ctx context.Context, tx *storage.Tx, w *storage.Workflow, run *storage.Run, by, news string) error {
	run.UpdatedAt, run.MovedBy = e.now(), by
	if run.ID == 0 {
		_, err := tx.InsertRun(ctx, run)
		return err
	}
	from := run.Was.Status
	if err := checkRunMove(from, run.Was.Phase, run.Status, run.Phase); err != nil {
		return fmt.Errorf("run %d: %w", run.ID, err)
	}
	if err := tx.UpdateRun(ctx, run); err != nil {
		return err
	}
	if from == run.Status {
		return nil
	}
	if kind, text := runNote(run, news); kind != "" {
		if w == nil {
			return fmt.Errorf("run %d: %s → %s is announced: its workflow is needed", run.ID, from, run.Status)
		}
		e.announce(tx, kind, w.Name, text)
	}
	return nil
}

// WorkflowEvent is what the user (or a deploy) does to a workflow.
type WorkflowEvent string

const (
	WDeploy  WorkflowEvent = "deploy"  // a new version; a new workflow starts active
	WRunNow  WorkflowEvent = "run_now" // every producer queued: only while active
	WPause   WorkflowEvent = "pause"
	WResume  WorkflowEvent = "resume"
	WArchive WorkflowEvent = "archive"
)

// workflowMoves: the user's status of a workflow (DESIGN.md §7.1), from
// (the empty status is a workflow not yet deployed), event → to. Deploy
// and run-now stay put, but as moves: their write is compare-and-set on
// the status they were checked against, so a pause that commits first
// makes them conflict instead of queueing work on a paused workflow.
var workflowMoves = map[WorkflowStatus]map[WorkflowEvent]WorkflowStatus{
	"":               {WDeploy: WorkflowActive},
	WorkflowActive:   {WDeploy: WorkflowActive, WRunNow: WorkflowActive, WPause: WorkflowPaused, WArchive: WorkflowArchived},
	WorkflowPaused:   {WDeploy: WorkflowPaused, WResume: WorkflowActive, WArchive: WorkflowArchived},
	WorkflowArchived: {WDeploy: WorkflowArchived, WResume: WorkflowActive},
}

// workflowNotes: the journaled topic (also the front ends' notification
// kind) and words of a change of status.
var workflowNotes = map[WorkflowStatus][2]string{
	WorkflowActive:   {NoteWorkflowResumed, " resumed"},
	WorkflowPaused:   {NoteWorkflowPaused, " paused"},
	WorkflowArchived: {"workflow.archived", " archived"},
}

// moveWorkflow performs ev on w in tx: the table decides the new status; a
// new workflow (id 0) is inserted, an existing one written compare-and-set,
// and a change of status has its event journaled and, once committed, is
// announced to the front ends.
func (e *Engine) moveWorkflow(ctx context.Context, tx *storage.Tx, w *storage.Workflow, ev WorkflowEvent) error {
	from := w.Status
	if w.ID == 0 {
		from = ""
	}
	to, ok := workflowMoves[from][ev]
	if !ok {
		return fmt.Errorf("%w: workflow %s is %s: cannot %s", ErrRefused, w.Name, orNew(string(from)), ev)
	}
	now := e.now()
	if w.ID == 0 {
		// CreateWorkflow inserts the row active, which is the table's answer
		id, err := tx.CreateWorkflow(ctx, w.Name, now)
		if err != nil {
			return err
		}
		w.ID, w.Status = id, to
		return nil
	}
	if err := tx.SetWorkflowStatus(ctx, w.ID, from, to, now); err != nil {
		return err
	}
	w.Status = to
	id := w.ID
	tx.AfterCommit(func() { e.statuses.Store(id, to) })
	if from == to {
		return nil
	}
	note := workflowNotes[to]
	e.announce(tx, note[0], w.Name, w.Name+note[1])
	return e.journal(tx, w, note[0], map[string]any{"text": w.Name + note[1]})
}

// blockMoves: which block may follow which (DESIGN.md §7.1). A block is
// the engine's; it is lifted (BlockNone) when its cause is over or the
// user answers it, and a bug of ours (internal) may stop a workflow
// whatever it waits on. Otherwise nothing runs while a workflow is blocked,
// so one block follows another only where the same subject goes on:
var blockMoves = map[BlockKind][]BlockKind{
	// a failure, a question, a check; lifting nothing is no move at all
	BlockNone: {BlockNone, BlockApproval, BlockReconciliation, BlockRepair, BlockTransient, BlockInternal,
		BlockPermission, BlockAuth},
	BlockApproval: {BlockNone, BlockInternal}, // approved or rejected
	// checked again or handed to the user; found not to have happened,
	// the fresh attempt waits a back-off
	BlockReconciliation: {BlockNone, BlockReconciliation, BlockTransient, BlockInternal},
	BlockRepair:         {BlockNone, BlockRepair, BlockInternal}, // repaired or retried; no repair came
	// keep stopped while re-sending the call: recovery hands it to the
	// reconciler
	BlockTransient:  {BlockNone, BlockReconciliation, BlockInternal},
	BlockPermission: {BlockNone, BlockInternal},
	BlockAuth:       {BlockNone, BlockInternal},
	// a run left active under the block goes on, and may fail or wait
	BlockInternal: {BlockNone, BlockApproval, BlockReconciliation, BlockRepair, BlockTransient, BlockInternal,
		BlockPermission, BlockAuth},
}

// checkBlockMove is the table's answer for a block going from → to.
func checkBlockMove(from, to BlockKind) error {
	if !slices.Contains(blockMoves[from], to) {
		return fmt.Errorf("%w: a workflow blocked on %s cannot become blocked on %s", ErrRefused, blockWord(from), blockWord(to))
	}
	return nil
}

func blockWord(k BlockKind) string {
	if k == BlockNone {
		return "nothing"
	}
	return string(k)
}

// setBlock moves w's block to kind (BlockNone lifts it): checked against
// the table from the block w holds, and written compare-and-set on it, so
// w must have been read in tx (reread) — a block another transition moved
// first is a conflict, never overwritten. A block that waits on the user
// is journaled.
func (e *Engine) setBlock(ctx context.Context, tx *storage.Tx, w *storage.Workflow, kind BlockKind, reason string, runID int64, retryAt *time.Time) error {
	// blockqueue.go: concurrent runs take turns holding the block
	queued, err := queuedBehind(ctx, tx, w, kind, runID)
	if err != nil {
		return err
	}
	if queued {
		return nil
	}
	from := w.BlockKind
	if kind == BlockNone && w.BlockKind != BlockNone {
		var err error
		if kind, reason, runID, retryAt, err = queuedBlock(ctx, tx, w); err != nil {
			return err
		}
		from = BlockNone // lifted, then handed on
	}
	if err := checkBlockMove(from, kind); err != nil {
		return fmt.Errorf("workflow %s: %w", w.Name, err)
	}
	to := storage.Block{Kind: kind, Reason: reason, RunID: runID, RetryAt: retryAt}
	if err := tx.SetBlock(ctx, w.ID, w.BlockKind, w.BlockRunID, to, e.now()); err != nil {
		return err
	}
	w.BlockKind, w.BlockReason, w.BlockRunID, w.RetryAt = kind, reason, runID, retryAt
	mutation, err := blockingMutation(ctx, tx.Q, w)
	if err != nil {
		return err
	}
	if needsUser(w, mutation) {
		return e.journal(tx, w, "workflow.needs_attention", map[string]any{"run": runID, "kind": kind, "reason": reason})
	}
	return nil
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
