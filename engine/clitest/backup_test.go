package clitest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// TestBackupOverAFileIsRefused: a backup onto a file that exists is refused
// (exit 3), as keep init and keep edit refuse to overwrite one; it was exit
// 1, "failed", with or without a daemon. The file is left as it was.
func TestBackupOverAFileIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	e.deployLines()
	there := e.file(e.dir, "mine.db", "the person's own file")
	r := e.expect(3, "backup", there)
	if !strings.Contains(r.stderr, there+" already exists; not overwriting it") {
		t.Errorf("backup over a file says: %s", r)
	}
	d := startDaemon(t, e)
	defer d.stop(t)
	awaitSocket(t, e, d, time.Minute)
	e.expect(3, "backup", there)
	if b, _ := os.ReadFile(there); string(b) != "the person's own file" {
		t.Errorf("the file in the way became %q", b)
	}
}

// TestBackupIntoKeepsOwnFilesIsRefused: a backup named like the files
// beside the database was reported written, and then lost: SQLite deletes
// a -wal or -journal that is no log of the database when it next opens it
// (the backup's own connection first), a daemon writes its pid over the
// start of .engine and refuses to start beside a .sock that is a file, and
// appends its log to keep.log. It is refused, with or without a daemon,
// and the database is untouched.
func TestBackupIntoKeepsOwnFilesIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	e.deployLines()
	for _, own := range []string{e.db + "-wal", e.db + "-journal", e.db + ".engine", e.db + ".sock", filepath.Join(filepath.Dir(e.db), "keep.log")} {
		r := e.expect(1, "backup", own)
		if !strings.Contains(r.stderr, own+" is one of keep's own files beside its database") {
			t.Errorf("backup into %s says: %s", filepath.Base(own), r)
		}
		if _, err := os.Stat(own); err == nil {
			t.Errorf("a refused backup left %s behind", filepath.Base(own))
		}
	}
	d := startDaemon(t, e)
	defer d.stop(t)
	awaitSocket(t, e, d, time.Minute)
	own := e.db + "-journal"
	if r := e.expect(1, "backup", own); !strings.Contains(r.stderr, "keep's own files") {
		t.Errorf("backup into the journal through the daemon says: %s", r)
	}
	if r := e.ok("workflows"); !strings.Contains(r.stdout, "lines") {
		t.Errorf("after the refusals keep workflows says: %s", r)
	}
}

// TestBackupWithNoDatabaseSaysSo: with no database where --db (KEEP_DB, the
// default) points, keep backup said "stat PATH: no such file or directory",
// which reads as if the backup's path were wrong. It names the database,
// says there is nothing to back up, and creates nothing.
func TestBackupWithNoDatabaseSaysSo(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	to := filepath.Join(e.dir, "backup.db")
	r := e.expect(1, "backup", to)
	if !strings.Contains(r.stderr, "no database at "+e.db) || !strings.Contains(r.stderr, "nothing to back up") {
		t.Errorf("backup with no database says: %s", r)
	}
	for _, p := range []string{to, e.db} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("a backup with no database made %s", p)
		}
	}
}
