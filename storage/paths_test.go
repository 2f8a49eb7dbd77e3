package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// SQLite opens a "file:" URI: its path ends at '?' or '#' and "%HH" in it is
// decoded. A database whose name holds one of them must still be the file
// that is opened, locked, synced and backed up.
func TestOddPaths(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, name := range []string{"a b.db", "ü €.db", "notes#1.db", "what?.db", "100%41.db", "x%2fy.db", "C#/keep.db"} {
		t.Run("a database named "+name+" is that file and no other", func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			db, err := Open(ctx, Opts{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Write(ctx, func(tx *Tx) error { _, err := tx.CreateWorkflow(ctx, "w", time.Now()); return err }); err != nil {
				t.Fatal(err)
			}
			base := filepath.Base(path)
			var names []string
			ents, err := os.ReadDir(filepath.Dir(path))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				names = append(names, e.Name())
			}
			want := []string{base, base + "-shm", base + "-wal", base + ".lock"}
			slices.Sort(want)
			if !slices.Equal(names, want) {
				t.Fatalf("the database's folder holds %q, want %q", names, want)
			}
			// the busy timeout, the first parameter, is set too
			var busy int
			if err := db.wc.conn.QueryRowContext(ctx, `PRAGMA busy_timeout`).Scan(&busy); err != nil || busy != 10000 {
				t.Fatalf("busy_timeout = %d (%v), want 10000", busy, err)
			}
			backup := filepath.Join(dir, "back#up?%41.db")
			if err := db.Backup(ctx, backup); err != nil {
				t.Fatal(err)
			}
			if err := db.Write(ctx, func(tx *Tx) error { _, err := tx.CreateWorkflow(ctx, "after", time.Now()); return err }); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if v, err := FileVersion(ctx, path); err != nil || v != SchemaVersion() {
				t.Fatalf("FileVersion = %d (%v), want %d", v, err, SchemaVersion())
			}
			if v, err := CheckBackup(ctx, backup); err != nil || v != SchemaVersion() {
				t.Fatalf("CheckBackup = %d (%v), want %d", v, err, SchemaVersion())
			}
			if err := Restore(ctx, backup, path); err != nil {
				t.Fatal(err)
			}
			db, err = Open(ctx, Opts{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if n := count(t, db, `SELECT COUNT(*) FROM workflows`); n != 1 {
				t.Fatalf("the restored database holds %d workflows, want the backup's 1", n)
			}
		})
	}
}

// TestLinkedDatabase: a database opened through a symbolic link is the
// file the link names, for the lock and for the log keep syncs, as it is
// for SQLite.
func TestLinkedDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	real := filepath.Join(dir, "data", "keep.db")
	db, err := Open(ctx, Opts{Path: real})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	link := filepath.Join(dir, "keep.db")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	db, err = Open(ctx, Opts{Path: link})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Write(ctx, func(tx *Tx) error { _, err := tx.CreateWorkflow(ctx, "w", time.Now()); return err }); err != nil {
		t.Fatal(err)
	}
	// the log synced after each write is the one SQLite writes to
	if _, err := os.Stat(db.disk.path); err != nil {
		t.Errorf("the log keep syncs: %v", err)
	}
	other, err := Open(ctx, Opts{Path: real})
	var le *LockedError
	if !errors.As(err, &le) {
		if other != nil {
			other.Close()
		}
		t.Fatalf("a second engine through the file's own path: %v, want a LockedError", err)
	}
	// the lock of the path as given is held too: other keep processes
	// given it wait on that one (engine/daemon)
	if l, err := acquireLock(link + ".lock"); !errors.As(err, &le) {
		if l != nil {
			l.release()
		}
		t.Fatalf("the lock beside the link: %v, want it held", err)
	}
	// and a restore through the link replaces the file, not the link
	backup := filepath.Join(dir, "backup.db")
	if err := db.Backup(ctx, backup); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := Restore(ctx, backup, link); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link after a restore through it: %v, %v", fi, err)
	}
}

// TestLinkToNoFileYet: a link to a database not created yet is followed
// as SQLite follows it, so the file is created private and locked by its
// own name.
func TestLinkToNoFileYet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	real := filepath.Join(dir, "data", "keep.db")
	link := filepath.Join(dir, "keep.db")
	if err := os.Symlink("data/keep.db", link); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, Opts{Path: link})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if fi, err := os.Stat(real); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the database the link names: %v, %v, want a file of mode 0600", fi, err)
	}
	other, err := Open(ctx, Opts{Path: real})
	var le *LockedError
	if !errors.As(err, &le) {
		if other != nil {
			other.Close()
		}
		t.Fatalf("a second engine through the file's own path: %v, want a LockedError", err)
	}
}
