package files_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"keep/connectors"
	"keep/connectors/files"
)

// bundle is one connector over two fresh roots, and a folder outside both.
type bundle struct {
	c       *files.Connector
	root    string // the first root
	second  string
	outside string
}

func setup(t *testing.T) *bundle {
	t.Helper()
	b := &bundle{root: t.TempDir(), second: t.TempDir(), outside: t.TempDir()}
	c, err := files.New(files.Config{Roots: []string{b.root, b.second}, MaxFileSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	b.c = c
	return b
}

// put writes a file below dir, creating folders.
func put(t *testing.T, dir, rel, content string) string {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func (b *bundle) do(t *testing.T, method string, params map[string]any) (any, error) {
	t.Helper()
	return b.c.Do(context.Background(), connectors.Call{Method: method, Params: params, IdempotencyKey: "k"})
}

func (b *bundle) must(t *testing.T, method string, params map[string]any) any {
	t.Helper()
	got, err := b.do(t, method, params)
	if err != nil {
		t.Fatalf("%s %v: %v", method, params, err)
	}
	return got
}

// TestListedFolder: list names the folder it reads, as the real path the
// engine's folder watch is kept by, whatever way the dir is written; the
// other methods and a dir out of the roots name none.
func TestListedFolder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	put(t, b.root, "inbox/a.txt", "a")
	if err := os.Symlink(filepath.Join(b.root, "inbox"), filepath.Join(b.root, "alias")); err != nil {
		t.Fatal(err)
	}
	inbox, err := connectors.RealPath(filepath.Join(b.root, "inbox"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := connectors.RealPath(b.root)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method string
		params map[string]any
		want   string
	}{
		{"list", map[string]any{"dir": "inbox", "glob": "*.txt"}, inbox},
		{"list", map[string]any{"dir": filepath.Join(b.root, "inbox")}, inbox},
		{"list", map[string]any{"dir": "alias"}, inbox},
		{"list", map[string]any{}, root},
		{"list", map[string]any{"dir": b.outside}, ""},
		{"read", map[string]any{"path": "inbox/a.txt"}, ""},
	} {
		got, ok := b.c.ListedFolder(c.method, c.params)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("ListedFolder(%s, %v) = %q, %v; want %q", c.method, c.params, got, ok, c.want)
		}
	}
}

func TestNew(t *testing.T) {
	t.Parallel()

	t.Run("the default root is ~/Keep, expanded", func(t *testing.T) {
		t.Parallel()
		c, err := files.New(files.Config{})
		if err != nil {
			t.Fatal(err)
		}
		home, _ := os.UserHomeDir()
		if got := c.Roots(); len(got) != 1 || got[0] != filepath.Join(home, "Keep") {
			t.Fatalf("roots %v", got)
		}
	})

	t.Run("it offers file inputs and reconciles", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		r := connectors.NewRegistry()
		r.Register(b.c)
		if err := r.CheckInput("files", "file"); err != nil {
			t.Fatal(err)
		}
		var _ connectors.Reconciler = b.c
	})
}

func TestList(t *testing.T) {
	t.Parallel()

	t.Run("it lists regular files matching the glob, sorted by name", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		put(t, b.root, "inbox/b.txt", "bb")
		put(t, b.root, "inbox/a.txt", "a")
		put(t, b.root, "inbox/c.md", "c")
		put(t, b.root, "inbox/sub/d.txt", "d")
		if err := os.Symlink(filepath.Join(b.outside), filepath.Join(b.root, "inbox/link.txt")); err != nil {
			t.Fatal(err)
		}
		got := b.must(t, "list", map[string]any{"dir": "inbox", "glob": "*.txt"}).([]any)
		if len(got) != 2 {
			t.Fatalf("got %v", got)
		}
		a := got[0].(map[string]any)
		if a["path"] != "inbox/a.txt" || a["name"] != "a.txt" || a["size"] != int64(1) {
			t.Fatalf("first %v", a)
		}
		if got[1].(map[string]any)["name"] != "b.txt" {
			t.Fatalf("second %v", got[1])
		}
		if m, _ := a["modified"].(string); !strings.HasSuffix(m, "Z") || len(m) != len("2006-01-02T15:04:05Z") {
			t.Fatalf("modified %q", a["modified"])
		}
	})

	t.Run("a missing folder is an error that names it, not an empty list", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := b.do(t, "list", map[string]any{"dir": "nope"})
		if err == nil || !strings.Contains(err.Error(), "list nope: no such folder") || connectors.ClassOf(err) != connectors.Logic {
			t.Fatalf("err = %v, want a logic error naming the folder", err)
		}
		// and the reference (keep help api, keep.d.ts) says so
		for _, m := range b.c.Methods() {
			if m.Name == "list" && (strings.Contains(m.Doc, "lists as []") || !strings.Contains(m.Doc, "missing folder is an error")) {
				t.Errorf("files.list's doc %q does not say a missing folder is an error", m.Doc)
			}
		}
	})

	t.Run("without a dir it lists the first root", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		put(t, b.root, "top.txt", "x")
		got := b.must(t, "list", map[string]any{}).([]any)
		if len(got) != 1 || got[0].(map[string]any)["path"] != "top.txt" {
			t.Fatalf("got %v", got)
		}
	})

	t.Run("files in another root are shown with absolute paths", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		put(t, b.second, "x.txt", "x")
		got := b.must(t, "list", map[string]any{"dir": b.second}).([]any)
		p := got[0].(map[string]any)["path"].(string)
		if p != filepath.Join(b.second, "x.txt") {
			t.Fatalf("path %q", p)
		}
		// and the path reads back the same file
		if r := b.must(t, "read", map[string]any{"path": p}).(map[string]any); r["content"] != "x" {
			t.Fatalf("read %v", r)
		}
	})
}

