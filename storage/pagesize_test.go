package storage

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// TestPageSize: a database keep creates has keep's page size, which a
// run's commits write whole; one made with SQLite's default keeps its own,
// and is checkpointed at the same size of log.
func TestPageSize(t *testing.T) {
	ctx := context.Background()
	open := func(t *testing.T, path string) *DB {
		t.Helper()
		db, err := Open(ctx, Opts{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	check := func(t *testing.T, db *DB, want int) {
		t.Helper()
		got, err := pageSize(ctx, db.wc.conn)
		if err != nil || got != want {
			t.Fatalf("page size %d (%v), want %d", got, err, want)
		}
		if db.checkpointPages*want != checkpointLogBytes {
			t.Fatalf("checkpointed every %d pages of %d bytes, want every %d bytes", db.checkpointPages, want, checkpointLogBytes)
		}
	}

	t.Run("new", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "keep.db")
		check(t, open(t, path), PageSize)
	})

	t.Run("made with another size", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "keep.db")
		raw, err := sql.Open("sqlite", "file:"+path)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"PRAGMA page_size = 4096", "PRAGMA journal_mode = WAL", "CREATE TABLE before_keep (x)"} {
			if _, err := raw.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		raw.Close()
		db := open(t, path)
		check(t, db, 4096)
		if err := db.Write(ctx, addAnswer); err != nil {
			t.Fatal(err)
		}
	})
}
