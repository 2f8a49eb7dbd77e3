package ledger

import (
	"keep/connectors"
	"keep/storage"
)

// Class is a failure's class (DESIGN.md §7.2) as it reaches a run. Its
// words are the connectors' (connectors.Class), written once there and
// decided at the source; this type adds what they mean for a run (its
// status, the block) and one word of the engine's own, Parked.
type Class string

const (
	ClassTransient  = Class(connectors.Transient)
	ClassLogic      = Class(connectors.Logic)
	ClassAuth       = Class(connectors.Auth)
	ClassPermission = Class(connectors.Permission)
	ClassInternal   = Class(connectors.Internal)
	// ClassParked: the engine is stopping; the run is left where it is,
	// not counted as a failure.
	ClassParked Class = "parked"
)

// ClassOf is a connector's class as it reaches the run: the same word,
// but an uncertain call leaves its run transient (the mutation's own
// uncertainty is the reconciler's, not the run's), and a word this ledger
// does not know is internal.
func ClassOf(c connectors.Class) Class {
	switch c {
	case connectors.Uncertain:
		return ClassTransient
	case connectors.Transient, connectors.Logic, connectors.Auth, connectors.Permission:
		return Class(c)
	}
	return ClassInternal
}

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
