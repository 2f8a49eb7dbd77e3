package engine

import "keep/storage"

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
