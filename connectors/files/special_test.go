package files_test

import (
	"context"
	"net"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"keep/connectors"
)

// TestSpecialFiles: a FIFO, a socket or a device under a root is never read
// or written, and finding one never holds the call: a workflow naming one
// gets a logic error at once.
func TestSpecialFiles(t *testing.T) {
	t.Parallel()

	// within fails the test if f has not returned in a few seconds (a FIFO
	// opened for reading waits for a writer that never comes).
	within := func(t *testing.T, f func() error) error {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- f() }()
		select {
		case err := <-done:
			return err
		case <-time.After(5 * time.Second):
			t.Fatal("the call is still waiting on the special file")
			return nil
		}
	}
	fifo := func(t *testing.T, b *bundle) string {
		t.Helper()
		if err := syscall.Mkfifo(filepath.Join(b.root, "pipe"), 0o644); err != nil {
			t.Fatal(err)
		}
		return "pipe"
	}
	socket := func(t *testing.T, b *bundle) string {
		t.Helper()
		// A unix socket path must be short; the root's may not be.
		l, err := net.Listen("unix", filepath.Join(b.root, "s"))
		if err != nil {
			t.Skipf("no unix socket here: %v", err)
		}
		t.Cleanup(func() { l.Close() })
		return "s"
	}

	for _, kind := range []struct {
		name string
		make func(*testing.T, *bundle) string
	}{{"a FIFO", fifo}, {"a socket", socket}} {
		for _, method := range []string{"read", "write", "append"} {
			t.Run(method+" of "+kind.name+" is a logic error at once", func(t *testing.T) {
				t.Parallel()
				b := setup(t)
				p := kind.make(t, b)
				err := within(t, func() error {
					_, err := b.do(t, method, map[string]any{"path": p, "content": "x"})
					return err
				})
				if connectors.ClassOf(err) != connectors.Logic {
					t.Fatalf("got %v", err)
				}
			})
		}
	}

	t.Run("reconciling an append to a FIFO does not hang", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		p := fifo(t, b)
		err := within(t, func() error {
			_, _, err := b.c.Reconcile(context.Background(), connectors.Call{Method: "append",
				Params: map[string]any{"path": p, "content": "x"}})
			return err
		})
		if err == nil {
			t.Fatal("a FIFO was compared as a file")
		}
	})
}
