package storage

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
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
