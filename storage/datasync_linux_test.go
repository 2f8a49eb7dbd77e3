package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A sync interrupted by a signal (EINTR, which a file system in user space
// returns on the runtime's preemption signal) is tried again, not reported
// as a failed commit; a missing log is os.ErrNotExist, which fsync takes
// as synced by the checkpoint that removed it.
func TestSyncFile(t *testing.T) {
	calls := 0
	err := retryEINTR(func() error {
		if calls++; calls < 3 {
			return syscall.EINTR
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("retryEINTR: %v after %d calls, want nil after 3", err, calls)
	}
	if err := retryEINTR(func() error { return syscall.EIO }); !errors.Is(err, syscall.EIO) {
		t.Fatalf("retryEINTR passed %v on, want EIO", err)
	}

	dir := t.TempDir()
	if err := syncFile(filepath.Join(dir, "gone")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("syncFile of a missing file: %v, want os.ErrNotExist", err)
	}
	p := filepath.Join(dir, "log")
	if err := os.WriteFile(p, []byte("frames"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syncFile(p); err != nil {
		t.Fatalf("syncFile: %v", err)
	}
	d := &durability{}
	d.init(filepath.Join(dir, "gone.db"))
	if err := d.fsync(); err != nil {
		t.Fatalf("fsync without a log: %v, want nil", err)
	}
}

// The log is opened once for its syncs and kept: after many synced writes
// and a checkpoint that truncates the log, the descriptor the syncs use is
// the one first opened and names the file SQLite writes as the log; Close
// gives it back.
func TestLogKeptForSyncs(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, Opts{Path: filepath.Join(t.TempDir(), "keep.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.UnixMilli(1_700_000_000_000).UTC()
	write := func(name string) {
		t.Helper()
		if err := db.Write(ctx, func(tx *Tx) error {
			_, err := tx.CreateWorkflow(ctx, name, now)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	write("w0")
	first := db.disk.log
	if first == nil {
		t.Fatal("no log file kept after a synced write")
	}
	for i := 1; i < 20; i++ {
		write(fmt.Sprint("w", i))
	}
	if err := db.checkpoint(ctx, "TRUNCATE"); err != nil {
		t.Fatal(err)
	}
	write("after-truncate")
	if db.disk.log != first {
		t.Fatal("the log was opened again")
	}
	var kept, named syscall.Stat_t
	if err := syscall.Fstat(first.fd, &kept); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Stat(db.disk.path, &named); err != nil {
		t.Fatal(err)
	}
	if kept.Ino != named.Ino || kept.Dev != named.Dev {
		t.Fatal("the descriptor kept for syncs is not the log's file")
	}
	if kept.Size == 0 {
		t.Fatal("the write after the truncation is not in the file synced")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db.disk.log != nil {
		t.Fatal("Close kept the log file")
	}
}
