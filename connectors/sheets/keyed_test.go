package sheets

import (
	"context"
	"errors"
	"strings"
	"testing"

	"keep/connectors"
)

// The hidden column holds a tag of the key under the host's secret, never
// the key: the keys are public and counted, so a row anyone can write must
// not pass for keep's.
func TestHiddenColumnHoldsAKeyedTag(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	appendK1 := with(sheet("a.csv"), "row", map[string]any{"x": "1"})

	t.Run("A row another party wrote with the raw key is not keep's append, nor proof it didn't happen", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write(t, "a.csv", "x,_keep_id\n0,k0\n1,k1\n")
		v, res, err := b.c.Reconcile(ctx, connectors.Call{Method: "appendRow", Params: appendK1, IdempotencyKey: "k1"})
		if v != connectors.Unknown || res != nil || !errors.Is(err, connectors.ErrCannotCheck) {
			t.Fatalf("%s %v %v, want unknown, put to the person", v, res, err)
		}
		if msg := err.Error(); !strings.Contains(msg, "B3") || !strings.Contains(msg, "a.csv") {
			t.Errorf("the error does not say which row to check: %s", msg)
		}
	})

	t.Run("A raw key on the updated row is not keep's update either", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write(t, "a.csv", "n,v,_keep_id\n1,b,k1\n")
		upd := with(sheet("a.csv"), "key", "n", "value", "1", "set", map[string]any{"v": "b"})
		v, _, err := b.c.Reconcile(ctx, connectors.Call{Method: "updateRow", Params: upd, IdempotencyKey: "k1"})
		if v == connectors.Applied || !errors.Is(err, connectors.ErrCannotCheck) {
			t.Fatalf("%s %v, want unknown, put to the person", v, err)
		}
	})

	t.Run("Once the person says it didn't happen, the append is made beside the raw-key row", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write(t, "a.csv", "x,_keep_id\nforged,k1\n")
		got := b.mustDo(t, "appendRow", "k1", appendK1)
		if got["rowNumber"] != int64(2) {
			t.Fatalf("appendRow gave %v, the forged row's", got)
		}
		if file, want := b.read(t, "a.csv"), "x,_keep_id\nforged,k1\n1,"+tag("k1")+"\n"; file != want {
			t.Fatalf("file:\n%s\nwant:\n%s", file, want)
		}
		if v, _, err := b.c.Reconcile(ctx, connectors.Call{Method: "appendRow", Params: appendK1, IdempotencyKey: "k1"}); v != connectors.Applied || err != nil {
			t.Fatalf("after the append: %s %v", v, err)
		}
	})

	t.Run("The tag is the same after a restart and unlike any other secret's", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.mustDo(t, "appendRow", "k1", appendK1)
		if file := b.read(t, "a.csv"); strings.Contains(file, ",k1") {
			t.Fatalf("the raw key is in the file:\n%s", file)
		}
		restarted, err := New(Config{Roots: []string{b.root}})
		if err != nil {
			t.Fatal(err)
		}
		restarted.UseSecret(testSecret)
		if v, _, err := restarted.Reconcile(ctx, connectors.Call{Method: "appendRow", Params: appendK1, IdempotencyKey: "k1"}); v != connectors.Applied || err != nil {
			t.Fatalf("after a restart: %s %v", v, err)
		}
		other, err := New(Config{Roots: []string{b.root}})
		if err != nil {
			t.Fatal(err)
		}
		other.UseSecret([]byte("another database's secret"))
		if v, _, err := other.Reconcile(ctx, connectors.Call{Method: "appendRow", Params: appendK1, IdempotencyKey: "k1"}); v != connectors.NotApplied || err != nil {
			t.Fatalf("under another secret: %s %v", v, err)
		}
	})

	t.Run("A Google tab's raw-key row is not keep's append", func(t *testing.T) {
		t.Parallel()
		g := setupGoogle(t)
		g.fake.tabs[sheetID+"/Invoices"] = [][]string{
			{"number", "total", KeepIDColumn},
			{"INV-1", "10", "k1"},
		}
		p := with(invoices, "values", []any{"INV-1", "10"})
		v, _, err := g.c.Reconcile(ctx, connectors.Call{Method: "appendRow", Params: p, IdempotencyKey: "k1"})
		if v == connectors.Applied || !errors.Is(err, connectors.ErrCannotCheck) {
			t.Fatalf("%s %v, want unknown, put to the person", v, err)
		}
		g.mustDo(t, "appendRow", "k1", p)
		if rows := g.fake.grid(sheetID + "/Invoices"); len(rows) != 3 || rows[2][2] != tag("k1") {
			t.Fatalf("tab %q", rows)
		}
	})
}
