package sheets

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"keep/connectors"
	"keep/engine/enginetest/kit"
)

func TestAppendRow(t *testing.T) {
	t.Parallel()

	t.Run("It creates the file with the row's columns sorted and the hidden key column", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		got := b.mustDo(t, "appendRow", "k1", with(sheet("invoices.csv"), "row", map[string]any{"subject": "Invoice, December", "email": "alice@example.com", "amount": 12.5}))
		want := map[string]any{"rowNumber": int64(1), "row": map[string]any{"amount": "12.5", "email": "alice@example.com", "subject": "Invoice, December"}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
		if file := b.read(t, "invoices.csv"); file != "amount,email,subject,_keep_id\n12.5,alice@example.com,\"Invoice, December\","+tag("k1")+"\n" {
			t.Fatalf("file:\n%s", file)
		}
	})

	t.Run("It appends values by position to an existing sheet, adding the key column once", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write(t, "a.csv", "email,subject\nold@example.com\n")
		got := b.mustDo(t, "appendRow", "k1", with(sheet("a.csv"), "values", []any{"alice@example.com", "Invoice December"}))
		if got["rowNumber"] != int64(2) {
			t.Fatalf("got %v", got)
		}
		b.mustDo(t, "appendRow", "k2", with(sheet("a.csv"), "values", []any{"bob@example.com"}))
		want := "email,subject,_keep_id\nold@example.com,,\nalice@example.com,Invoice December," + tag("k1") + "\nbob@example.com,," + tag("k2") + "\n"
		if file := b.read(t, "a.csv"); file != want {
			t.Fatalf("file:\n%s\nwant:\n%s", file, want)
		}
		rows := b.mustDo(t, "rows", "", sheet("a.csv"))
		if !reflect.DeepEqual(rows["header"], []any{"email", "subject"}) || rows["count"] != int64(3) {
			t.Fatalf("rows %v", rows)
		}
	})

	t.Run("Running the same mutation twice adds one row", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		p := with(sheet("a.csv"), "row", map[string]any{"x": "1"})
		first := b.mustDo(t, "appendRow", "k1", p)
		second := b.mustDo(t, "appendRow", "k1", p)
		if !reflect.DeepEqual(first, second) {
			t.Fatalf("%v then %v", first, second)
		}
		if rows := b.mustDo(t, "rows", "", sheet("a.csv")); rows["count"] != int64(1) {
			t.Fatalf("rows %v", rows)
		}
	})

	t.Run("A header param names a new sheet's columns and must match an existing one", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		p := with(sheet("a.csv"), "header", []any{"z", "a"}, "values", []any{"1", "2"})
		b.mustDo(t, "appendRow", "k1", p)
		b.mustDo(t, "appendRow", "k2", p)
		if file := b.read(t, "a.csv"); !strings.HasPrefix(file, "z,a,_keep_id\n") {
			t.Fatalf("file:\n%s", file)
		}
		_, err := b.do(t, "appendRow", "k3", with(p, "header", []any{"a", "z"}))
		wantClass(t, err, connectors.Logic, "already has the header")
	})

	t.Run("A new sheet of a book creates the book", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.mustDo(t, "appendRow", "k1", with(sheet("book"), "sheet", "March", "row", map[string]any{"x": "1"}))
		if file := b.read(t, "book/March.csv"); file != "x,_keep_id\n1,"+tag("k1")+"\n" {
			t.Fatalf("file:\n%s", file)
		}
	})

	t.Run("It keeps the file's BOM, CRLF line ends, mode and untouched fields", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write(t, "a.csv", "\xef\xbb\xbfx,y\r\n\"multi\r\nline\",\"a \"\"q\"\"\",extra\r\n")
		if err := os.Chmod(filepath.Join(b.root, "a.csv"), 0o600); err != nil {
			t.Fatal(err)
		}
		b.mustDo(t, "appendRow", "k1", with(sheet("a.csv"), "values", []any{"1", "2"}))
		want := "\xef\xbb\xbfx,y,_keep_id\r\n\"multi\r\nline\",\"a \"\"q\"\"\",,extra\r\n1,2," + tag("k1") + "\r\n"
		if file := b.read(t, "a.csv"); file != want {
			t.Fatalf("file:\n%q\nwant:\n%q", file, want)
		}
		fi, err := os.Stat(filepath.Join(b.root, "a.csv"))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("mode %v, %v", fi.Mode(), err)
		}
	})

	t.Run("Without an idempotency key no hidden column is added", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.mustDo(t, "appendRow", "", with(sheet("a.csv"), "row", map[string]any{"x": true, "y": nil}))
		if file := b.read(t, "a.csv"); file != "x,y\ntrue,\n" {
			t.Fatalf("file:\n%s", file)
		}
	})

	t.Run("Concurrent appends from this host all land", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := b.do(t, "appendRow", fmt.Sprint("k", i), with(sheet("a.csv"), "row", map[string]any{"n": float64(i)})); err != nil {
					t.Error(err)
				}
			}()
		}
		kit.WaitGroup(t, &wg, kit.Timeout)
		if rows := b.mustDo(t, "rows", "", sheet("a.csv")); rows["count"] != int64(20) {
			t.Fatalf("rows %v", rows)
		}
	})

	t.Run("It leaves no temporary files behind", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.mustDo(t, "appendRow", "k1", with(sheet("a.csv"), "row", map[string]any{"x": "1"}))
		_, _ = b.do(t, "appendRow", "k2", with(sheet("a.csv"), "row", map[string]any{"nope": "1"}))
		entries, err := os.ReadDir(b.root)
		if err != nil || len(entries) != 1 {
			t.Fatalf("entries %v, %v", entries, err)
		}
	})

	t.Run("Bad params are logic errors and change nothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write(t, "a.csv", "x,y\n")
		small, err := New(Config{Roots: []string{b.root}, MaxFileSize: 20})
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name   string
			c      *Connector
			params map[string]any
			says   string
		}{
			{"neither values nor row", b.c, sheet("a.csv"), "either values"},
			{"both values and row", b.c, with(sheet("a.csv"), "values", []any{"1"}, "row", map[string]any{"x": "1"}), "either values"},
			{"more values than columns", b.c, with(sheet("a.csv"), "values", []any{"1", "2", "3"}), "3 values for 2 columns (x, y)"},
			{"an unknown column", b.c, with(sheet("a.csv"), "row", map[string]any{"z": "1"}), `no column "z" (columns: x, y)`},
			{"the hidden column by name", b.c, with(sheet("a.csv"), "row", map[string]any{"_keep_id": "1"}), `no column "_keep_id"`},
			{"an object as a cell", b.c, with(sheet("a.csv"), "values", []any{map[string]any{}}), "values[0]: a cell holds"},
			{"values that aren't a list", b.c, with(sheet("a.csv"), "values", "1,2"), "must be a list"},
			{"a new sheet from values alone", b.c, with(sheet("new.csv"), "values", []any{"1"}), "no header yet"},
			{"a new header with the hidden column", b.c, with(sheet("new.csv"), "header", []any{"_keep_id"}, "values", []any{"1"}), "reserves"},
			{"a new header naming a column twice", b.c, with(sheet("new.csv"), "header", []any{"a", "a"}, "values", []any{"1"}), "twice"},
			{"a row that would grow the file past the limit", small, with(sheet("a.csv"), "values", []any{strings.Repeat("x", 30)}), "past the limit"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				_, err := (&bundle{c: tt.c}).do(t, "appendRow", "k", tt.params)
				wantClass(t, err, connectors.Logic, tt.says)
			})
		}
		t.Cleanup(func() {
			if file := b.read(t, "a.csv"); file != "x,y\n" {
				t.Errorf("file changed:\n%s", file)
			}
			if _, err := os.Stat(filepath.Join(b.root, "new.csv")); !os.IsNotExist(err) {
				t.Errorf("new.csv: %v", err)
			}
		})
	})

	t.Run("A path outside the roots is a permission error and writes nothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		outside := t.TempDir()
		_, err := b.do(t, "appendRow", "k", with(sheet(filepath.Join(outside, "a.csv")), "row", map[string]any{"x": "1"}))
		wantClass(t, err, connectors.Permission, "outside")
		if err := os.Symlink(outside, filepath.Join(b.root, "out")); err != nil {
			t.Fatal(err)
		}
		_, err = b.do(t, "appendRow", "k", with(sheet("out/a.csv"), "row", map[string]any{"x": "1"}))
		wantClass(t, err, connectors.Permission, "symbolic link")
		if entries, _ := os.ReadDir(outside); len(entries) != 0 {
			t.Fatalf("wrote %v", entries)
		}
	})
}
