package storage

import (
	"os"
	"syscall"
)

// datasync flushes f's data and what reading it needs (its size), not its
// times: the log is rewritten in place, and a full fsync would commit the
// file system's journal for a new modification time at every sync.
func datasync(f *os.File) error {
	return syscall.Fdatasync(int(f.Fd()))
}
