package storage

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestFileModes: the database, its -wal and -shm and a backup are created
// 0600 under the usual umask (022), and a database an older keep left
// readable is tightened when it is opened. Not parallel: it sets the
// process's umask.
func TestFileModes(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	ctx := context.Background()
	modes := func(t *testing.T, paths ...string) {
		t.Helper()
		for _, p := range paths {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatalf("%s: %v", filepath.Base(p), err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s is %04o, want 0600", filepath.Base(p), fi.Mode().Perm())
			}
		}
	}

	t.Run("a new database, its log files and a backup are 0600", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "keep.db")
		db, err := Open(ctx, Opts{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		modes(t, path, path+"-wal", path+"-shm")
		backup := filepath.Join(t.TempDir(), "backup.db")
		if err := db.Backup(ctx, backup); err != nil {
			t.Fatal(err)
		}
		modes(t, backup)
	})

	t.Run("a database left readable by others is made private", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "keep.db")
		db, err := Open(ctx, Opts{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
		if err := os.Chmod(path, 0o644); err != nil {
			t.Fatal(err)
		}
		db, err = Open(ctx, Opts{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		modes(t, path, path+"-wal", path+"-shm")
	})
}

// TestRestoreStopsWhenCancelled: a restore whose context ends (SIGTERM)
// between two chunks of its copy stops there and changes nothing.
func TestRestoreStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	path := filepath.Join(dir, "keep.db")
	db, err := Open(ctx, Opts{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(dir, "backup.db")
	if err := db.Backup(ctx, backup); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(before, "a marker of the database in place"...), 0o600); err != nil {
		t.Fatal(err)
	}
	restoreCopied = cancel
	defer func() { restoreCopied = nil }()
	err = Restore(ctx, backup, path)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Restore = %v, want it stopped by the cancelled context", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.HasSuffix(after, []byte("a marker of the database in place")) {
		t.Error("the database in place was changed")
	}
	if _, err := os.Stat(path + ".restoring"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the partial copy was left behind: %v", err)
	}
}
