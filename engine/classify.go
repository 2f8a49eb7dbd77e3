package engine

import (
	"context"
	"errors"
	"fmt"

	"keep/connectors"
	"keep/sandbox"
)

// Failure classes of DESIGN.md §7.2.
type class string

const (
	classTransient  class = "transient"
	classLogic      class = "logic"
	classAuth       class = "auth"
	classPermission class = "permission"
	classInternal   class = "internal"
	// classParked: the engine is stopping; the run is left where it is,
	// not counted as a failure.
	classParked class = "parked"
)

// classify decides a failed phase's class at the source (trap 3): the
// script's own errors are logic, a connector says what its error was, and
// anything else is ours.
func classify(err error) class {
	var se *sandbox.Error
	if errors.As(err, &se) {
		switch se.Kind {
		case sandbox.ErrCancelled:
			return classParked
		default:
			// a runaway loop, a deep recursion, a blown size limit are the
			// script's doing: repairable, like a throw
			return classLogic
		}
	}
	var ce *connectors.Error
	if errors.As(err, &ce) {
		switch ce.Class {
		case connectors.Transient, connectors.Uncertain:
			return classTransient
		case connectors.Logic:
			return classLogic
		case connectors.Auth:
			return classAuth
		case connectors.Permission:
			return classPermission
		}
		return classInternal
	}
	if errors.Is(err, context.Canceled) {
		return classParked
	}
	return classInternal
}

// runStatus maps a class onto chapter 16's run statuses.
func (c class) runStatus() RunStatus {
	switch c {
	case classTransient:
		return RunPausedTransient
	case classLogic:
		return RunFailedLogic
	case classAuth, classPermission:
		return RunPausedApproval
	default:
		return RunFailedInternal
	}
}

// blockKind maps a class onto the workflow block it causes: a refused
// credential, a refused permission and an approval prompt are distinct
// kinds, though each run waits as paused:approval (chapter 16).
func (c class) blockKind() BlockKind {
	switch c {
	case classTransient:
		return BlockTransient
	case classLogic:
		return BlockRepair
	case classAuth:
		return BlockAuth
	case classPermission:
		return BlockPermission
	default:
		return BlockInternal
	}
}

func describe(err error) string {
	var se *sandbox.Error
	if errors.As(err, &se) {
		return se.Error()
	}
	return fmt.Sprint(err)
}
