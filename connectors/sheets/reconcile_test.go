package sheets

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"

	"keep/connectors"
)

func TestReconcile(t *testing.T) {
	t.Parallel()

	reconcile := func(b *bundle, method, key string, params map[string]any) (connectors.Verdict, any, error) {
		return b.c.Reconcile(context.Background(), connectors.Call{Method: method, Params: params, IdempotencyKey: key})
	}

	t.Run("An applied append is found with the result Do gave", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		p := with(sheet("a.csv"), "row", map[string]any{"x": "1"})
		want := b.mustDo(t, "appendRow", "k1", p)
		b.mustDo(t, "appendRow", "k2", with(sheet("a.csv"), "row", map[string]any{"x": "2"}))
		v, got, err := reconcile(b, "appendRow", "k1", p)
		if err != nil || v != connectors.Applied || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s %v %v, want applied %v", v, got, err, want)
		}
	})

	t.Run("An applied update is found", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write(t, "a.csv", "n,v\n1,a\n")
		p := with(sheet("a.csv"), "key", "n", "value", "1", "set", map[string]any{"v": "b"})
		want := b.mustDo(t, "updateRow", "k1", p)
		v, got, err := reconcile(b, "updateRow", "k1", p)
		if err != nil || v != connectors.Applied || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s %v %v", v, got, err)
		}
	})

	t.Run("A sheet that was never created means not applied", func(t *testing.T) {
		t.Parallel()
		v, _, err := reconcile(setup(t), "appendRow", "k1", with(sheet("a.csv"), "row", map[string]any{"x": "1"}))
		if err != nil || v != connectors.NotApplied {
			t.Fatalf("%s %v", v, err)
		}
	})

	t.Run("A readable sheet without the row means not applied", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.mustDo(t, "appendRow", "other", with(sheet("a.csv"), "row", map[string]any{"x": "1"}))
		v, _, err := reconcile(b, "appendRow", "k1", with(sheet("a.csv"), "row", map[string]any{"x": "1"}))
		if err != nil || v != connectors.NotApplied {
			t.Fatalf("%s %v", v, err)
		}
	})

	t.Run("An unreadable sheet means unknown, with the reason", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write(t, "a.csv", "x\n\"broken\n")
		v, _, err := reconcile(b, "appendRow", "k1", with(sheet("a.csv"), "row", map[string]any{"x": "1"}))
		if v != connectors.Unknown || err == nil {
			t.Fatalf("%s %v", v, err)
		}
	})

	t.Run("A call without a key can't be checked", func(t *testing.T) {
		t.Parallel()
		_, _, err := reconcile(setup(t), "appendRow", "", with(sheet("a.csv"), "row", map[string]any{"x": "1"}))
		if !errors.Is(err, connectors.ErrCannotCheck) {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("A read is not reconciled", func(t *testing.T) {
		t.Parallel()
		_, _, err := reconcile(setup(t), "rows", "k", sheet("a.csv"))
		wantClass(t, err, connectors.Internal, "not a mutation")
	})

	t.Run("A failed rename is uncertain and reconciles as not applied", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write(t, "a.csv", "x\n")
		b.c.ops.rename = func(*os.File, string, string) error { return &os.LinkError{Op: "rename", Err: syscall.EIO} }
		p := with(sheet("a.csv"), "row", map[string]any{"x": "1"})
		_, err := b.do(t, "appendRow", "k1", p)
		wantClass(t, err, connectors.Uncertain, "replace a.csv")
		if v, _, err := reconcile(b, "appendRow", "k1", p); err != nil || v != connectors.NotApplied {
			t.Fatalf("%s %v", v, err)
		}
		if entries, _ := os.ReadDir(b.root); len(entries) != 1 {
			t.Fatalf("left %v", entries)
		}
	})

	t.Run("A failure after the rename is uncertain and reconciles as applied", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.c.ops.syncDir = func(*os.File) error { return syscall.EIO }
		p := with(sheet("a.csv"), "row", map[string]any{"x": "1"})
		_, err := b.do(t, "appendRow", "k1", p)
		wantClass(t, err, connectors.Uncertain, "sync the directory")
		v, got, err := reconcile(b, "appendRow", "k1", p)
		want := map[string]any{"rowNumber": int64(1), "row": map[string]any{"x": "1"}}
		if err != nil || v != connectors.Applied || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s %v %v", v, got, err)
		}
		if _, err := os.Stat(filepath.Join(b.root, "a.csv")); err != nil {
			t.Fatal(err)
		}
	})
}
