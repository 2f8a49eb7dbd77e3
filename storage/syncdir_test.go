package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestBackupAndRestoreSyncTheirFolder: a name created, renamed into place
// or removed is on disk only once its folder is synced, and a power cut
// before that may undo it after the command said "wrote" or "restored".
// Backup syncs the backup's folder once the copy is whole and the journal
// VACUUM INTO wrote beside it is gone (brought back by a cut, that journal
// would roll the backup back to an empty file); Restore syncs the
// database's folder once the copy is renamed into place. Each sync is
// counted through the syncDir seam, with what held when it came.
//
// Not parallel: it replaces the package's syncDir.
func TestBackupAndRestoreSyncTheirFolder(t *testing.T) {
	ctx := context.Background()
	sync := syncDir
	t.Cleanup(func() { syncDir = sync })
	// after says, when a folder is synced, whether the step it must follow
	// is done; synced counts the syncs of each folder that came after it
	var after func(dir string) error
	synced := map[string]int{}
	syncDir = func(dir string) error {
		if after(dir) == nil {
			synced[dir]++
		}
		return sync(dir)
	}
	realDir := func(dir string) string {
		d, err := filepath.EvalSymlinks(dir)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}

	db := openTemp(t)
	if err := db.Write(ctx, func(tx *Tx) error { _, err := tx.CreateWorkflow(ctx, "w", time.Now()); return err }); err != nil {
		t.Fatal(err)
	}
	backupDir := realDir(t.TempDir())
	backup := filepath.Join(backupDir, "backup.db")
	after = func(dir string) error {
		if dir != backupDir {
			return nil
		}
		if _, err := os.Stat(backup + "-journal"); !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("the journal of VACUUM INTO is still beside the backup (%v)", err)
		}
		_, err := CheckBackup(ctx, backup)
		return err
	}
	if err := db.Backup(ctx, backup); err != nil {
		t.Fatal(err)
	}
	if synced[backupDir] == 0 {
		t.Errorf("Backup returned without syncing the backup's folder after the copy was written: a power cut may lose its name, or bring its journal back; syncs %v", synced)
	}

	dbDir := realDir(t.TempDir())
	path := filepath.Join(dbDir, "keep.db")
	other, err := Open(ctx, Opts{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	other.Close()
	after = func(dir string) error {
		if dir != dbDir {
			return nil
		}
		if _, err := os.Stat(path + ".restoring"); !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("the copy is not renamed into place yet (%v)", err)
		}
		for _, name := range []string{path, path + ".before-restore"} {
			if _, err := os.Stat(name); err != nil {
				return err
			}
		}
		return nil
	}
	if err := Restore(ctx, backup, path); err != nil {
		t.Fatal(err)
	}
	if synced[dbDir] == 0 {
		t.Errorf("Restore returned without syncing the database's folder after the rename into place: a power cut may undo it; syncs %v", synced)
	}
}
