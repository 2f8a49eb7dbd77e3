package sheets

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"keep/connectors"
)

// classifyIO classifies a file system failure that happened before any
// change to a sheet: either trying again may work (Transient) or it will fail
// the same way until someone changes the file system (Logic). Never Uncertain:
// writeAtomic classifies failures from the rename on itself.
func classifyIO(op string, err error) error {
	return &connectors.Error{Class: ioClass(err), Err: fmt.Errorf("%s: %w", op, err)}
}

func ioClass(err error) connectors.Class {
	switch {
	case errors.Is(err, connectors.ErrLinkOnTheWay):
		// A folder checked inside the roots became a link during the call.
		return connectors.Permission
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return connectors.Transient
	case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EBUSY), errors.Is(err, syscall.EINTR),
		errors.Is(err, syscall.ETXTBSY), errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT),
		errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE), errors.Is(err, syscall.ENOMEM):
		// Busy, interrupted or out of room: the same write may work later.
		return connectors.Transient
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS),
		errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EISDIR),
		errors.Is(err, syscall.ENAMETOOLONG), errors.Is(err, syscall.ELOOP),
		errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrInvalid):
		// The file system refuses this path as it stands; a retry fails the
		// same way until a person changes it. (An OS permission error is not
		// the Permission class: no grant would make it work.)
		return connectors.Logic
	}
	// An I/O failure we can't name, before any change: retrying is harmless,
	// and the host's retry limit brings it to a person if it persists.
	return connectors.Transient
}
