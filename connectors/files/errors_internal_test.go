package files

import (
	"fmt"
	"io/fs"
	"syscall"
	"testing"

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
