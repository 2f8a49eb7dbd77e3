package storage

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestWriteUnsyncedLowersTheSafetyLevelForItsOwnCommitOnly: an unsynced
// checkpoint commits at synchronous NORMAL, and the write after it — an
// in_flight row, say — is back at FULL, whatever order they come in.
func TestWriteUnsyncedLowersTheSafetyLevelForItsOwnCommitOnly(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, Opts{Path: filepath.Join(t.TempDir(), "keep.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	level := func(tx *Tx) int {
		t.Helper()
		var n int
		// on the bare transaction: a prepared pragma read keeps the level it was prepared at
		if err := tx.tx.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	const normal, full = 1, 2
	steps := []struct {
		synced bool
		want   int
	}{{true, full}, {false, normal}, {false, normal}, {true, full}, {true, full}, {false, normal}, {true, full}}
	for i, s := range steps {
		write := db.WriteUnsynced
		if s.synced {
			write = db.Write
		}
		var got int
		if err := write(ctx, func(tx *Tx) error {
			got = level(tx)
			_, err := tx.exec(ctx, "INSERT INTO answers(workflow_id, subject, subject_id, answer, answered_by, created_at) SELECT id, 'x', 1, 'a', 'user', 0 FROM workflows LIMIT 1")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if got != s.want {
			t.Errorf("step %d (synced %v): synchronous = %d inside the transaction, want %d", i, s.synced, got, s.want)
		}
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
