package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"keep/engine"
)

// The start-up handshake between keep processes on one database.
// storage's lock (DB.lock) says that some process has the database open; two
// more lock files beside it say what kind of process that is:
//
//	DB.engine    held for its whole life by a long-lived engine (a daemon,
//	             or the TUI with the engine in-process), taken before DB.lock
//	DB.starting  held by a daemon from before it takes DB.lock until it
//	             answers on its socket
//
// So a daemon that finds DB.lock taken knows from DB.engine whether a short
// command holds it (wait until it is done) or another engine does (refuse),
// and a command that finds DB.lock taken waits on DB.starting for a starting
// daemon to answer instead of giving up. They are flocks: the kernel drops
// them when a process dies, and nobody waits by polling. The files are never
// removed (removing a lock file lets two processes lock two different files).

// Claim is a long-lived engine's hold on a database: DB.engine, and for a
// daemon DB.starting until Ready.
type Claim struct {
	db               string
	engine, starting *os.File
	waiting          func(pid int, who string)
}

// ClaimOpts say what the claimant is.
type ClaimOpts struct {
	// Serving: the claimant will answer on the database's socket (a daemon),
	// so it holds DB.starting until Ready, and commands wait for it.
	Serving bool
	// Waiting is told, before the claim blocks, whom it waits for: the pid
	// (0 when unknown) and what that process is. Default: nothing is said.
	Waiting func(pid int, who string)
}

// ClaimEngine takes dbPath for a long-lived engine. Another daemon or TUI
// holding it is refused with *engine.LockedError naming its pid; a daemon
// starting at the same moment is waited for first (and then refused).
func ClaimEngine(ctx context.Context, dbPath string, o ClaimOpts) (*Claim, error) {
	db, err := filepath.Abs(dbPath)
	if err != nil {
		return nil, fmt.Errorf("daemon: %w", err)
	}
	// before DB.starting and DB.engine are made beside it
	if err := engine.CheckDBFile(ctx, db); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(db), 0o700); err != nil {
		return nil, fmt.Errorf("daemon: create data directory: %w", err)
	}
	c := &Claim{db: db, waiting: o.Waiting}
	if c.waiting == nil {
		c.waiting = func(int, string) {}
	}
	if o.Serving {
		if c.starting, err = openLockFile(db + ".starting"); err != nil {
			return nil, err
		}
		if err := c.lock(ctx, c.starting, syscall.LOCK_EX, "another keep daemon starting"); err != nil {
			c.starting.Close()
			return nil, err
		}
		writePID(c.starting)
	}
	if c.engine, err = openLockFile(db + ".engine"); err != nil {
		c.Release()
		return nil, err
	}
	if err := flock(c.engine, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		pid := pidIn(db + ".engine")
		c.engine.Close()
		c.engine = nil
		c.Release()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &engine.LockedError{Path: db, PID: pid}
		}
		return nil, fmt.Errorf("daemon: lock %s.engine: %w", db, err)
	}
	writePID(c.engine)
	return c, nil
}

// WaitDB returns once no process holds the database's lock, or when ctx
// ends. Under a claim only a short command can hold it, and it lets go when
// it is done; the caller then opens the database, and waits again if another
// command took the lock in between.
func (c *Claim) WaitDB(ctx context.Context) error {
	f, err := openLockFile(c.db + ".lock") // storage.Open's lock file
	if err != nil {
		return err
	}
	if err := c.lock(ctx, f, syscall.LOCK_EX, "a keep command"); err != nil {
		f.Close()
		return err
	}
	return f.Close() // closing lets go of the lock
}

// Ready says the daemon answers on its socket: commands waiting for it go on.
func (c *Claim) Ready() {
	if c.starting != nil {
		c.starting.Close()
		c.starting = nil
	}
}

// Release gives the database up (at exit the kernel does it anyway).
func (c *Claim) Release() {
	c.Ready()
	if c.engine != nil {
		c.engine.Close()
		c.engine = nil
	}
}

// lock takes how on f, telling c.waiting first if that means waiting.
func (c *Claim) lock(ctx context.Context, f *os.File, how int, who string) error {
	err := flock(f, how|syscall.LOCK_NB)
	if !errors.Is(err, syscall.EWOULDBLOCK) {
		return err
	}
	c.waiting(pidIn(f.Name()), who)
	return flockWait(ctx, f, how)
}

// AwaitStart returns once no daemon is starting on dbPath (at once when
// none is), so a command that found the database locked can look for the
// daemon's socket again. waiting, if not nil, is told the daemon's pid
// before this blocks.
func AwaitStart(ctx context.Context, dbPath string, waiting func(pid int)) error {
	db, err := filepath.Abs(dbPath)
	if err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	f, err := os.Open(db + ".starting")
	if errors.Is(err, fs.ErrNotExist) {
		return nil // no daemon ever started here
	}
	if err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	defer f.Close()
	err = flock(f, syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		if waiting != nil {
			waiting(pidIn(f.Name()))
		}
		err = flockWait(ctx, f, syscall.LOCK_SH)
	}
	return err
}

// EngineHolder says whether a long-lived engine (a daemon, a TUI) holds
// dbPath now, and its pid when known.
func EngineHolder(dbPath string) (pid int, held bool, err error) {
	db, err := filepath.Abs(dbPath)
	if err != nil {
		return 0, false, fmt.Errorf("daemon: %w", err)
	}
	f, err := os.Open(db + ".engine")
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("daemon: %w", err)
	}
	defer f.Close()
	err = flock(f, syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return pidIn(f.Name()), true, nil
	}
	return 0, false, err
}

func openLockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("daemon: open lock file: %w", err)
	}
	return f, nil
}

func flock(f *os.File, how int) error {
	return flockFD(int(f.Fd()), how)
}

func flockFD(fd, how int) error {
	for {
		err := syscall.Flock(fd, how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// flockWait blocks in flock until the lock is taken or ctx ends. flock
// cannot be interrupted: on ctx's end the call stays blocked and the caller
// closes f. So the call never touches f: it waits on a descriptor of its
// own, a duplicate of f's (the same open file, so the same lock), which it
// closes when it returns. A number of f's read after f was closed could name
// another file by then, and lock that one; a duplicate keeps the open file
// alive while it waits, and a lock it takes after the caller gave up goes
// when it closes it.
func flockWait(ctx context.Context, f *os.File, how int) error {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("daemon: %s: %w", f.Name(), err)
	}
	done := make(chan error, 1)
	go func() {
		err := flockFD(fd, how)
		syscall.Close(fd)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// writePID puts our pid into a lock file we hold, so whoever waits on it or
// is refused by it can name us.
func writePID(f *os.File) {
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
}

func pidIn(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}
