package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tinyDisk mounts a tmpfs of size bytes for the test and returns its
// folder. Mounting takes root: without it the test is skipped, saying so;
// as root a mount that fails fails the test under CI=true (.ci/run runs as
// root there), and is skipped with the reason elsewhere.
func tinyDisk(t *testing.T, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs to fill takes root; run as root (as .ci/run does) to test a full disk for real")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+strconv.Itoa(size)+",mode=0700"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mount a tmpfs at %s as root: %v", dir, err)
		}
		t.Skipf("mount a tmpfs at %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fill writes a file in dir until the file system has no room left, and
// returns its path: removing it gives the room back.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling %s: %v", dir, err)
			}
			return path
		}
	}
}

// TestFullDiskSaysSo: on a real file system with no room left, opening
// the database (SQLite says only "disk I/O error": it cannot grow its
// shared-memory file) and a write (SQLITE_FULL) both say that the disk
// holding the database is full, with its path and the bytes free, and
// that nothing was lost; with the room given back, every commit is there.
func TestFullDiskSaysSo(t *testing.T) {
	ctx := context.Background()
	dir := tinyDisk(t, 2<<20)
	path := filepath.Join(dir, "keep.db")
	db, err := Open(ctx, Opts{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	var wid int64
	if err := db.Write(ctx, func(tx *Tx) (err error) { wid, err = tx.CreateWorkflow(ctx, "w", time.Now()); return err }); err != nil {
		t.Fatal(err)
	}
	says := func(what string, err error) {
		t.Helper()
		var full *DiskFullError
		if !errors.As(err, &full) || !errors.Is(err, ErrDiskFull) {
			t.Fatalf("%s on a full disk: %v (%T), want a DiskFullError", what, err, err)
		}
		for _, want := range []string{"disk holding keep's database " + path + " is full", strconv.FormatUint(full.Free, 10) + " bytes free", "nothing committed before was lost"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s on a full disk says %q, not %q", what, err, want)
			}
		}
	}

	// keep stopped cleanly; then something else filled the disk
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	filler := fill(t, dir)
	_, err = Open(ctx, Opts{Path: path})
	says("open", err)

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if db, err = Open(ctx, Opts{Path: path}); err != nil {
		t.Fatalf("open with the room given back: %v", err)
	}
	filler = fill(t, dir)
	big := strings.Repeat("x", 3000)
	committed := 0
	var werr error
	for i := 1; i <= 2000 && werr == nil; i++ {
		werr = db.Write(ctx, func(tx *Tx) error {
			return tx.InsertInput(ctx, &Input{ID: int64(i), WorkflowID: wid, Source: "s", Type: "t", ExternalID: strconv.Itoa(i), Title: big, CreatedAt: time.Now()})
		})
		if werr == nil {
			committed++
		}
	}
	says("a write", werr)
	// a close on a full disk may not checkpoint: the log it keeps is read at the next open
	_ = db.Close()

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	db, err = Open(ctx, Opts{Path: path})
	if err != nil {
		t.Fatalf("open with the room given back: %v", err)
	}
	defer db.Close()
	if n := count(t, db, `SELECT COUNT(*) FROM inputs`); n != committed {
		t.Fatalf("%d inputs after the disk filled, %d committed", n, committed)
	}
}

// A backup that runs out of room leaves nothing behind: not the copy, and
// not the rollback journal VACUUM INTO wrote it under, a file named after
// the backup that the person never asked for, taking room on a full disk.
func TestABackupOnAFullDiskLeavesNothing(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "keep.db")
	db, err := Open(ctx, Opts{Path: p})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Write(ctx, func(tx *Tx) error {
		_, err := tx.exec(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 4000)
			INSERT INTO meta(key, value) SELECT 'k' || i, hex(randomblob(400)) FROM n`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	dir := tinyDisk(t, int(fi.Size()/2))
	err = BackupFile(ctx, p, filepath.Join(dir, "backup.db"))
	if err == nil {
		t.Fatalf("a backup of %d bytes was written to a disk of half that", fi.Size())
	}
	left, rerr := os.ReadDir(dir)
	if rerr != nil {
		t.Fatal(rerr)
	}
	for _, e := range left {
		t.Errorf("the failed backup (%v) left %s behind", err, e.Name())
	}
}
