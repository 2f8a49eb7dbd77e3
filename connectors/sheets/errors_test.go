package sheets

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"keep/connectors"
)

func TestClassifyIO(t *testing.T) {
	t.Parallel()
	pathErr := func(errno syscall.Errno) error { return &fs.PathError{Op: "write", Path: "/x", Err: errno} }
	tests := []struct {
		name string
		err  error
		want connectors.Class
	}{
		{"EAGAIN is transient", pathErr(syscall.EAGAIN), connectors.Transient},
		{"EBUSY is transient", pathErr(syscall.EBUSY), connectors.Transient},
		{"EINTR is transient", pathErr(syscall.EINTR), connectors.Transient},
		{"a full disk is transient", pathErr(syscall.ENOSPC), connectors.Transient},
		{"too many open files is transient", pathErr(syscall.EMFILE), connectors.Transient},
		{"an I/O error we can't name is transient", pathErr(syscall.EIO), connectors.Transient},
		{"a deadline is transient", fmt.Errorf("x: %w", context.DeadlineExceeded), connectors.Transient},
		{"an OS permission error is logic", pathErr(syscall.EACCES), connectors.Logic},
		{"EPERM is logic", pathErr(syscall.EPERM), connectors.Logic},
		{"a read-only file system is logic", pathErr(syscall.EROFS), connectors.Logic},
		{"a file where a directory should be is logic", pathErr(syscall.ENOTDIR), connectors.Logic},
		{"a name too long is logic", pathErr(syscall.ENAMETOOLONG), connectors.Logic},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := classifyIO("write a.csv", tt.err)
			if got := connectors.ClassOf(err); got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
			if !errors.Is(err, tt.err) {
				t.Fatalf("%v does not wrap %v", err, tt.err)
			}
		})
	}
}

// TestErrorClasses drives each class through Do.
func TestErrorClasses(t *testing.T) {
	t.Parallel()
	row := map[string]any{"x": "1"}
	tests := []struct {
		name  string
		arm   func(b *bundle)
		ctx   func() context.Context
		p     map[string]any
		class connectors.Class
	}{
		{
			name:  "A path outside the roots is a permission failure",
			p:     with(sheet("/tmp/elsewhere.csv"), "row", row),
			class: connectors.Permission,
		},
		{
			name:  "A bad param is a logic failure",
			p:     with(sheet("a.csv"), "row", "x=1"),
			class: connectors.Logic,
		},
		{
			name:  "A busy file while writing is a transient failure",
			arm:   func(b *bundle) { b.c.ops.write = func(*os.File, []byte) error { return syscall.EAGAIN } },
			p:     with(sheet("a.csv"), "row", row),
			class: connectors.Transient,
		},
		{
			name: "A sheet another program changed meanwhile is a transient failure",
			arm: func(b *bundle) {
				b.c.ops.write = func(f *os.File, data []byte) error {
					if err := os.WriteFile(filepath.Join(b.root, "a.csv"), []byte("x\nsomeone else\n"), 0o644); err != nil {
						return err
					}
					_, err := f.Write(data)
					return err
				}
			},
			p:     with(sheet("a.csv"), "row", row),
			class: connectors.Transient,
		},
		{
			name: "A cancelled context is a transient failure",
			ctx: func() context.Context {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx
			},
			p:     with(sheet("a.csv"), "row", row),
			class: connectors.Transient,
		},
		{
			name:  "A failed rename is an uncertain failure",
			arm:   func(b *bundle) { b.c.ops.rename = func(*os.File, string, string) error { return syscall.EIO } },
			p:     with(sheet("a.csv"), "row", row),
			class: connectors.Uncertain,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			if tt.arm != nil {
				tt.arm(b)
			}
			ctx := context.Background()
			if tt.ctx != nil {
				ctx = tt.ctx()
			}
			_, err := b.c.Do(ctx, connectors.Call{Method: "appendRow", Params: tt.p, IdempotencyKey: "k"})
			if got := connectors.ClassOf(err); got != tt.class {
				t.Fatalf("got %s (%v), want %s", got, err, tt.class)
			}
			if tt.class != connectors.Uncertain {
				// Definite failures leave no file and no temporary file.
				if entries, _ := os.ReadDir(b.root); len(entries) > 1 || (len(entries) == 1 && entries[0].Name() != "a.csv") {
					t.Fatalf("left %v", entries)
				}
				if data, err := os.ReadFile(filepath.Join(b.root, "a.csv")); err == nil && string(data) != "x\nsomeone else\n" {
					t.Fatalf("a.csv changed: %q", data)
				}
			}
		})
	}
}

// TestSpecialFileIsNoSheet: a FIFO named as a sheet is refused at once; it
// must never hold the call waiting for a writer.
func TestSpecialFileIsNoSheet(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if err := syscall.Mkfifo(filepath.Join(b.root, "a.csv"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{"rows", "appendRow", "updateRow"} {
		done := make(chan error, 1)
		go func() {
			_, err := b.do(t, method, "k", map[string]any{"spreadsheet": "a.csv", "row": map[string]any{"x": "1"},
				"key": "x", "value": "1", "set": map[string]any{"x": "2"}})
			done <- err
		}()
		select {
		case err := <-done:
			if connectors.ClassOf(err) != connectors.Logic {
				t.Fatalf("%s: got %v", method, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s is still waiting on the FIFO", method)
		}
	}
}
