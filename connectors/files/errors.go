package files

import (
	"errors"
	"io/fs"
	"syscall"

	"keep/connectors"
)

// classify maps an OS error from a step that has not changed anything yet.
// What the same call will hit again (permissions, a read-only disk, a file
// where a folder should be) is a logic error; a full or failing disk may
// recover, so it is transient.
func classify(err error) connectors.Class {
	switch {
	case errors.Is(err, connectors.ErrLinkOnTheWay):
		// A folder checked inside the roots became a link during the call:
		// whoever did it, the use is refused as the check would have been.
		return connectors.Permission
	case errors.Is(err, fs.ErrPermission),
		errors.Is(err, syscall.EROFS),
		errors.Is(err, syscall.ENOTDIR),
		errors.Is(err, syscall.EISDIR),
		errors.Is(err, syscall.ENAMETOOLONG),
		errors.Is(err, syscall.ELOOP),
		errors.Is(err, syscall.EXDEV),
		errors.Is(err, syscall.EINVAL), // a NUL byte in a path, say
		errors.Is(err, syscall.ENXIO),  // a FIFO with no reader, a socket
		errors.Is(err, fs.ErrExist),
		errors.Is(err, fs.ErrNotExist):
		return connectors.Logic
	default:
		// ENOSPC, EIO, EMFILE, EINTR and whatever else the disk may throw.
		return connectors.Transient
	}
}

// fail classifies err from a step before any change; what is the verb
// ("write notes/a.txt").
func fail(what string, err error) error {
	return connectors.Errorf(classify(err), "%s: %w", what, err)
}

// Errnos the write path distinguishes.
var (
	errIO    error = syscall.EIO
	errInval error = syscall.EINVAL
)
