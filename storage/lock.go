package storage

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// LockedError says another process holds the database.
type LockedError struct {
	Path string
	PID  int
}

func (e *LockedError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("database %s is held by another keep engine (pid %d)", e.Path, e.PID)
	}
	return fmt.Sprintf("database %s is held by another keep engine", e.Path)
}

type fileLock struct {
	f    *os.File
	next *fileLock // a second lock taken with it (acquireLocks)
}

// acquireLocks takes the lock of the database at path, and when path
// reaches it through a symbolic link, the lock of the file itself too:
// the first is the one other keep processes given the same path wait on
// (engine/daemon), the second the one an engine given the file's own path,
// or another link, takes.
func acquireLocks(path, real string) (*fileLock, error) {
	l, err := acquireLock(path + ".lock")
	if err != nil || real == path {
		return l, err
	}
	if l.next, err = acquireLock(real + ".lock"); err != nil {
		l.release()
		return nil, err
	}
	return l, nil
}

// acquireLock takes an exclusive, non-blocking flock on path and writes our
// pid into it, so a refused second engine can name the holder. The kernel
// drops the lock when the process dies, so a SIGKILLed engine never leaves a
// stale lock behind.
func acquireLock(path string) (*fileLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("storage: open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &LockedError{Path: strings.TrimSuffix(path, ".lock"), PID: holderPIDSoon(path)}
		}
		return nil, fmt.Errorf("storage: lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		_ = f.Sync()
	}
	return &fileLock{f: f}, nil
}

// holderPIDSoon is the holder's pid, waiting a moment for it: a holder
// writes it just after it takes the lock, and a refusal read in between
// would name no one, or a holder that has died (a killed one leaves its
// pid in the file).
func holderPIDSoon(lockPath string) int {
	pid := HolderPID(lockPath)
	for i := 0; !alive(pid) && i < 20; i++ {
		time.Sleep(5 * time.Millisecond)
		pid = HolderPID(lockPath)
	}
	if !alive(pid) {
		return 0
	}
	return pid
}

func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// HolderPID reads the pid written into a lock file, or 0.
func HolderPID(lockPath string) int {
	b, err := os.ReadFile(lockPath)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

func (l *fileLock) release() error {
	var err error
	if l.next != nil {
		err = l.next.release()
	}
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	return errors.Join(err, l.f.Close())
}
