package connectors

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A file rewritten in place is seen by the kernel first truncated, then
// written: what the watcher hands on is the file once it is whole, and
// the rewrite is one change.
func TestAWatchedFileIsReadOnceWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte("old = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := make(chan string, 16)
	if err := WatchFile(ctx, path, func() {
		b, _ := os.ReadFile(path)
		seen <- string(b)
	}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	// a slow writer: each part is its own write, the file empty before them
	for _, part := range []string{"new = 2\n", "more = 3\n"} {
		time.Sleep(fileSettles / 5)
		if _, err := f.WriteString(part); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	select {
	case got := <-seen:
		if got != "new = 2\nmore = 3\n" {
			t.Fatalf("the watcher handed on the file as %q, part way through its rewrite", got)
		}
	case <-time.After(time.Minute):
		t.Fatal("no change seen after a rewrite")
	}
	// a write to another file in the folder is not this file's change
	if err := os.WriteFile(filepath.Join(dir, "other"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	// a replace by rename is
	tmp := filepath.Join(dir, "config.toml.new")
	if err := os.WriteFile(tmp, []byte("renamed = 4\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-seen:
		if got != "renamed = 4\n" {
			t.Fatalf("after the rename the watcher handed on %q", got)
		}
	case <-time.After(time.Minute):
		t.Fatal("no change seen after a rename")
	}
	cancel()
	time.Sleep(3 * fileSettles)
	if len(seen) != 0 {
		t.Fatalf("%d more changes seen than the two made", len(seen))
	}
}
