package files

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames, failing with EEXIST rather than replacing what
// is at the new name; a file system without RENAME_NOREPLACE gets a plain
// rename, after move's own check.
func renameNoReplace(fromDir *os.File, from string, toDir *os.File, to string) error {
	err := unix.Renameat2(int(fromDir.Fd()), from, int(toDir.Fd()), to, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		err = unix.Renameat(int(fromDir.Fd()), from, int(toDir.Fd()), to)
	}
	return err
}
