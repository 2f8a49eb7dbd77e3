package files_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"keep/connectors"
)

func TestWrite(t *testing.T) {
	t.Parallel()

	t.Run("it creates folders and leaves no temporary file", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		got := b.must(t, "write", map[string]any{"path": "notes/day/a.txt", "content": "first line\nsecond"}).(map[string]any)
		if got["path"] != "notes/day/a.txt" || got["size"] != int64(17) {
			t.Fatalf("got %v", got)
		}
		data, err := os.ReadFile(filepath.Join(b.root, "notes/day/a.txt"))
		if err != nil || string(data) != "first line\nsecond" {
			t.Fatalf("file %q %v", data, err)
		}
		entries, _ := os.ReadDir(filepath.Join(b.root, "notes/day"))
		if len(entries) != 1 {
			t.Fatalf("folder holds %v", entries)
		}
	})

	t.Run("it replaces a file and keeps its mode", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		p := put(t, b.root, "a.txt", "old")
		if err := os.Chmod(p, 0o600); err != nil {
			t.Fatal(err)
		}
		b.must(t, "write", map[string]any{"path": "a.txt", "content": "new"})
		data, _ := os.ReadFile(p)
		info, _ := os.Stat(p)
		if string(data) != "new" || info.Mode().Perm() != 0o600 {
			t.Fatalf("file %q mode %v", data, info.Mode())
		}
	})

	t.Run("an empty content writes an empty file", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.must(t, "write", map[string]any{"path": "empty.txt", "content": ""})
		if info, err := os.Stat(filepath.Join(b.root, "empty.txt")); err != nil || info.Size() != 0 {
			t.Fatalf("%v %v", info, err)
		}
	})
}

func TestAppend(t *testing.T) {
	t.Parallel()

	t.Run("it creates the file, then appends and reports the new size", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.must(t, "append", map[string]any{"path": "log/a.txt", "content": "one\n"})
		got := b.must(t, "append", map[string]any{"path": "log/a.txt", "content": "two\n"}).(map[string]any)
		if got["path"] != "log/a.txt" || got["size"] != int64(8) {
			t.Fatalf("got %v", got)
		}
		data, _ := os.ReadFile(filepath.Join(b.root, "log/a.txt"))
		if string(data) != "one\ntwo\n" {
			t.Fatalf("file %q", data)
		}
	})
}

// TestAppendHandsItsSyncToTheHost: with a host that takes it, an append
// returns once its bytes are in the file and hands over the sync, once; a
// refused append hands over nothing. Without one, the append syncs itself.
func TestAppendHandsItsSyncToTheHost(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var syncs []func() error
	call := func(content string) (any, error) {
		return b.c.Do(context.Background(), connectors.Call{Method: "append", IdempotencyKey: "k",
			Params:    map[string]any{"path": "a.txt", "content": content},
			SyncLater: func(sync func() error) { syncs = append(syncs, sync) }})
	}
	got, err := call("one\n")
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(b.root, "a.txt")); string(data) != "one\n" {
		t.Fatalf("a.txt holds %q when the append returned %v", data, got)
	}
	if len(syncs) != 1 {
		t.Fatalf("the append handed over %d syncs, want 1", len(syncs))
	}
	if err := syncs[0](); err != nil {
		t.Fatalf("the handed sync: %v", err)
	}
	if _, err := call(strings.Repeat("x", 100)); err == nil { // past MaxFileSize
		t.Fatal("an append past the size limit was accepted")
	}
	if len(syncs) != 1 {
		t.Fatalf("a refused append handed over a sync")
	}
	if _, err := b.c.Do(context.Background(), connectors.Call{Method: "append", IdempotencyKey: "k",
		Params: map[string]any{"path": "a.txt", "content": "two\n"}}); err != nil {
		t.Fatal(err)
	}
	if len(syncs) != 1 {
		t.Fatal("an append without a host to take its sync handed one over")
	}
	if data, _ := os.ReadFile(filepath.Join(b.root, "a.txt")); string(data) != "one\ntwo\n" {
		t.Fatalf("a.txt holds %q", data)
	}
}

