package files

import (
	"fmt"
	"io/fs"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"keep/connectors"
)

// The disk errors that cannot be provoked in a temp dir (a full or failing
// disk) are checked at the mapping itself.
func TestClassify(t *testing.T) {
	t.Parallel()

	cases := []struct {
		name string
		err  error
		want connectors.Class
	}{
		{"a full disk before the rename is transient", syscall.ENOSPC, connectors.Transient},
		{"an I/O error before the rename is transient", syscall.EIO, connectors.Transient},
		{"a refused permission is a logic error", syscall.EACCES, connectors.Logic},
		{"a read-only disk is a logic error", syscall.EROFS, connectors.Logic},
		{"a move across disks is a logic error", syscall.EXDEV, connectors.Logic},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := fail("write a.txt", &fs.PathError{Op: "write", Path: "/x/a.txt", Err: tc.err})
			if got := connectors.ClassOf(err); got != tc.want {
				t.Fatalf("class %q, want %q", got, tc.want)
			}
			if got := connectors.ClassOf(fmt.Errorf("wrapped: %w", err)); got != tc.want {
				t.Fatalf("wrapped class %q", got)
			}
		})
	}
}

// TestTheSettleRule: where the kernel cannot say whether a file is open
// for writing, one changed within a second of now is taken as being
// written, and one set far ahead (touch, a copy keeping times) is not, or
// it would be left out for ever.
func TestTheSettleRule(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	for _, c := range []struct {
		mtime time.Duration // from now
		want  bool
	}{
		{0, true}, {-500 * time.Millisecond, true}, {-time.Second, false}, {-time.Hour, false},
		{10 * time.Millisecond, true}, {time.Hour, false},
	} {
		var st unix.Stat_t
		st.Mtim = unix.NsecToTimespec(now.Add(c.mtime).UnixNano())
		if got := recentlyChanged(&st, now); got != c.want {
			t.Errorf("changed %v from now: being written %v, want %v", c.mtime, got, c.want)
		}
	}
}
