package storage

import (
	"os"
	"syscall"
)

// logFile is the log opened for its syncs, once (durability.fsync). It is
// a bare descriptor: an *os.File registers with the poller, and handing
// out its descriptor switches it back to blocking, four system calls a
// sync that buy nothing here.
type logFile struct{ fd int }

func openLog(path string) (*logFile, error) {
	var fd int
	err := retryEINTR(func() (err error) {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return &logFile{fd: fd}, nil
}

// sync flushes the file's data and what reading it needs (its size), not
// its times: the log is rewritten in place, and a full fsync would commit
// the file system's journal for a new modification time at every sync. A
// file system in user space may interrupt it (EINTR, on the runtime's
// preemption signal): it is tried again, as package os does.
func (f *logFile) sync() error {
	if err := retryEINTR(func() error { return syscall.Fdatasync(f.fd) }); err != nil {
		return &os.PathError{Op: "fdatasync", Path: "log", Err: err}
	}
	return nil
}

func (f *logFile) close() error { return syscall.Close(f.fd) }

// syncFile flushes the data of the file at path (openLog, sync, close).
func syncFile(path string) error {
	f, err := openLog(path)
	if err != nil {
		return err
	}
	err = f.sync()
	if cerr := f.close(); err == nil {
		err = cerr
	}
	return err
}

func retryEINTR(fn func() error) error {
	for {
		if err := fn(); err != syscall.EINTR {
			return err
		}
	}
}
