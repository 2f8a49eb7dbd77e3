package storage

import (
	"os"
	"syscall"
)

// syncFile flushes the data of the file at path and what reading it needs
// (its size), not its times: the log is rewritten in place, and a full
// fsync would commit the file system's journal for a new modification time
// at every sync. The file is opened with a bare descriptor: an *os.File
// registers with the poller, and handing out its descriptor switches it
// back to blocking, four system calls a sync that buy nothing here. A file
// system in user space may interrupt either call (EINTR, on the runtime's
// preemption signal): both are tried again, as package os does.
func syncFile(path string) error {
	var fd int
	err := retryEINTR(func() (err error) {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	err = retryEINTR(func() error { return syscall.Fdatasync(fd) })
	if cerr := syscall.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		return &os.PathError{Op: "fdatasync", Path: path, Err: err}
	}
	return nil
}

func retryEINTR(fn func() error) error {
	for {
		if err := fn(); err != syscall.EINTR {
			return err
		}
	}
}
