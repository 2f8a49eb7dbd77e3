package mcp

import (
	"strings"
	"testing"
	"unicode/utf8"

	"keep/connectors"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
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

// A tool's description is cut to its first sentence, at most 200 bytes,
// and an error result to 500: never in the middle of a character. Before,
// a description in a script of three-byte characters was cut into
// invalid UTF-8 in the method's doc (keep.d.ts, keep help api).
func TestADescriptionIsCutBetweenCharacters(t *testing.T) {
	c, err := New(Config{Name: "t", Command: "x"})
	if err != nil {
		t.Fatal(err)
	}
	m := c.Method(&sdk.Tool{Name: "euro", Description: strings.Repeat("€", 1000), InputSchema: map[string]any{"type": "object"}})
	if !utf8.ValidString(m.Doc) || !strings.HasPrefix(m.Doc, "€€") {
		t.Fatalf("doc %q", m.Doc)
	}
	if s := clip(strings.Repeat("€", 1000), 500); !utf8.ValidString(s) {
		t.Fatalf("clipped error %q", s)
	}
}
