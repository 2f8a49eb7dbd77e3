package storage

import (
	"database/sql"
	"errors"
	"fmt"
)

// The states of keep's machines (DESIGN.md §7.0, chapters 06b and 16).
// They are declared here, the leaf both the engine and the TUI reach (the
// engine re-exports them), and nowhere else: a test refuses a status
// literal outside a const declaration. Which moves between them are
// allowed is the engine's (engine/machine.go).

// RunStatus is chapter 16's run status, orthogonal to the phase.
type RunStatus string

const (
	RunActive               RunStatus = "active"
	RunPausedTransient      RunStatus = "paused:transient"
	RunPausedApproval       RunStatus = "paused:approval"
	RunPausedReconciliation RunStatus = "paused:reconciliation"
	RunFailedLogic          RunStatus = "failed:logic"
	RunFailedInternal       RunStatus = "failed:internal"
	RunCommitted            RunStatus = "committed"
	RunCrashed              RunStatus = "crashed"
)

// RunState is where a run is: its status and its phase.
type RunState struct {
	Status RunStatus
	Phase  Phase
}

// Phase is chapter 06b's execution phase; it only moves forward.
type Phase string

const (
	PhasePreparing Phase = "preparing"
	PhasePrepared  Phase = "prepared"
	PhaseMutating  Phase = "mutating"
	PhaseMutated   Phase = "mutated"
	PhaseEmitting  Phase = "emitting"
	PhaseCommitted Phase = "committed"
)

// Rank orders phases: a run past its mutation has Rank >= PhaseMutated's.
func (p Phase) Rank() int {
	switch p {
	case PhasePreparing:
		return 0
	case PhasePrepared:
		return 1
	case PhaseMutating:
		return 2
	case PhaseMutated:
		return 3
	case PhaseEmitting:
		return 4
	case PhaseCommitted:
		return 5
	}
	return -1
}

// MutationStatus is the ledger state of DESIGN.md §7.3.
type MutationStatus string

const (
	MutationAwaitingApproval MutationStatus = "awaiting_approval"
	// MutationApproved: the user approved it; the host has not sent it yet.
	MutationApproved       MutationStatus = "approved"
	MutationInFlight       MutationStatus = "in_flight"
	MutationApplied        MutationStatus = "applied"
	MutationFailed         MutationStatus = "failed"
	MutationNeedsReconcile MutationStatus = "needs_reconcile"
	MutationIndeterminate  MutationStatus = "indeterminate"
	MutationSkipped        MutationStatus = "skipped"
)

// BlockKind is why the engine holds a workflow (DESIGN.md §7.1); empty is
// no block.
type BlockKind string

const (
	BlockNone BlockKind = ""
	// BlockApproval: a mutation waits for the user's approval.
	BlockApproval       BlockKind = "approval"
	BlockReconciliation BlockKind = "reconciliation"
	BlockRepair         BlockKind = "repair"
	BlockTransient      BlockKind = "transient"
	BlockInternal       BlockKind = "internal"
	// BlockPermission: a call outside the workflow's grants was refused.
	BlockPermission BlockKind = "permission"
	// BlockAuth: credentials are missing, expired or refused ("sign in to
	// NAME again").
	BlockAuth BlockKind = "auth"
)

// WorkflowStatus is the user's status of a workflow (DESIGN.md §7.1).
type WorkflowStatus string

const (
	WorkflowActive   WorkflowStatus = "active"
	WorkflowPaused   WorkflowStatus = "paused"
	WorkflowArchived WorkflowStatus = "archived"
)

// EventStatus is an event's status (chapter 06a).
type EventStatus string

const (
	EventPending  EventStatus = "pending"
	EventConsumed EventStatus = "consumed"
	EventSkipped  EventStatus = "skipped"
)

// GrantMode is what a grant lets a mutation do (DESIGN.md §7.4).
type GrantMode string

const (
	GrantAllow GrantMode = "allow"
	GrantAsk   GrantMode = "ask"
	GrantDeny  GrantMode = "deny"
)

// The full lists, for what offers a choice among the states (a flag's
// values, a filter); the literal test checks each holds every constant of
// its type, so a state added above and not here fails it.

func RunStatuses() []RunStatus {
	return []RunStatus{RunActive, RunPausedTransient, RunPausedApproval, RunPausedReconciliation,
		RunFailedLogic, RunFailedInternal, RunCommitted, RunCrashed}
}

func MutationStatuses() []MutationStatus {
	return []MutationStatus{MutationAwaitingApproval, MutationApproved, MutationInFlight, MutationApplied,
		MutationFailed, MutationNeedsReconcile, MutationIndeterminate, MutationSkipped}
}

func EventStatuses() []EventStatus {
	return []EventStatus{EventPending, EventConsumed, EventSkipped}
}

func GrantModes() []GrantMode {
	return []GrantMode{GrantAllow, GrantAsk, GrantDeny}
}

// ErrConflict: a compare-and-set write found the row no longer in the
// state the caller read (another transition moved it first).
var ErrConflict = errors.New("conflict: the row moved meanwhile")

func changedOne(res sql.Result, err error, what string, id int64) error {
	if err != nil {
		return fmt.Errorf("update %s %d: %w", what, id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("update %s %d: %w", what, id, err)
	}
	if n == 0 {
		return fmt.Errorf("%s %d: %w", what, id, ErrConflict)
	}
	return nil
}
