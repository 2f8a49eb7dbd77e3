package sheets

import (
	"reflect"
	"testing"

	"keep/connectors"
)

func TestUpdateRow(t *testing.T) {
	t.Parallel()

	t.Run("It sets columns of the row the key names and tags it with the mutation's key", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write(t, "a.csv", "email,status\nalice@example.com,open\nbob@example.com,open\n")
		got := b.mustDo(t, "updateRow", "k1", with(sheet("a.csv"), "key", "email", "value", "bob@example.com", "set", map[string]any{"status": "paid"}))
		want := map[string]any{"rowNumber": int64(2), "row": map[string]any{"email": "bob@example.com", "status": "paid"}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v", got)
		}
		if file := b.read(t, "a.csv"); file != "email,status,_keep_id\nalice@example.com,open,\nbob@example.com,paid,"+tag("k1")+"\n" {
			t.Fatalf("file:\n%s", file)
		}
	})

	t.Run("A second update of the row replaces its key", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write(t, "a.csv", "n,v\n1,a\n")
		b.mustDo(t, "updateRow", "k1", with(sheet("a.csv"), "key", "n", "value", 1.0, "set", map[string]any{"v": "b"}))
		b.mustDo(t, "updateRow", "k2", with(sheet("a.csv"), "key", "n", "value", "1", "set", map[string]any{"v": "c"}))
		if file := b.read(t, "a.csv"); file != "n,v,_keep_id\n1,c,"+tag("k2")+"\n" {
			t.Fatalf("file:\n%s", file)
		}
	})

	t.Run("Running the same mutation twice is harmless even when it changed the key column", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write(t, "a.csv", "id,v\nA,1\n")
		p := with(sheet("a.csv"), "key", "id", "value", "A", "set", map[string]any{"id": "B"})
		first := b.mustDo(t, "updateRow", "k1", p)
		second := b.mustDo(t, "updateRow", "k1", p)
		if !reflect.DeepEqual(first, second) {
			t.Fatalf("%v then %v", first, second)
		}
	})

	t.Run("Failures are logic errors and change nothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		const content = "email,status\na@x,open\nb@x,open\nb@x,closed\n"
		b.write(t, "a.csv", content)
		base := sheet("a.csv")
		set := map[string]any{"status": "paid"}
		tests := []struct {
			name   string
			params map[string]any
			says   string
		}{
			{"no matching row", with(base, "key", "email", "value", "z@x", "set", set), `no row where email is "z@x"`},
			{"two matching rows", with(base, "key", "email", "value", "b@x", "set", set), "more than one row"},
			{"an unknown key column", with(base, "key", "mail", "value", "a@x", "set", set), `no column "mail"`},
			{"an unknown column to set", with(base, "key", "email", "value", "a@x", "set", map[string]any{"x": "1"}), `no column "x"`},
			{"the hidden column as the key", with(base, "key", "_keep_id", "value", "", "set", set), `no column "_keep_id"`},
			{"no key", with(base, "value", "a@x", "set", set), "key is required"},
			{"no value", with(base, "key", "email", "set", set), "value is required"},
			{"nothing to set", with(base, "key", "email", "value", "a@x"), "set is required"},
			{"a missing sheet", with(sheet("nope.csv"), "key", "email", "value", "a@x", "set", set), "no such sheet"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				_, err := b.do(t, "updateRow", "k", tt.params)
				wantClass(t, err, connectors.Logic, tt.says)
			})
		}
		t.Cleanup(func() {
			if file := b.read(t, "a.csv"); file != content {
				t.Errorf("file changed:\n%s", file)
			}
		})
	})
}
