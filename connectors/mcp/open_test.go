package mcp

import (
	"testing"

	"keep/connectors"
)

// A tool's call is refused a field its input schema forbids, and only
// then: the host passes on what the schema does not say it refuses (no
// properties named, additionalProperties absent, true or a schema).
func TestSchemaSaysWhetherMoreFieldsPass(t *testing.T) {
	t.Parallel()
	props := map[string]any{"query": map[string]any{"type": "string"}}
	cases := []struct {
		name   string
		schema map[string]any
		open   bool
	}{
		{"no schema", nil, true},
		{"no properties", map[string]any{"type": "object"}, true},
		{"no properties, closed", map[string]any{"type": "object", "additionalProperties": false}, true},
		{"properties, nothing said", map[string]any{"type": "object", "properties": props}, true},
		{"properties, more allowed", map[string]any{"type": "object", "properties": props, "additionalProperties": true}, true},
		{"properties, more of a kind", map[string]any{"type": "object", "properties": props, "additionalProperties": map[string]any{"type": "string"}}, true},
		{"properties, closed", map[string]any{"type": "object", "properties": props, "additionalProperties": false}, false},
	}
	for _, tc := range cases {
		if got := schemaOpen(tc.schema); got != tc.open {
			t.Errorf("%s: open = %v, want %v", tc.name, got, tc.open)
		}
		m := connectors.Method{Name: "search", Args: schemaArgs(tc.schema), OpenArgs: schemaOpen(tc.schema)}
		err := connectors.Undeclared("mcp.memory", m, map[string]any{"query": "x", "qeury": "y"})
		if refused := err != nil; refused == tc.open {
			t.Errorf("%s: a field the schema does not name: %v", tc.name, err)
		}
	}
}
