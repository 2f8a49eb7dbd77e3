package sheets

import (
	"encoding/json"
	"sort"
	"strings"
)

// What people see of a mutation: the approval prompt, the ledger, and the
// manual check for an outcome nobody could determine.

// maxShown caps one cell in a preview, so a long note doesn't push the rest
// of the row off the line; approvals also show the full params.
const maxShown = 60

func previewAppend(p map[string]any) string {
	return "appendRow " + sheetLabel(p) + ": " + rowText(p)
}

func checkAppend(p map[string]any) string {
	return "open " + sheetLabel(p) + " and look for the row " + rowText(p)
}

func previewUpdate(p map[string]any) string {
	return "updateRow " + sheetLabel(p) + " where " + whereText(p) + ": set " + show(p["set"])
}

func checkUpdate(p map[string]any) string {
	return "open " + sheetLabel(p) + " and look at the row where " + whereText(p) + ": it should have " + show(p["set"])
}

// sheetLabel names the sheet as a person would: "invoices.csv", "book/March".
func sheetLabel(p map[string]any) string {
	s, _ := p["spreadsheet"].(string)
	if sheet, _ := p["sheet"].(string); sheet != "" {
		return s + "/" + strings.TrimSuffix(sheet, ".csv")
	}
	return s
}

func rowText(p map[string]any) string {
	if v, ok := p["values"]; ok && v != nil {
		return show(v)
	}
	return show(p["row"])
}

func whereText(p map[string]any) string {
	key, _ := p["key"].(string)
	return key + " = " + show(p["value"])
}

// show renders a param as JSON on one line, ", " between items and object
// keys sorted, each string cut at maxShown runes.
func show(v any) string {
	switch x := v.(type) {
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = show(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []string:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = show(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = show(k) + ": " + show(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case string:
		if r := []rune(x); len(r) > maxShown {
			v = string(r[:maxShown]) + "…"
		}
	}
	// Not json.Marshal: it would write & and < as \u0026 and \u003c.
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "?"
	}
	return strings.TrimSuffix(b.String(), "\n")
}
