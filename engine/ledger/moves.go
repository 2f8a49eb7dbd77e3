package ledger

// The machines' tables (DESIGN.md §7.0, §7.1, chapter 16): one table of
// allowed moves per machine. Anything not in a table is refused.

import (
	"fmt"
	"slices"

	"keep/storage"
)

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

// MutationEvents is every mutation event, for tests that walk the table.
func MutationEvents() []MutationEvent {
	return []MutationEvent{MAsk, MSend, MApprove, MApplied, MFailed, MUncertain, MRetryLater, MCheckLater, MGiveUp,
		MTryAgain, MResend, MSkip}
}

// mutationMoves is every way a mutation can change: from (the empty status
// is a row not yet written), event → to.
var mutationMoves = map[storage.MutationStatus]map[MutationEvent]storage.MutationStatus{
	"":                               {MAsk: storage.MutationAwaitingApproval, MSend: storage.MutationInFlight},
	storage.MutationAwaitingApproval: {MApprove: storage.MutationApproved, MSkip: storage.MutationSkipped},
	storage.MutationApproved:         {MSend: storage.MutationInFlight, MSkip: storage.MutationSkipped},
	storage.MutationInFlight: {MApplied: storage.MutationApplied, MFailed: storage.MutationFailed,
		MUncertain: storage.MutationNeedsReconcile, MRetryLater: storage.MutationInFlight, MSend: storage.MutationInFlight},
	storage.MutationNeedsReconcile: {MApplied: storage.MutationApplied, MFailed: storage.MutationFailed,
		MCheckLater: storage.MutationNeedsReconcile, MGiveUp: storage.MutationIndeterminate,
		MTryAgain: storage.MutationNeedsReconcile, MSkip: storage.MutationSkipped, MResend: storage.MutationInFlight},
	storage.MutationIndeterminate: {MApplied: storage.MutationApplied, MFailed: storage.MutationFailed,
		MTryAgain: storage.MutationNeedsReconcile, MSkip: storage.MutationSkipped, MResend: storage.MutationInFlight},
	// a failed row whose input the user skips is marked skipped with it
	storage.MutationFailed:  {MSkip: storage.MutationSkipped},
	storage.MutationApplied: {},
	storage.MutationSkipped: {},
}

// MutationStatesKnown is how many statuses (the new row included) the
// mutation table has a row for.
func MutationStatesKnown() int { return len(mutationMoves) }

