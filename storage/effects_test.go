package storage

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// effectGate is an effect's sync that waits for release, and remembers
// whether it has ended.
type effectGate struct {
	release chan struct{}
	done    atomic.Bool
}

func newEffect(db *DB) *effectGate {
	g := &effectGate{release: make(chan struct{})}
	db.SyncAfter(func() error {
		<-g.release
		g.done.Store(true)
		return nil
	})
	return g
}

func (db *DB) writtenCommits() uint64 {
	db.disk.mu.Lock()
	defer db.disk.mu.Unlock()
	return db.disk.written
}

// TestSyncWaitsForTheEffectsItMayCarry: a record of an effect is committed
// while the effect's own sync is under way; no sync of the log starts
// before that sync has ended, so the record never reaches the disk first.
func TestSyncWaitsForTheEffectsItMayCarry(t *testing.T) {
	ctx := context.Background()
	db := openWithWorkflow(t)
	c := countSyncs(t, db)
	ef := newEffect(db)
	var early atomic.Int64
	db.disk.sync = func() error {
		c.n.Add(1)
		if !ef.done.Load() {
			early.Add(1)
		}
		return nil
	}
	if err := db.WriteUnsynced(ctx, addAnswer); err != nil { // the record
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- db.Write(ctx, addAnswer) }()
	select {
	case err := <-done:
		t.Fatalf("a synced write returned (%v) while an effect the log records was still syncing", err)
	case <-time.After(50 * time.Millisecond): // give a wrong write the chance to go ahead
	}
	close(ef.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := early.Load(); n > 0 {
		t.Fatalf("%d syncs of the log started before the effect had synced", n)
	}
	if c.n.Load() != 1 {
		t.Fatalf("%d syncs, want 1", c.n.Load())
	}
}

// TestNoEffectIsRegisteredDuringASync: a sync under way carries whatever is
// written while it runs, so an effect registered then, and the record that
// follows it, wait for it to end.
func TestNoEffectIsRegisteredDuringASync(t *testing.T) {
	ctx := context.Background()
	db := openWithWorkflow(t)
	c := countSyncs(t, db)
	c.hold = make(chan struct{})
	release := sync.OnceFunc(func() { close(c.hold) })
	t.Cleanup(release) // before Close, which waits for the held sync
	before := db.writtenCommits()
	first := make(chan error, 1)
	go func() { first <- db.Write(ctx, addAnswer) }()
	for c.n.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	// the first sync is under way and held: an effect and its record now
	second := make(chan error, 1)
	go func() {
		db.SyncAfter(func() error { return nil })
		second <- db.WriteUnsynced(ctx, addAnswer)
	}()
	select {
	case err := <-second:
		t.Fatalf("an effect's record was committed (%v) while a sync was under way", err)
	case <-time.After(50 * time.Millisecond): // give a wrong write the chance to go ahead
	}
	if got := db.writtenCommits(); got != before+1 {
		t.Fatalf("%d commits written while the sync was held, want only the synced one", got-before)
	}
	release()
	for _, ch := range []chan error{first, second} {
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
}

// TestAFailedEffectFailsEverySyncAfterIt: the log may hold a record of an
// effect that could not be synced; from then on no sync says the log is on
// disk, and the error names what failed.
func TestAFailedEffectFailsEverySyncAfterIt(t *testing.T) {
	ctx := context.Background()
	db := openWithWorkflow(t)
	db.SyncAfter(func() error { return errors.New("append to out.txt: sync: input/output error") })
	if err := db.WriteUnsynced(ctx, addAnswer); err != nil {
		t.Fatal(err)
	}
	for i, sync := range []func() error{
		func() error { return db.Write(ctx, addAnswer) },
		func() error { return db.Sync(ctx) },
		func() error { return db.Write(ctx, addAnswer) },
	} {
		err := sync()
		if err == nil || !strings.Contains(err.Error(), "out.txt: sync: input/output error") {
			t.Fatalf("sync %d after a failed effect: %v, want the effect's error", i, err)
		}
	}
	if !db.Unsynced() {
		t.Fatal("the log is taken as on disk after a failed effect")
	}
}

// bigAnswer adds an answer of about ten pages.
func bigAnswer(tx *Tx) error { return insertAnswer(tx, "hex(randomblob(20000))") }

// TestTheWriterCheckpointsAfterTheEffects: SQLite's own checkpoint would
// sync the log whatever it holds, so storage checkpoints instead, as often
// as SQLite would, and only once the effects the log records are synced.
func TestTheWriterCheckpointsAfterTheEffects(t *testing.T) {
	ctx := context.Background()
	db := openWithWorkflow(t)
	var auto int
	if err := db.wc.conn.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&auto); err != nil || auto != 0 {
		t.Fatalf("the writer's wal_autocheckpoint = %d (%v), want 0", auto, err)
	}
	walSize := func() int64 {
		info, err := os.Stat(db.path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		return info.Size()
	}
	dbSize := func() int64 {
		info, err := os.Stat(db.path)
		if err != nil {
			t.Fatal(err)
		}
		return info.Size()
	}

	t.Run("the log stays near the checkpoint size", func(t *testing.T) {
		for range 3 * checkpointPages / 10 {
			if err := db.WriteUnsynced(ctx, bigAnswer); err != nil {
				t.Fatal(err)
			}
		}
		if max := int64(checkpointPages+100) * (pageSize + 24); walSize() > max {
			t.Fatalf("the log is %d bytes after %d pages written, want at most %d: nothing checkpointed it", walSize(), 3*checkpointPages, max)
		}
	})

	t.Run("a checkpoint waits for an effect under way", func(t *testing.T) {
		if err := db.checkpoint(ctx, "TRUNCATE"); err != nil {
			t.Fatal(err)
		}
		ef := newEffect(db)
		var early atomic.Int64
		db.disk.sync = func() error {
			if !ef.done.Load() {
				early.Add(1)
			}
			return nil
		}
		size := dbSize()
		done := make(chan error, 1)
		go func() {
			for range checkpointPages/10 + 10 {
				if err := db.WriteUnsynced(ctx, bigAnswer); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
		select {
		case err := <-done:
			t.Fatalf("%d pages were written (%v) and checkpointed while an effect the log records was syncing", checkpointPages+100, err)
		case <-time.After(200 * time.Millisecond): // give a wrong checkpoint the chance to go ahead
		}
		if got := dbSize(); got != size {
			t.Fatalf("the database file went from %d to %d bytes: the log was copied into it before the effect synced", size, got)
		}
		close(ef.release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if early.Load() > 0 {
			t.Fatalf("%d syncs of the log started before the effect had synced", early.Load())
		}
		if dbSize() == size {
			t.Fatal("no checkpoint after the effect synced")
		}
	})
}
