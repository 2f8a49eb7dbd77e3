package files_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"keep/connectors"
)

// TestFolderSwappedForALink: a folder checked inside the root and swapped
// for a link out of it before the file in it is used (the window between
// resolve and open, mkdir, rename) never leads a call out. Another goroutine
// exchanges the folder and the link as fast as it can while the calls run;
// before the uses went through the checked folder, something landed outside
// within a few tries.
func TestFolderSwappedForALink(t *testing.T) {
	t.Parallel()
	b := setup(t)
	put(t, b.root, "x/keep", "")
	secret := filepath.Join(b.outside, "d")
	put(t, secret, "secret.txt", "s")
	symlink(t, secret, filepath.Join(b.root, "y"))
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
		put(t, b.root, fmt.Sprintf("src%d", i), "s")
		for _, call := range []struct {
			method string
			params map[string]any
		}{
			{"write", map[string]any{"path": "x/w", "content": "x"}},
			{"append", map[string]any{"path": "x/a", "content": "x"}},
			{"read", map[string]any{"path": "x/secret.txt"}},
			{"list", map[string]any{"dir": "x"}},
			{"move", map[string]any{"from": fmt.Sprintf("src%d", i), "to": fmt.Sprintf("x/m%d", i)}},
		} {
			got, err := b.do(t, call.method, call.params)
			if c := connectors.ClassOf(err); err != nil && c != connectors.Permission && c != connectors.Logic {
				t.Fatalf("%s: %v", call.method, err)
			}
			if call.method == "read" && err == nil {
				t.Fatalf("after %d rounds, read a file outside the roots: %v", i+1, got)
			}
			if call.method == "list" && err == nil {
				for _, e := range got.([]any) {
					if e.(map[string]any)["name"] == "secret.txt" {
						t.Fatalf("after %d rounds, listed a file outside the roots: %v", i+1, e)
					}
				}
			}
		}
		if entries, _ := os.ReadDir(secret); len(entries) != 1 {
			t.Fatalf("after %d rounds, outside the roots holds %v", i+1, entries)
		}
	}
}
