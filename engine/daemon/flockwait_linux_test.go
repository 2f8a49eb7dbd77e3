package daemon

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestAGivenUpWaitLocksOnlyItsOwnFile: a flock wait whose context ends
// leaves its caller free to close the file at once: the call still blocked
// waits on a descriptor of its own, not on the caller's number (which,
// closed, may name another file by the time the call is made). Once the
// holder lets go, the abandoned call takes the lock and gives it up with its
// descriptor: nothing stays locked.
func TestAGivenUpWaitLocksOnlyItsOwnFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keep.db.lock")
	holder, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if err := flock(holder, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := flockWait(ctx, f, syscall.LOCK_EX); !errors.Is(err, context.Canceled) {
		t.Fatalf("flockWait on an ended context: %v, want context.Canceled", err)
	}
	f.Close()
	// the holder's descriptor, and the abandoned call's own
	if got := descriptorsOf(t, path); got != 2 {
		t.Fatalf("%d descriptors of the lock file with the caller's closed, want 2: the holder's and the waiting call's own", got)
	}

	if err := flock(holder, syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	probe, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := flock(probe, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil && descriptorsOf(t, path) == 2 { // the holder's and the probe's
			return
		}
		if err == nil {
			_ = flock(probe, syscall.LOCK_UN)
		}
		if time.Now().After(deadline) {
			t.Fatalf("10 s after the holder let go: lock %v, %d descriptors of the file; the abandoned call kept it", err, descriptorsOf(t, path))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// descriptorsOf counts this process's descriptors open on path.
func descriptorsOf(t *testing.T, path string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == path {
			n++
		}
	}
	return n
}
