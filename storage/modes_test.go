package storage

import (
	"context"
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
