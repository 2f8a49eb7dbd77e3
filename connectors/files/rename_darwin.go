package files

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames, failing with EEXIST rather than replacing what
// is at the new name (renameatx_np's RENAME_EXCL); a file system without
// it gets a plain rename, after move's own check.
func renameNoReplace(fromDir *os.File, from string, toDir *os.File, to string) error {
	err := unix.RenameatxNp(int(fromDir.Fd()), from, int(toDir.Fd()), to, unix.RENAME_EXCL)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTSUP) {
		err = unix.Renameat(int(fromDir.Fd()), from, int(toDir.Fd()), to)
	}
	return err
}