func TestMove(t *testing.T) {
	t.Parallel()

	t.Run("it moves a file into a new folder", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		put(t, b.root, "inbox/a.txt", "x")
		got := b.must(t, "move", map[string]any{"from": "inbox/a.txt", "to": "done/a.txt"}).(map[string]any)
		if got["path"] != "done/a.txt" {
			t.Fatalf("got %v", got)
		}
		if _, err := os.Stat(filepath.Join(b.root, "inbox/a.txt")); !os.IsNotExist(err) {
			t.Fatalf("source still there: %v", err)
		}
		if data, _ := os.ReadFile(filepath.Join(b.root, "done/a.txt")); string(data) != "x" {
			t.Fatalf("moved %q", data)
		}
	})

	t.Run("it moves between roots", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		put(t, b.root, "a.txt", "x")
		to := filepath.Join(b.second, "a.txt")
		got := b.must(t, "move", map[string]any{"from": "a.txt", "to": to}).(map[string]any)
		if got["path"] != to {
			t.Fatalf("got %v", got)
		}
	})

	t.Run("it refuses to overwrite and leaves both files alone", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		put(t, b.root, "a.txt", "a")
		put(t, b.root, "b.txt", "b")
		_, err := b.do(t, "move", map[string]any{"from": "a.txt", "to": "b.txt"})
		if err == nil || !strings.Contains(err.Error(), "already exists") {
			t.Fatalf("got %v", err)
		}
		if data, _ := os.ReadFile(filepath.Join(b.root, "b.txt")); string(data) != "b" {
			t.Fatalf("b.txt now %q", data)
		}
	})
}

func TestMethods(t *testing.T) {
	t.Parallel()
	b := setup(t)
	byName := map[string]func(map[string]any) string{}
	checks := map[string]func(map[string]any) string{}
	scopes := map[string]func(map[string]any) string{}
	for _, m := range b.c.Methods() {
		byName[m.Name] = m.Preview
		checks[m.Name] = m.Check
		scopes[m.Name] = m.Scope
	}

	t.Run("the write preview shows path, size and the first line", func(t *testing.T) {
		t.Parallel()
		got := byName["write"](map[string]any{"path": "notes/a.txt", "content": "first line\nmore"})
		if got != `write notes/a.txt (15 bytes): "first line…"` {
			t.Fatalf("preview %q", got)
		}
	})

	t.Run("the check names the file", func(t *testing.T) {
		t.Parallel()
		if got := checks["write"](map[string]any{"path": "./notes//a.txt"}); got != "look at notes/a.txt" {
			t.Fatalf("check %q", got)
		}
	})

	t.Run("the scope is the cleaned relative path, and for move both", func(t *testing.T) {
		t.Parallel()
		if got := scopes["write"](map[string]any{"path": "notes/../notes/a.txt"}); got != "notes/a.txt" {
			t.Fatalf("scope %q", got)
		}
		got := scopes["move"](map[string]any{"from": "inbox/a.txt", "to": "./done//a,b.txt"})
		if parts := connectors.ScopeParts(got, connectors.ScopePath); !slices.Equal(parts, []string{"inbox/a.txt", "done/a,b.txt"}) {
			t.Fatalf("scope %q names %q, want the source and the destination", got, parts)
		}
		// a NUL inside a path does not cut it into two parts
		got = scopes["move"](map[string]any{"from": "inbox/a\x00b.txt", "to": "done/a\x00outbox"})
		if parts := connectors.ScopeParts(got, connectors.ScopePath); len(parts) != 2 {
			t.Fatalf("scope %q names %q, want two parts", got, parts)
		}
		if got := scopes["write"](map[string]any{"path": filepath.Join(b.second, "x")}); got != filepath.Join(b.second, "x") {
			t.Fatalf("scope in the second root %q", got)
		}
	})

	t.Run("a path outside the roots never scopes as a relative path", func(t *testing.T) {
		t.Parallel()
		if got := scopes["write"](map[string]any{"path": "../notes/a.txt"}); !filepath.IsAbs(got) {
			t.Fatalf("scope %q", got)
		}
	})
}

// TestAppendThroughAHardLink: a file in a root that is also a name of a file
// elsewhere is not appended to, since the bytes would land in that file too.
func TestAppendThroughAHardLink(t *testing.T) {
	t.Parallel()
	b := setup(t)
	outside := put(t, b.outside, "profile", "orig\n")
	if err := os.Link(outside, filepath.Join(b.root, "profile")); err != nil {
		t.Fatal(err)
	}
	_, err := b.do(t, "append", map[string]any{"path": "profile", "content": "evil\n"})
	if connectors.ClassOf(err) != connectors.Permission {
		t.Fatalf("got %v", err)
	}
	if got, _ := os.ReadFile(outside); string(got) != "orig\n" {
		t.Fatalf("the file outside the roots now holds %q", got)
	}
	// write replaces the name in the root, leaving the other one as it was.
	b.must(t, "write", map[string]any{"path": "profile", "content": "new\n"})
	if got, _ := os.ReadFile(outside); string(got) != "orig\n" {
		t.Fatalf("write changed the file outside the roots: %q", got)
	}
}
