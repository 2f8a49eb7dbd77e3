package sheets

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"keep/connectors"
)

// TestFolderSwappedForALink: a folder checked inside the root and swapped
// for a link out of it between locate and the file's use never leads a read
// or a rewrite out. Another goroutine exchanges the folder and the link as
// fast as it can; when the sheet was used by name, a row landed in the
// sheet outside within a few tries.
func TestFolderSwappedForALink(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.write(t, "x/a.csv", "name\n")
	outside := t.TempDir()
	const secret = "secret\nhidden\n"
	if err := os.WriteFile(filepath.Join(outside, "a.csv"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(b.root, "y")); err != nil {
		t.Fatal(err)
	}
	swap := func() error {
		return unix.Renameat2(unix.AT_FDCWD, filepath.Join(b.root, "x"), unix.AT_FDCWD, filepath.Join(b.root, "y"), unix.RENAME_EXCHANGE)
	}
	if err := swap(); err != nil {
		t.Skipf("this file system cannot exchange names: %v", err)
	}
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			swap()
		}
	}()
	defer func() { stop.Store(true); <-done }()

	for i := range 1500 {
		got, err := b.do(t, "rows", "", map[string]any{"spreadsheet": "x/a.csv"})
		if err == nil {
			if h := got.(map[string]any)["header"].([]any); len(h) > 0 && h[0] == "secret" {
				t.Fatalf("after %d rounds, read the sheet outside the roots", i+1)
			}
		}
		_, err = b.do(t, "appendRow", "", map[string]any{"spreadsheet": "x/a.csv", "values": []any{"1"}})
		if c := connectors.ClassOf(err); err != nil && c != connectors.Permission && c != connectors.Logic && c != connectors.Transient {
			t.Fatalf("appendRow: %v", err)
		}
		if data, _ := os.ReadFile(filepath.Join(outside, "a.csv")); string(data) != secret {
			t.Fatalf("after %d rounds, the sheet outside the roots holds %q", i+1, data)
		}
		if entries, _ := os.ReadDir(outside); len(entries) != 1 {
			t.Fatalf("after %d rounds, outside the roots holds %v", i+1, entries)
		}
	}
}
