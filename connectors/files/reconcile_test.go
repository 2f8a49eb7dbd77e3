package files_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"keep/connectors"
)

func TestReconcile(t *testing.T) {
	t.Parallel()

	cases := []struct {
		name    string
		arrange func(t *testing.T, b *bundle)
		method  string
		params  map[string]any
		want    connectors.Verdict
	}{
		{"a write whose content is in the file was applied", func(t *testing.T, b *bundle) { put(t, b.root, "a.txt", "new") },
			"write", map[string]any{"path": "a.txt", "content": "new"}, connectors.Applied},
		{"a write whose file is missing was not applied", func(t *testing.T, b *bundle) {},
			"write", map[string]any{"path": "a.txt", "content": "new"}, connectors.NotApplied},
		{"a write whose file differs was not applied", func(t *testing.T, b *bundle) { put(t, b.root, "a.txt", "old") },
			"write", map[string]any{"path": "a.txt", "content": "new"}, connectors.NotApplied},
		{"an append the file ends with was applied", func(t *testing.T, b *bundle) { put(t, b.root, "log", "one\ntwo\n") },
			"append", map[string]any{"path": "log", "content": "two\n"}, connectors.Applied},
		{"an append found nowhere in the file was not applied", func(t *testing.T, b *bundle) { put(t, b.root, "log", "one\n") },
			"append", map[string]any{"path": "log", "content": "two\n"}, connectors.NotApplied},
		{"an append to a missing file was not applied", func(t *testing.T, b *bundle) {},
			"append", map[string]any{"path": "log", "content": "two\n"}, connectors.NotApplied},
		{"an append whose content the file held before it is unknown", func(t *testing.T, b *bundle) { put(t, b.root, "log", "tick\ntick\n") },
			"append", map[string]any{"path": "log", "content": "tick\n"}, connectors.Unknown},
		{"an append whose content overlaps an earlier copy is unknown", func(t *testing.T, b *bundle) { put(t, b.root, "log", "xaaa") },
			"append", map[string]any{"path": "log", "content": "aa"}, connectors.Unknown},
		{"an empty append to an existing file was applied", func(t *testing.T, b *bundle) { put(t, b.root, "log", "one\n") },
			"append", map[string]any{"path": "log", "content": ""}, connectors.Applied},
		{"an append found with more after it is unknown", func(t *testing.T, b *bundle) { put(t, b.root, "log", "two\nthree\n") },
			"append", map[string]any{"path": "log", "content": "two\n"}, connectors.Unknown},
		{"a move whose target alone exists was applied", func(t *testing.T, b *bundle) { put(t, b.root, "done/a", "") },
			"move", map[string]any{"from": "inbox/a", "to": "done/a"}, connectors.Applied},
		{"a move whose source alone exists was not applied", func(t *testing.T, b *bundle) { put(t, b.root, "inbox/a", "") },
			"move", map[string]any{"from": "inbox/a", "to": "done/a"}, connectors.NotApplied},
		{"a move with both files present is unknown", func(t *testing.T, b *bundle) {
			put(t, b.root, "inbox/a", "")
			put(t, b.root, "done/a", "")
		}, "move", map[string]any{"from": "inbox/a", "to": "done/a"}, connectors.Unknown},
		{"a move with neither file present is unknown", func(t *testing.T, b *bundle) {},
			"move", map[string]any{"from": "inbox/a", "to": "done/a"}, connectors.Unknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			tc.arrange(t, b)
			verdict, result, err := b.c.Reconcile(context.Background(), connectors.Call{Method: tc.method, Params: tc.params, IdempotencyKey: "k"})
			if err != nil {
				t.Fatal(err)
			}
			if verdict != tc.want {
				t.Fatalf("verdict %q, want %q", verdict, tc.want)
			}
			if (verdict == connectors.Applied) != (result != nil) {
				t.Fatalf("verdict %q with result %v", verdict, result)
			}
		})
	}

	t.Run("an applied write returns the same result as the write", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		params := map[string]any{"path": "notes/a.txt", "content": "hello"}
		want := b.must(t, "write", params).(map[string]any)
		_, got, _ := b.c.Reconcile(context.Background(), connectors.Call{Method: "write", Params: params})
		g := got.(map[string]any)
		if g["path"] != want["path"] || g["size"] != want["size"] {
			t.Fatalf("reconciled %v, written %v", g, want)
		}
	})

	t.Run("a path outside the roots is a permission error, not a verdict", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		v, _, err := b.c.Reconcile(context.Background(), connectors.Call{Method: "write",
			Params: map[string]any{"path": filepath.Join(b.outside, "a"), "content": "x"}})
		if v != connectors.Unknown || connectors.ClassOf(err) != connectors.Permission {
			t.Fatalf("verdict %q err %v", v, err)
		}
	})

	t.Run("a file grown past the cap cannot be compared yet", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		put(t, b.root, "big", string(make([]byte, 100)))
		v, _, err := b.c.Reconcile(context.Background(), connectors.Call{Method: "append",
			Params: map[string]any{"path": "big", "content": "x"}})
		var ce *connectors.Error
		if v != connectors.Unknown || !errors.As(err, &ce) || ce.Class != connectors.Transient {
			t.Fatalf("verdict %q err %v", v, err)
		}
	})

	t.Run("a read is not reconciled", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, _, err := b.c.Reconcile(context.Background(), connectors.Call{Method: "read", Params: map[string]any{"path": "a"}})
		if connectors.ClassOf(err) != connectors.Logic {
			t.Fatalf("got %v", err)
		}
	})
}