func TestRead(t *testing.T) {
	t.Parallel()

	t.Run("it returns content, size and modification time", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		put(t, b.root, "notes/a.txt", "héllo")
		got := b.must(t, "read", map[string]any{"path": "notes/a.txt"}).(map[string]any)
		if got["path"] != "notes/a.txt" || got["content"] != "héllo" || got["size"] != int64(6) || got["modified"] == "" {
			t.Fatalf("got %v", got)
		}
	})

	t.Run("an absolute path inside the root is accepted and shown relative", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		abs := put(t, b.root, "a.txt", "x")
		got := b.must(t, "read", map[string]any{"path": abs}).(map[string]any)
		if got["path"] != "a.txt" {
			t.Fatalf("got %v", got)
		}
	})

	t.Run("a missing file says no such file", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := b.do(t, "read", map[string]any{"path": "nope.txt"})
		if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), "no such file: nope.txt") {
			t.Fatalf("got %v", err)
		}
	})
}

// TestListNamesAFileNameThatIsNotUTF8: a name in another encoding (a
// Latin-1 "café.txt" from an old system) reaches a script with its odd
// bytes replaced, so the path it passes back names no file (or another
// one); list says which file it cannot hand on rather than list it.
func TestListNamesAFileNameThatIsNotUTF8(t *testing.T) {
	t.Parallel()
	b := setup(t)
	put(t, b.root, "inbox/caf\xe9.txt", "x")
	put(t, b.root, "inbox/ok.txt", "x")
	got, err := b.do(t, "list", map[string]any{"dir": "inbox", "glob": "*.txt"})
	if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), `inbox/caf\xe9.txt`) ||
		!strings.Contains(err.Error(), "rename") {
		t.Fatalf("list gave %v, %v", got, err)
	}
	// a name the glob leaves out is no one's concern
	if got := b.must(t, "list", map[string]any{"dir": "inbox", "glob": "ok*"}).([]any); len(got) != 1 {
		t.Fatalf("list ok*: %v", got)
	}
}

// TestListLeavesOutAWriteLeftUnfinished: a crash between write's temporary
// file and its rename leaves the temporary file; it is half a write, not a
// file of the person's, and a producer must not take it for an input.
func TestListLeavesOutAWriteLeftUnfinished(t *testing.T) {
	t.Parallel()
	b := setup(t)
	put(t, b.root, "inbox/.keep-8412396731.tmp", "half of a rep")
	put(t, b.root, "inbox/report.txt", "report")
	got := b.must(t, "list", map[string]any{"dir": "inbox"}).([]any)
	if len(got) != 1 || got[0].(map[string]any)["name"] != "report.txt" {
		t.Fatalf("list: %v", got)
	}
}
