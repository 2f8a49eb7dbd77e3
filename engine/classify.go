package engine

import (
	"context"
	"errors"
	"fmt"

	"keep/connectors"
	"keep/engine/ledger"
	"keep/sandbox"
)

// Failure classes of DESIGN.md §7.2 (ledger.Class).
type class = ledger.Class

const (
	classTransient  = ledger.ClassTransient
	classLogic      = ledger.ClassLogic
	classAuth       = ledger.ClassAuth
	classPermission = ledger.ClassPermission
	classInternal   = ledger.ClassInternal
	classParked     = ledger.ClassParked
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
		return ledger.ClassOf(ce.Class)
	}
	if errors.Is(err, context.Canceled) {
		return classParked
	}
	return classInternal
}

func describe(err error) string {
	var se *sandbox.Error
	if errors.As(err, &se) {
		return se.Error()
	}
	return fmt.Sprint(err)
}
