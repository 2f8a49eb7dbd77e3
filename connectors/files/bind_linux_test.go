package files_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"keep/connectors"
	"keep/connectors/files"
)

// TestKeepsFolderBoundUnderARoot: keep's folder (its database, WAL, log)
// mounted under a root with a bind mount is the same folder under another
// name, with no link on the way and files of one link each: no method
// reaches keep's files there, and a listing of it shows none. Before
// places were also told by what the folder is (device and inode), read,
// list, append and write all went through. Needs the right to mount (root).
func TestKeepsFolderBoundUnderARoot(t *testing.T) {
	keepDir := t.TempDir()
	put(t, keepDir, "keep.db", "SQLite format 3")
	put(t, keepDir, "keep.db-wal", "wal")
	put(t, keepDir, "keep.log", "log")
	put(t, keepDir, "demo/inbox/note.txt", "the person's")
	root := t.TempDir()
	bound := filepath.Join(root, "bound")
	if err := os.Mkdir(bound, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(keepDir, bound, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind mount here: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(bound, unix.MNT_DETACH) })
	protected, err := connectors.NewProtected(connectors.Place{Dir: keepDir, Own: "keep.db", Why: "beside keep's database"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := files.New(files.Config{Roots: []string{root}, Protected: protected})
	if err != nil {
		t.Fatal(err)
	}
	b := &bundle{c: c, root: root}
	for _, call := range []struct {
		method string
		params map[string]any
	}{
		{"read", map[string]any{"path": "bound/keep.db"}},
		{"read", map[string]any{"path": "bound/keep.log"}},
		{"append", map[string]any{"path": "bound/keep.db-wal", "content": "x"}},
		{"write", map[string]any{"path": "bound/keep.log", "content": "x"}},
		{"write", map[string]any{"path": "bound/service.env", "content": "x"}},
		{"move", map[string]any{"from": "bound/keep.db", "to": "stolen.db"}},
	} {
		_, err := b.do(t, call.method, call.params)
		if connectors.ClassOf(err) != connectors.Permission {
			t.Errorf("%s %v through the bind mount: %v, want a permission error", call.method, call.params, err)
		}
	}
	list := b.must(t, "list", map[string]any{"dir": "bound"}).([]any)
	for _, e := range list {
		if name := e.(map[string]any)["name"].(string); strings.HasPrefix(name, "keep.") {
			t.Errorf("list of the bind mount shows keep's %s", name)
		}
	}
	for name, want := range map[string]string{"keep.db": "SQLite format 3", "keep.db-wal": "wal", "keep.log": "log"} {
		if got, _ := os.ReadFile(filepath.Join(keepDir, name)); string(got) != want {
			t.Errorf("keep's %s now holds %q", name, got)
		}
	}
	if _, err := os.Stat(filepath.Join(keepDir, "service.env")); err == nil {
		t.Error("a file was written beside keep's database")
	}
	// the person's folder beside the database stays theirs
	got := b.must(t, "read", map[string]any{"path": "bound/demo/inbox/note.txt"}).(map[string]any)
	if got["content"] != "the person's" {
		t.Errorf("the person's note through the mount: %v", got)
	}
}
