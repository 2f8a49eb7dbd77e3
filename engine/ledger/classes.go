package ledger

import "keep/storage"

// Class is a failure's class (DESIGN.md §7.2), decided at its source by
// the engine; the ledger maps it onto the run's status and the block.
type Class string

const (
	ClassTransient  Class = "transient"
	ClassLogic      Class = "logic"
	ClassAuth       Class = "auth"
	ClassPermission Class = "permission"
	ClassInternal   Class = "internal"
	// ClassParked: the engine is stopping; the run is left where it is,
	// not counted as a failure.
	ClassParked Class = "parked"
)

// RunStatus maps a class onto chapter 16's run statuses.
func (c Class) RunStatus() storage.RunStatus {
	switch c {
	case ClassTransient:
		return storage.RunPausedTransient
	case ClassLogic:
		return storage.RunFailedLogic
	case ClassAuth, ClassPermission:
		return storage.RunPausedApproval
	default:
		return storage.RunFailedInternal
	}
}

// BlockKind maps a class onto the workflow block it causes: a refused
// credential, a refused permission and an approval prompt are distinct
// kinds, though each run waits as paused:approval (chapter 16).
func (c Class) BlockKind() storage.BlockKind {
	switch c {
	case ClassTransient:
		return storage.BlockTransient
	case ClassLogic:
		return storage.BlockRepair
	case ClassAuth:
		return storage.BlockAuth
	case ClassPermission:
		return storage.BlockPermission
	default:
		return storage.BlockInternal
	}
}
