package storage

import (
	"context"
	"path/filepath"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// openWithWorkflow opens a database in a temp dir holding one workflow, w,
// with id 1; it is closed when the test ends.
func openWithWorkflow(t *testing.T) *DB {
	t.Helper()
	ctx := context.Background()
	db := openTemp(t)
	if err := db.Write(ctx, func(tx *Tx) error {
		_, err := tx.CreateWorkflow(ctx, "w", time.UnixMilli(1))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return db
}

// syncCounter replaces db's log sync with one that counts, and checks that
// what it syncs is committed: seen through a reader, the row the write
// added is there.
type syncCounter struct {
	n    atomic.Int64
	hold chan struct{} // when not nil, the first sync waits for it
}

func countSyncs(t *testing.T, db *DB) *syncCounter {
	c := &syncCounter{}
	db.disk.sync = func() error {
		if c.n.Add(1) == 1 && c.hold != nil {
			<-c.hold
		}
		return nil
	}
	return c
}

func addAnswer(tx *Tx) error { return insertAnswer(tx, "'a'") }

// insertAnswer adds an answer to the first workflow whose text is the SQL
// expression answer.
func insertAnswer(tx *Tx, answer string) error {
	_, err := tx.exec(context.Background(), "INSERT INTO answers(workflow_id, subject, subject_id, answer, answered_by, created_at) SELECT id, 'x', 1, "+answer+", 'user', 0 FROM workflows LIMIT 1")
	return err
}

// TestWriteSyncsTheLogAfterItsCommit: a synced write returns after one
// sync of the log that started once its commit was written; an unsynced
// write syncs nothing, and the next synced write's sync carries it.
func TestWriteSyncsTheLogAfterItsCommit(t *testing.T) {
	ctx := context.Background()
	db := openWithWorkflow(t)
	c := countSyncs(t, db)
	answers := func() int {
		var n int
		if err := db.r.QueryRowContext(ctx, "SELECT count(*) FROM answers").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	var seen []int
	db.disk.sync = func() error {
		c.n.Add(1)
		seen = append(seen, answers()) // the sync runs on the writing goroutine
		return nil
	}
	steps := []struct {
		synced    bool
		wantSyncs int64
	}{{true, 1}, {false, 1}, {false, 1}, {true, 2}, {true, 3}, {false, 3}}
	for i, s := range steps {
		write := db.WriteUnsynced
		if s.synced {
			write = db.Write
		}
		if err := write(ctx, addAnswer); err != nil {
			t.Fatal(err)
		}
		if got := c.n.Load(); got != s.wantSyncs {
			t.Errorf("step %d (synced %v): %d syncs so far, want %d", i, s.synced, got, s.wantSyncs)
		}
		if got := db.Unsynced(); got == s.synced {
			t.Errorf("step %d (synced %v): Unsynced() = %v", i, s.synced, got)
		}
	}
	if want := []int{1, 4, 5}; !slices.Equal(seen, want) {
		t.Errorf("answers committed when each sync ran: %v, want %v", seen, want)
	}
}

// TestConcurrentWritesShareASync: commits written while a sync is under
// way wait for it to end and then share one sync, instead of one each, and
// the writer lock is free while the disk works.
func TestConcurrentWritesShareASync(t *testing.T) {
	ctx := context.Background()
	db := openWithWorkflow(t)
	c := countSyncs(t, db)
	c.hold = make(chan struct{})
	before, _ := db.Commits()
	const writers = 4
	errs := make(chan error, writers)
	write := func() { errs <- db.Write(ctx, addAnswer) }
	go write() // its sync waits for hold
	for c.n.Load() == 0 {
		runtime.Gosched()
	}
	for range writers - 1 {
		go write() // commits while the first sync is held
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		// writes, not commits: those that queue together share one
		written, _ := db.Commits()
		if written == before+writers {
			break
		}
		if time.Now().After(deadline) {
			close(c.hold)
			t.Fatalf("%d writes committed while a sync was held, want %d: the writer lock waited for the disk", written-before-1, writers-1)
		}
		time.Sleep(time.Millisecond)
	}
	close(c.hold)
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := c.n.Load(); got != 2 {
		t.Errorf("%d syncs for %d synced writes, want 2: the held one, then one for the %d written meanwhile", got, writers, writers-1)
	}
	if db.Unsynced() {
		t.Error("a commit is still waiting for the disk")
	}
}

// TestSyncCarriesUnsyncedCommits: an unsynced commit leaves the database
// waiting for the disk until a synced commit or Sync carries it there, and
// Close syncs what is left; the data is there after reopening either way.
func TestSyncCarriesUnsyncedCommits(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "keep.db")
	db, err := Open(ctx, Opts{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	note := func(write func(context.Context, func(*Tx) error) error, name string) {
		t.Helper()
		if err := write(ctx, func(tx *Tx) error {
			_, err := tx.CreateWorkflow(ctx, name, time.UnixMilli(1))
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if db.Unsynced() {
		t.Fatal("a fresh database waits for the disk")
	}
	note(db.WriteUnsynced, "a")
	if !db.Unsynced() {
		t.Fatal("after an unsynced commit, nothing waits for the disk")
	}
	note(db.Write, "b")
	if db.Unsynced() {
		t.Fatal("a synced commit did not carry the unsynced one before it")
	}
	note(db.WriteUnsynced, "c")
	if err := db.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if db.Unsynced() {
		t.Fatal("Sync left a commit waiting for the disk")
	}
	note(db.WriteUnsynced, "d")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db.Unsynced() {
		t.Fatal("Close left a commit waiting for the disk")
	}
	db, err = Open(ctx, Opts{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, name := range []string{"a", "b", "c", "d"} {
		if _, err := db.Read().WorkflowByName(ctx, name); err != nil {
			t.Errorf("workflow %s after reopening: %v", name, err)
		}
	}
}
