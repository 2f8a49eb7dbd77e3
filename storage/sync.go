package storage

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
)

// The writer commits at synchronous NORMAL: a commit reaches the log file,
// not the disk. What must be on disk is made so by syncing the log file
// after the commit, outside the writer's lock (Write, Sync). The log is
// written in order, so one sync carries every commit written before it:
// commits of workflows running at once share it (group commit), and the
// writer lock is free for the next commit while the disk works.
//
// An external effect the ledger records as done may reach the disk after
// the record is written, never after the record is on disk: a connector
// that only has to sync what it wrote (an append) hands that sync to the
// host, which runs it alongside and registers it here (SyncAfter) before it
// commits the outcome. Every sync of the log, ours or a checkpoint's, first
// waits for the effects registered before it.
//
// Readers see a commit once it is written, before its sync ends (a backup
// may hold an in_flight row whose call is not made yet, and recovery from
// it reconciles, as after a crash). What may yet be lost to a power cut is
// only seen, never acted on outside: the writer's caller goes on, to an
// external call say, once Write has returned.

// durability counts the commits written to the log and those known to be on
// disk. Commits are numbered in log order, so a sync that started after
// commit n was written carries n and every commit before it.
type durability struct {
	mu   sync.Mutex
	done sync.Cond // broadcast when a sync ends
	path string    // the log file
	// sync, when set, replaces the fsync of the log (tests count and hold
	// syncs with it)
	sync    func() error
	written uint64
	durable uint64
	syncing bool
	// effects registered and not yet waited for; failed is the first that
	// failed: every sync from then on fails, since a record of it may be in
	// the log
	effects []*effect
	failed  error
	// syncs counts the fsyncs of the log (DB.Syncs)
	syncs atomic.Int64
}

// effect is the sync of an external effect, running.
type effect struct {
	done chan struct{}
	err  error
}

func (d *durability) init(path string) {
	d.path = path + "-wal"
	d.done.L = &d.mu
}

// wrote numbers a commit just written to the log; the caller holds the
// writer lock, so numbers follow log order.
func (d *durability) wrote() uint64 {
	d.mu.Lock()
	d.written++
	n := d.written
	d.mu.Unlock()
	return n
}

// pending says whether a commit written may not be on disk yet.
func (d *durability) pending() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.durable < d.written
}

// syncTo returns once commit n is on disk: carried by a sync already under
// way when it was written and ended since, or by one it starts.
func (d *durability) syncTo(n uint64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.durable < n {
		if d.syncing {
			d.done.Wait()
			continue
		}
		if err := d.syncLocked(); err != nil {
			return err
		}
	}
	return nil
}

// after starts sync, an effect's, and makes every sync of the log from now
// on wait for it. A sync under way carries the log as it is when its fsync
// starts, so an effect is not registered while one is: the record that
// follows it could be written meanwhile and carried unsettled.
func (d *durability) after(sync func() error) {
	ef := &effect{done: make(chan struct{})}
	go func() {
		defer close(ef.done)
		ef.err = sync()
	}()
	d.mu.Lock()
	for d.syncing {
		d.done.Wait()
	}
	d.effects = append(d.effects, ef)
	d.mu.Unlock()
}

// settle waits for the effects registered so far; the caller holds the
// lock and has set syncing, so none is registered meanwhile.
func (d *durability) settle() error {
	effects := d.effects
	d.effects = nil
	d.mu.Unlock()
	var failed error
	for _, ef := range effects {
		<-ef.done
		if ef.err != nil && failed == nil {
			failed = ef.err
		}
	}
	d.mu.Lock()
	if failed != nil && d.failed == nil {
		d.failed = fmt.Errorf("an effect the log records could not be synced: %w", failed)
	}
	return d.failed
}

// syncLocked syncs the log once, without the lock while the disk works,
// after the effects it may record.
func (d *durability) syncLocked() error {
	d.syncing = true
	target := d.written
	err := d.settle()
	d.mu.Unlock()
	if err == nil {
		d.syncs.Add(1)
		err = d.fsync()
	}
	d.mu.Lock()
	d.syncing = false
	if err == nil && target > d.durable {
		d.durable = target
	}
	d.done.Broadcast()
	if err != nil {
		return fmt.Errorf("storage: sync: %w", err)
	}
	return nil
}

// fsync syncs the log file, opened afresh: SQLite removes the file when
// its last connection closes, and a descriptor kept open would then sync a
// file nobody reads.
func (d *durability) fsync() error {
	if d.sync != nil {
		return d.sync()
	}
	if err := syncFile(d.path); !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil // no log: the checkpoint that removed it synced the database file
}
