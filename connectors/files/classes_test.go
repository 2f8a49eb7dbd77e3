package files_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"keep/connectors"
)

// TestFailureClasses maps each way a files call can fail to the class the
// host acts on (DESIGN §7.2).
func TestFailureClasses(t *testing.T) {
	t.Parallel()

	cases := []struct {
		name    string
		arrange func(t *testing.T, b *bundle) (method string, params map[string]any)
		want    connectors.Class
	}{
		{"a read of a missing file is a logic error", func(t *testing.T, b *bundle) (string, map[string]any) {
			return "read", map[string]any{"path": "nope.txt"}
		}, connectors.Logic},
		{"a read of a file over the size cap is a logic error", func(t *testing.T, b *bundle) (string, map[string]any) {
			put(t, b.root, "big.txt", strings.Repeat("x", 65))
			return "read", map[string]any{"path": "big.txt"}
		}, connectors.Logic},
		{"a read of bytes that are not UTF-8 is a logic error", func(t *testing.T, b *bundle) (string, map[string]any) {
			put(t, b.root, "bin", "\xff\xfe")
			return "read", map[string]any{"path": "bin"}
		}, connectors.Logic},
		{"a read of a folder is a logic error", func(t *testing.T, b *bundle) (string, map[string]any) {
			put(t, b.root, "d/x", "")
			return "read", map[string]any{"path": "d"}
		}, connectors.Logic},
		{"a write over the size cap is a logic error", func(t *testing.T, b *bundle) (string, map[string]any) {
			return "write", map[string]any{"path": "a.txt", "content": strings.Repeat("x", 65)}
		}, connectors.Logic},
		{"a write whose content is not a string is a logic error", func(t *testing.T, b *bundle) (string, map[string]any) {
			return "write", map[string]any{"path": "a.txt", "content": 3.0}
		}, connectors.Logic},
		{"a write without a path is a logic error", func(t *testing.T, b *bundle) (string, map[string]any) {
			return "write", map[string]any{"content": "x"}
		}, connectors.Logic},
		{"a write below a file is a logic error", func(t *testing.T, b *bundle) (string, map[string]any) {
			put(t, b.root, "f", "")
			return "write", map[string]any{"path": "f/a.txt", "content": "x"}
		}, connectors.Logic},
		{"a write over a folder is a logic error", func(t *testing.T, b *bundle) (string, map[string]any) {
			put(t, b.root, "d/x", "")
			return "write", map[string]any{"path": "d", "content": "x"}
		}, connectors.Logic},
		{"an append past the size cap is a logic error", func(t *testing.T, b *bundle) (string, map[string]any) {
			put(t, b.root, "a.txt", strings.Repeat("x", 60))
			return "append", map[string]any{"path": "a.txt", "content": "12345"}
		}, connectors.Logic},
		{"a move of a missing file is a logic error", func(t *testing.T, b *bundle) (string, map[string]any) {
			return "move", map[string]any{"from": "nope", "to": "b"}
		}, connectors.Logic},
		{"a move onto an existing file is a logic error", func(t *testing.T, b *bundle) (string, map[string]any) {
			put(t, b.root, "a", "")
			put(t, b.root, "b", "")
			return "move", map[string]any{"from": "a", "to": "b"}
		}, connectors.Logic},
		{"a path with a NUL byte is a logic error", func(t *testing.T, b *bundle) (string, map[string]any) {
			return "write", map[string]any{"path": "a\x00b", "content": "x"}
		}, connectors.Logic},
		{"a bad glob is a logic error", func(t *testing.T, b *bundle) (string, map[string]any) {
			return "list", map[string]any{"glob": "["}
		}, connectors.Logic},
		{"an unknown method is a logic error", func(t *testing.T, b *bundle) (string, map[string]any) {
			return "delete", map[string]any{"path": "a"}
		}, connectors.Logic},
		{"a path climbing out with .. is a permission error", func(t *testing.T, b *bundle) (string, map[string]any) {
			return "write", map[string]any{"path": "notes/../../x.txt", "content": "x"}
		}, connectors.Permission},
		{"an absolute path outside every root is a permission error", func(t *testing.T, b *bundle) (string, map[string]any) {
			return "read", map[string]any{"path": put(t, b.outside, "secret.txt", "s")}
		}, connectors.Permission},
		{"a write through a symlinked folder pointing out is a permission error", func(t *testing.T, b *bundle) (string, map[string]any) {
			symlink(t, b.outside, filepath.Join(b.root, "out"))
			return "write", map[string]any{"path": "out/new/x.txt", "content": "x"}
		}, connectors.Permission},
		{"a read of a symlinked file pointing out is a permission error", func(t *testing.T, b *bundle) (string, map[string]any) {
			symlink(t, put(t, b.outside, "secret.txt", "s"), filepath.Join(b.root, "s.txt"))
			return "read", map[string]any{"path": "s.txt"}
		}, connectors.Permission},
		{"an append through a symlinked file pointing out is a permission error", func(t *testing.T, b *bundle) (string, map[string]any) {
			symlink(t, put(t, b.outside, "log.txt", ""), filepath.Join(b.root, "log.txt"))
			return "append", map[string]any{"path": "log.txt", "content": "x"}
		}, connectors.Permission},
		{"a list of a symlinked folder pointing out is a permission error", func(t *testing.T, b *bundle) (string, map[string]any) {
			symlink(t, b.outside, filepath.Join(b.root, "out"))
			return "list", map[string]any{"dir": "out"}
		}, connectors.Permission},
		{"a move out of the roots is a permission error", func(t *testing.T, b *bundle) (string, map[string]any) {
			put(t, b.root, "a.txt", "")
			return "move", map[string]any{"from": "a.txt", "to": filepath.Join(b.outside, "a.txt")}
		}, connectors.Permission},
		{"a move in from outside the roots is a permission error", func(t *testing.T, b *bundle) (string, map[string]any) {
			return "move", map[string]any{"from": put(t, b.outside, "a.txt", ""), "to": "a.txt"}
		}, connectors.Permission},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			method, params := tc.arrange(t, b)
			_, err := b.do(t, method, params)
			if got := connectors.ClassOf(err); got != tc.want {
				t.Fatalf("class %q (%v), want %q", got, err, tc.want)
			}
			if tc.want == connectors.Permission && !strings.Contains(err.Error(), b.root) {
				t.Fatalf("the error should name the roots: %v", err)
			}
			// Nothing may have been written outside.
			if entries, _ := os.ReadDir(b.outside); len(entries) > 1 {
				t.Fatalf("outside now holds %v", entries)
			}
		})
	}

	t.Run("a call whose context is done is transient and touches nothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := b.c.Do(ctx, connectors.Call{Method: "write", Params: map[string]any{"path": "a.txt", "content": "x"}})
		if connectors.ClassOf(err) != connectors.Transient {
			t.Fatalf("got %v", err)
		}
		if _, err := os.Stat(filepath.Join(b.root, "a.txt")); !os.IsNotExist(err) {
			t.Fatalf("file written: %v", err)
		}
	})

	t.Run("a symlink that stays inside the root is followed", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		put(t, b.root, "real/a.txt", "x")
		symlink(t, filepath.Join(b.root, "real"), filepath.Join(b.root, "alias"))
		got := b.must(t, "read", map[string]any{"path": "alias/a.txt"}).(map[string]any)
		if got["content"] != "x" {
			t.Fatalf("got %v", got)
		}
	})
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
