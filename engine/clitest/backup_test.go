package clitest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBackupIntoAMissingFolder: the folder is named and the way to make it
// given, instead of SQLite's "unable to open database file".
func TestBackupIntoAMissingFolder(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	e.deployLines()
	missing := filepath.Join(e.dir, "backups", "nightly")
	r := e.expect(1, "backup", filepath.Join(missing, "keep.db"))
	if !strings.Contains(r.stderr, "the folder "+missing+" does not exist") || !strings.Contains(r.stderr, "mkdir -p "+missing) {
		t.Errorf("backup into a missing folder says: %s", r)
	}
	if err := os.MkdirAll(missing, 0o700); err != nil {
		t.Fatal(err)
	}
	e.ok("backup", filepath.Join(missing, "keep.db"))
	if _, err := os.Stat(filepath.Join(missing, "keep.db")); err != nil {
		t.Errorf("no backup once the folder exists: %v", err)
	}
}