// NextMutation is the table's answer for (from, event).
func NextMutation(from storage.MutationStatus, ev MutationEvent) (storage.MutationStatus, error) {
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

// runMoves: which run status may follow which (chapter 16). Staying put is
// always allowed: a run is closed, or its fields change, at one status.
var runMoves = map[storage.RunStatus][]storage.RunStatus{
	storage.RunActive: {storage.RunPausedTransient, storage.RunPausedApproval, storage.RunPausedReconciliation,
		storage.RunFailedLogic, storage.RunFailedInternal, storage.RunCommitted, storage.RunCrashed},
	storage.RunPausedTransient: {storage.RunActive}, // the same call sent again
	// approved or rejected; or its refused credential or permission was
	// fixed and a new run does the work (ended)
	storage.RunPausedApproval: {storage.RunActive, storage.RunPausedTransient},
	// it happened, or was skipped; or it did not, and a new run does the
	// work (ended)
	storage.RunPausedReconciliation: {storage.RunActive, storage.RunPausedTransient},
	storage.RunFailedLogic:          {}, // a retry is a new run
	storage.RunFailedInternal:       {}, // never retried by itself
	storage.RunCommitted:            {}, // done
	storage.RunCrashed:              {}, // recovery made a new run
}

// Ended is the status a paused run closes at when a new run takes its work
// over: chapter 16's paused:transient, the status of an attempt a new run
// follows. A run closed while it still said "waiting for approval" or
// "checking whether it happened" would say so forever; its error stays.
func Ended(run *storage.Run) {
	switch run.Status {
	case storage.RunPausedApproval, storage.RunPausedReconciliation:
		run.Status = storage.RunPausedTransient
	}
}

// phaseMoves: phase only moves forward (chapter 06b), along the diagram
// or past checkpoints one transaction goes through at once.
var phaseMoves = map[storage.Phase][]storage.Phase{
	storage.PhasePreparing: {storage.PhasePrepared, storage.PhaseMutating, storage.PhaseEmitting, storage.PhaseCommitted},
	storage.PhasePrepared:  {storage.PhaseMutating, storage.PhaseEmitting, storage.PhaseCommitted},
	storage.PhaseMutating:  {storage.PhaseMutated, storage.PhaseEmitting, storage.PhaseCommitted},
	storage.PhaseMutated:   {storage.PhaseEmitting, storage.PhaseCommitted},
	storage.PhaseEmitting:  {storage.PhaseCommitted},
	storage.PhaseCommitted: {},
}

func allowed[S comparable](table map[S][]S, from, to S) bool {
	if from == to {
		_, known := table[from]
		return known
	}
	return slices.Contains(table[from], to)
}

// CheckRunMove is the tables' answer for a run going from (status, phase)
// to (status, phase).
func CheckRunMove(from storage.RunStatus, fromPhase storage.Phase, to storage.RunStatus, toPhase storage.Phase) error {
	if !allowed(runMoves, from, to) {
		return fmt.Errorf("%w: a run that is %s cannot become %s", ErrRefused, from, to)
	}
	if !allowed(phaseMoves, fromPhase, toPhase) {
		return fmt.Errorf("%w: a run in phase %s cannot go to %s", ErrRefused, fromPhase, toPhase)
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
var workflowMoves = map[storage.WorkflowStatus]map[WorkflowEvent]storage.WorkflowStatus{
	"": {WDeploy: storage.WorkflowActive},
	storage.WorkflowActive: {WDeploy: storage.WorkflowActive, WRunNow: storage.WorkflowActive,
		WPause: storage.WorkflowPaused, WArchive: storage.WorkflowArchived},
	storage.WorkflowPaused: {WDeploy: storage.WorkflowPaused, WResume: storage.WorkflowActive,
		WArchive: storage.WorkflowArchived},
	storage.WorkflowArchived: {WDeploy: storage.WorkflowArchived, WResume: storage.WorkflowActive},
}

// NextWorkflow is the table's answer for (from, event); ok is false for a
// move the table refuses.
func NextWorkflow(from storage.WorkflowStatus, ev WorkflowEvent) (to storage.WorkflowStatus, ok bool) {
	to, ok = workflowMoves[from][ev]
	return to, ok
}

// blockMoves: which block may follow which (DESIGN.md §7.1). A block is
// the engine's; it is lifted (BlockNone) when its cause is over or the
// user answers it, and a bug of ours (internal) may stop a workflow
// whatever it waits on. Otherwise nothing runs while a workflow is blocked,
// so one block follows another only where the same subject goes on:
var blockMoves = map[storage.BlockKind][]storage.BlockKind{
	// a failure, a question, a check; lifting nothing is no move at all
	storage.BlockNone: {storage.BlockNone, storage.BlockApproval, storage.BlockReconciliation, storage.BlockRepair,
		storage.BlockTransient, storage.BlockInternal, storage.BlockPermission, storage.BlockAuth},
	storage.BlockApproval: {storage.BlockNone, storage.BlockInternal}, // approved or rejected
	// checked again or handed to the user; found not to have happened,
	// the fresh attempt waits a back-off
	storage.BlockReconciliation: {storage.BlockNone, storage.BlockReconciliation, storage.BlockTransient, storage.BlockInternal},
	// repaired or retried; no repair came
	storage.BlockRepair: {storage.BlockNone, storage.BlockRepair, storage.BlockInternal},
	// keep stopped while re-sending the call: recovery hands it to the
	// reconciler
	storage.BlockTransient:  {storage.BlockNone, storage.BlockReconciliation, storage.BlockInternal},
	storage.BlockPermission: {storage.BlockNone, storage.BlockInternal},
	storage.BlockAuth:       {storage.BlockNone, storage.BlockInternal},
	// a run left active under the block goes on, and may fail or wait
	storage.BlockInternal: {storage.BlockNone, storage.BlockApproval, storage.BlockReconciliation, storage.BlockRepair,
		storage.BlockTransient, storage.BlockInternal, storage.BlockPermission, storage.BlockAuth},
}

// BlockKindsKnown is how many kinds the block table has a row for.
func BlockKindsKnown() int { return len(blockMoves) }

// CheckBlockMove is the table's answer for a block going from → to.
func CheckBlockMove(from, to storage.BlockKind) error {
	if !slices.Contains(blockMoves[from], to) {
		return fmt.Errorf("%w: a workflow blocked on %s cannot become blocked on %s", ErrRefused, blockWord(from), blockWord(to))
	}
	return nil
}

func blockWord(k storage.BlockKind) string {
	if k == storage.BlockNone {
		return "nothing"
	}
	return string(k)
}
