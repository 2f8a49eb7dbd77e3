package sheets

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestDescribe(t *testing.T) {
	t.Parallel()
	b := setup(t)
	methods := map[string]func(string) func(map[string]any) string{}
	for _, m := range b.c.Methods() {
		methods[m.Name] = func(what string) func(map[string]any) string {
			switch what {
			case "scope":
				return m.Scope
			case "preview":
				return m.Preview
			}
			return m.Check
		}
	}
	appendP := with(sheet("invoices.csv"), "values", []any{"alice@example.com", "Invoice December"})
	updateP := with(sheet("book"), "sheet", "March", "key", "email", "value", "a@x", "set", map[string]any{"status": "paid", "amount": 12.0})
	tests := []struct {
		name   string
		method string
		what   string
		params map[string]any
		want   string
	}{
		{"An append preview shows the values", "appendRow", "preview", appendP, `appendRow invoices.csv: ["alice@example.com", "Invoice December"]`},
		{"An append preview shows a row with sorted columns", "appendRow", "preview", with(sheet("a.csv"), "row", map[string]any{"b": "<2>", "a": 1.0}), `appendRow a.csv: {"a": 1, "b": "<2>"}`},
		{"An append check says where to look", "appendRow", "check", appendP, `open invoices.csv and look for the row ["alice@example.com", "Invoice December"]`},
		{"An update preview names the sheet, the row and the change", "updateRow", "preview", updateP, `updateRow book/March where email = "a@x": set {"amount": 12, "status": "paid"}`},
		{"An update check says what the row should hold", "updateRow", "check", updateP, `open book/March and look at the row where email = "a@x": it should have {"amount": 12, "status": "paid"}`},
		{"A long cell is cut", "appendRow", "preview", with(sheet("a.csv"), "values", []any{strings.Repeat("é", 100)}), `appendRow a.csv: ["` + strings.Repeat("é", 60) + `…"]`},
		{"A newline stays on the line", "appendRow", "preview", with(sheet("a.csv"), "values", []any{"a\nb"}), `appendRow a.csv: ["a\nb"]`},
		{"The scope is the spreadsheet relative to its root", "appendRow", "scope", updateP, "book"},
		{"An absolute path inside the root scopes the same", "updateRow", "scope", sheet(filepath.Join(b.root, "dir", "a.csv")), "dir/a.csv"},
		{"A path outside the roots scopes as itself", "updateRow", "scope", sheet("/etc/../etc/x.csv"), "/etc/x.csv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := methods[tt.method](tt.what)(tt.params); got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
