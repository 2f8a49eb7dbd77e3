package storage

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrDiskFull is what a write or an Open that found no room on the disk
// holding the database is (errors.Is): a *DiskFullError.
var ErrDiskFull = errors.New("storage: the disk is full")

// DiskFullError says the disk holding the database is full, where, and how
// much is left. SQLite says "database or disk is full" for a write, and
// only "disk I/O error" when it could not grow its shared-memory file at
// open: neither names the disk, and the second not even the cause.
type DiskFullError struct {
	Path string // the database file
	Free uint64 // bytes free to keep on its file system when it was asked
	Err  error  // what SQLite or the system said
}

func (e *DiskFullError) Error() string {
	return fmt.Sprintf("the disk holding keep's database %s is full (%d bytes free in %s): nothing was written, and nothing committed before was lost; "+
		"free some space there and try again (%v)", e.Path, e.Free, filepath.Dir(e.Path), e.Err)
}

func (e *DiskFullError) Unwrap() error { return e.Err }

func (e *DiskFullError) Is(target error) bool { return target == ErrDiskFull }

// nearlyFull is free space below which an I/O error is taken for a full
// disk: SQLite writes whole pages, and a log frame or a page of its
// shared-memory file (32 KiB) does not fit in less.
const nearlyFull = 64 << 10

// freeBytes is the space left to an unprivileged writer on the file system
// holding dir; a variable so a test can be a file system with none.
var freeBytes = func(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}

// diskFull names a full disk in err, a failure of a write or of Open of
// the database at path: SQLITE_FULL or ENOSPC are one whatever the space
// now (a write's own rollback may have freed some), an I/O error is one
// when the file system has no room left. Anything else is left as it is.
func diskFull(path string, err error) error {
	if err == nil || errors.Is(err, ErrDiskFull) {
		return err
	}
	var se *sqlite.Error
	isSQLite := errors.As(err, &se)
	full := errors.Is(err, syscall.ENOSPC) || isSQLite && se.Code()&0xff == sqlite3.SQLITE_FULL
	ioErr := isSQLite && se.Code()&0xff == sqlite3.SQLITE_IOERR || strings.Contains(err.Error(), "disk I/O error")
	if !full && !ioErr {
		return err
	}
	free, serr := freeBytes(filepath.Dir(path))
	if serr != nil || !full && free >= nearlyFull {
		return err
	}
	return &DiskFullError{Path: path, Free: free, Err: err}
}
