//go:build !linux

package files

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// beingWritten says whether list should leave out the regular file name of
// the folder dirfd, st its stat. This kernel cannot tell whether a file is
// open for writing (Linux's leases are Linux's), so the settle rule
// decides: a file changed within the last settle is left out, and a
// writer that pauses for longer is not caught.
func beingWritten(dirfd int, name string, st *unix.Stat_t, now time.Time) bool {
	return recentlyChanged(st, now)
}

// stillWritten says whether read should refuse the regular file f for now:
// never here, with no kernel to ask (the settle rule would make every read
// of a file just written wait).
func stillWritten(f *os.File) bool { return false }
