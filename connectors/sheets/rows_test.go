package sheets

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"keep/connectors"
)

func TestRows(t *testing.T) {
	t.Parallel()

	t.Run("It reads the header and rows, quotes, commas and newlines included", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write(t, "invoices.csv", "email,subject\nalice@example.com,\"Invoice, December\"\nbob@example.com,\"two\nlines \"\"quoted\"\"\"\n")
		got := b.mustDo(t, "rows", "", sheet("invoices.csv"))
		want := map[string]any{
			"header": []any{"email", "subject"},
			"rows": []any{
				map[string]any{"email": "alice@example.com", "subject": "Invoice, December"},
				map[string]any{"email": "bob@example.com", "subject": "two\nlines \"quoted\""},
			},
			"count": int64(2),
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %#v\nwant %#v", got, want)
		}
	})

	t.Run("It reads one sheet of a directory", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write(t, "book/March.csv", "a\n1\n")
		b.write(t, "book/April.csv", "a\n2\n")
		got := b.mustDo(t, "rows", "", with(sheet("book"), "sheet", "March"))
		if rows := got["rows"].([]any); len(rows) != 1 || rows[0].(map[string]any)["a"] != "1" {
			t.Fatalf("got %v", got)
		}
	})

	t.Run("It never returns the hidden key column, wherever it is", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write(t, "a.csv", "x,_keep_id,y\n1,k1,2\n")
		got := b.mustDo(t, "rows", "", sheet("a.csv"))
		if !reflect.DeepEqual(got["header"], []any{"x", "y"}) ||
			!reflect.DeepEqual(got["rows"], []any{map[string]any{"x": "1", "y": "2"}}) {
			t.Fatalf("got %v", got)
		}
	})

	t.Run("Short rows read as empty cells and a BOM is not part of the first column", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write(t, "a.csv", "\xef\xbb\xbfx,y\r\n1\r\n")
		got := b.mustDo(t, "rows", "", sheet("a.csv"))
		if !reflect.DeepEqual(got["rows"], []any{map[string]any{"x": "1", "y": ""}}) {
			t.Fatalf("got %v", got)
		}
	})

	t.Run("An empty file has no header and no rows", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write(t, "a.csv", "")
		got := b.mustDo(t, "rows", "", sheet("a.csv"))
		if got["count"] != int64(0) || len(got["header"].([]any)) != 0 {
			t.Fatalf("got %v", got)
		}
	})

	t.Run("An absolute path inside the root works like a relative one", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write(t, "a.csv", "x\n1\n")
		got := b.mustDo(t, "rows", "", sheet(filepath.Join(b.root, "a.csv")))
		if got["count"] != int64(1) {
			t.Fatalf("got %v", got)
		}
	})

	t.Run("A second root is reachable by absolute path", func(t *testing.T) {
		t.Parallel()
		first, second := t.TempDir(), t.TempDir()
		if err := os.WriteFile(filepath.Join(second, "b.csv"), []byte("x\n1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := New(Config{Roots: []string{first, second}})
		if err != nil {
			t.Fatal(err)
		}
		b := &bundle{c: c, root: first}
		if got := b.mustDo(t, "rows", "", sheet(filepath.Join(second, "b.csv"))); got["count"] != int64(1) {
			t.Fatalf("got %v", got)
		}
	})

	t.Run("A root that is itself a symbolic link works", func(t *testing.T) {
		t.Parallel()
		real := t.TempDir()
		link := filepath.Join(t.TempDir(), "Keep")
		if err := os.Symlink(real, link); err != nil {
			t.Fatal(err)
		}
		c, err := New(Config{Roots: []string{link}})
		if err != nil {
			t.Fatal(err)
		}
		b := &bundle{c: c, root: link}
		b.mustDo(t, "appendRow", "k1", with(sheet("a.csv"), "row", map[string]any{"x": "1"}))
		if got := b.mustDo(t, "rows", "", sheet("a.csv")); got["count"] != int64(1) {
			t.Fatalf("got %v", got)
		}
		if _, err := os.Stat(filepath.Join(real, "a.csv")); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("Failures are classified", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write(t, "bad.csv", "a,b\n\"unterminated\n")
		b.write(t, "dup.csv", "a,a\n1,2\n")
		b.write(t, "book/March.csv", "a\n")
		b.write(t, "big.csv", "a\n"+strings.Repeat("x", 100)+"\n")
		outside := t.TempDir()
		if err := os.WriteFile(filepath.Join(outside, "o.csv"), []byte("a\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(outside, "o.csv"), filepath.Join(b.root, "link.csv")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(b.root, "linkdir")); err != nil {
			t.Fatal(err)
		}
		small, err := New(Config{Roots: []string{b.root}, MaxFileSize: 50})
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name   string
			c      *Connector
			params map[string]any
			class  connectors.Class
			says   string
		}{
			{"a missing file", b.c, sheet("nope.csv"), connectors.Logic, "no such sheet: nope.csv"},
			{"a missing sheet of a book", b.c, with(sheet("book"), "sheet", "May"), connectors.Logic, "no such sheet: book/May"},
			{"no spreadsheet", b.c, map[string]any{}, connectors.Logic, "spreadsheet is required"},
			{"a spreadsheet that isn't a string", b.c, map[string]any{"spreadsheet": 3.0}, connectors.Logic, "must be a string"},
			{"a sheet name with a slash", b.c, with(sheet("book"), "sheet", "../x"), connectors.Logic, "not a sheet name"},
			{"a directory without a sheet", b.c, sheet("book"), connectors.Logic, "name one with sheet"},
			{"a file with a sheet", b.c, with(sheet("bad.csv"), "sheet", "x"), connectors.Logic, "holds one sheet"},
			{"malformed CSV", b.c, sheet("bad.csv"), connectors.Logic, "malformed CSV"},
			{"a header naming a column twice", b.c, sheet("dup.csv"), connectors.Logic, "appears twice"},
			{"a file past MaxFileSize", small, sheet("big.csv"), connectors.Logic, "too big"},
			{"a path above the root", b.c, sheet("../x.csv"), connectors.Permission, "outside the sheets roots"},
			{"an absolute path elsewhere", b.c, sheet("/etc/passwd"), connectors.Permission, "outside the sheets roots"},
			{"a symlinked file leading out", b.c, sheet("link.csv"), connectors.Permission, "symbolic link"},
			{"a symlinked directory leading out", b.c, sheet("linkdir/o.csv"), connectors.Permission, "symbolic link"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				_, err := (&bundle{c: tt.c, root: b.root}).do(t, "rows", "", tt.params)
				wantClass(t, err, tt.class, tt.says)
			})
		}
	})
}
