package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"keep/connectors"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tools lists the server's tools live (starting it if need be) and caches
// the list, for `keep mcp tools`, `keep init` and the reference.
func (c *Connector) Tools(ctx context.Context) ([]*sdk.Tool, error) {
	s, err := c.session(ctx)
	if err != nil {
		return nil, err
	}
	return c.listOn(ctx, s)
}

// list returns the tool list: held, else cached, else listed live (a call
// needs the server anyway).
func (c *Connector) list(ctx context.Context) ([]*sdk.Tool, error) {
	if tools, ok := c.held(); ok {
		return tools, nil
	}
	return c.Tools(ctx)
}

// tool finds one tool by name.
func (c *Connector) tool(ctx context.Context, name string) (*sdk.Tool, error) {
	tools, err := c.list(ctx)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, t := range tools {
		if t.Name == name {
			return t, nil
		}
		names = append(names, t.Name)
	}
	return nil, connectors.Errorf(connectors.Logic, "mcp.%s has no tool %q (it has: %s)", c.cfg.Name, name, strings.Join(names, ", "))
}

// Result is the TypeScript type of what every tool call resolves to.
const Result = "{ text: string, json?: any, structured?: any, content: any[] }"

// Methods are the server's tools, as held or cached: nothing that only
// reads the catalog (approve, attention, workflows, a deploy of another
// workflow) waits on a server. Without a list the server is listed in the
// background and offers no methods until then; keep.log says why it cannot
// be listed, and so does a workflow that uses it.
func (c *Connector) Methods() []connectors.Method {
	tools, ok := c.held()
	if !ok {
		c.listInBackground()
		return nil
	}
	out := make([]connectors.Method, 0, len(tools))
	for _, t := range tools {
		out = append(out, c.Method(t))
	}
	return out
}

// Method is a tool as a connector method: its kind under the config, its
// arguments typed from the tool's input schema.
func (c *Connector) Method(t *sdk.Tool) connectors.Method {
	m := connectors.Method{Name: t.Name, Kind: connectors.Read, Doc: firstSentence(t.Description), Result: Result,
		Args: schemaArgs(t.InputSchema), OpenArgs: schemaOpen(t.InputSchema), Uncallable: uncallable(t)}
	if m.Uncallable != "" {
		m.Doc = "Cannot be called: " + m.Uncallable + ". " + m.Doc
	}
	call := "ctx.mcp" + Member(c.cfg.Name) + Member(t.Name)
	if c.isRead(t) {
		m.Example = "const r = await " + call + "({ ... })"
		return m
	}
	m.Kind = connectors.Mutate
	m.Example = "await " + call + "({ ..., reconcile: { tool: \"a read tool\", args: { ... }, match: { ... } } })"
	m.Check = func(map[string]any) string {
		return fmt.Sprintf("look in %s for the effect of %s", c.cfg.Name, t.Name)
	}
	switch {
	case c.idempotent(t):
		m.Reconcile = "calls the tool again (the server marks it idempotent and the config trusts its hints)"
	default:
		m.Reconcile = "calls the read named in reconcile: { tool, args, match }: a structured result holding match means it happened, an empty one that it did not; prose or anything else asks you, as does a call without reconcile"
	}
	m.Args = append(m.Args, connectors.Arg{Name: "reconcile", Fields: reconcileFields,
		Doc: "keep's, not the tool's: a read of this server, and what its structured result holds when the call happened"})
	return m
}

func firstSentence(s string) string {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\n", " "))
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return clip(s, 200)
}

// schemaArgs turns a tool's input schema (an object) into the fields of
// its argument.
func schemaArgs(schema any) []connectors.Arg {
	m := asMap(schema)
	props := asMap(m["properties"])
	req := map[string]bool{}
	if r, ok := m["required"].([]any); ok {
		for _, x := range r {
			if s, ok := x.(string); ok {
				req[s] = true
			}
		}
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	args := make([]connectors.Arg, 0, len(names))
	for _, n := range names {
		p := asMap(props[n])
		doc, _ := p["description"].(string)
		args = append(args, connectors.Arg{Name: n, Type: TSType(p, 0), Required: req[n], Doc: firstSentence(doc)})
	}
	return args
}

// schemaOpen says whether an input schema lets a call hold properties it
// does not name: it names none, or it does not say additionalProperties:
// false (JSON Schema allows what it does not forbid). keep then passes
// such a field on to the server rather than refusing it.
func schemaOpen(schema any) bool {
	m := asMap(schema)
	if len(asMap(m["properties"])) == 0 {
		return true
	}
	allowed, isBool := m["additionalProperties"].(bool)
	return !isBool || allowed
}

// asMap views a schema value as a JSON object, whatever Go type holds it.
func asMap(v any) map[string]any {
	switch x := v.(type) {
	case map[string]any:
		return x
	case nil:
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// TSType is the TypeScript type of a JSON Schema, as far as it goes; what
// it cannot say is any.
func TSType(schema map[string]any, depth int) string {
	if schema == nil || depth > 6 {
		return "any"
	}
	if e, ok := schema["enum"].([]any); ok && len(e) > 0 {
		var parts []string
		for _, x := range e {
			b, _ := json.Marshal(x)
			parts = append(parts, string(b))
		}
		return strings.Join(parts, " | ")
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := schema[k].([]any); ok && len(alts) > 0 {
			var parts []string
			for _, a := range alts {
				parts = append(parts, TSType(asMap(a), depth+1))
			}
			return strings.Join(parts, " | ")
		}
	}
	switch t := schema["type"].(type) {
	case string:
		return tsOf(t, schema, depth)
	case []any:
		var parts []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				parts = append(parts, tsOf(s, schema, depth))
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, " | ")
		}
	}
	if schema["properties"] != nil {
		return tsOf("object", schema, depth)
	}
	return "any"
}

func tsOf(t string, schema map[string]any, depth int) string {
	switch t {
	case "string":
		return "string"
	case "number", "integer":
		return "number"
	case "boolean":
		return "boolean"
	case "null":
		return "null"
	case "array":
		it := TSType(asMap(schema["items"]), depth+1)
		if strings.Contains(it, " ") {
			return "Array<" + it + ">"
		}
		return it + "[]"
	case "object":
		args := schemaArgs(schema)
		if len(args) == 0 {
			return "Record<string, any>"
		}
		var b strings.Builder
		b.WriteString("{ ")
		for i, a := range args {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(a.Name)
			if !a.Required {
				b.WriteString("?")
			}
			b.WriteString(": ")
			b.WriteString(a.Type)
		}
		b.WriteString(" }")
		return b.String()
	}
	return "any"
}

// UnknownReads are the configured reads the server has no tool for: a typo
// there would make a read tool a mutation.
func (c *Connector) UnknownReads(tools []*sdk.Tool) []string {
	have := map[string]bool{}
	for _, t := range tools {
		have[t.Name] = true
	}
	var out []string
	for _, r := range c.cfg.Reads {
		if !have[r] {
			out = append(out, r)
		}
	}
	return out
}

// Member is how a script names a server or a tool: .name, or ["get-env"]
// for a name that is no JavaScript identifier.
func Member(name string) string {
	if jsIdent.MatchString(name) {
		return "." + name
	}
	b, _ := json.Marshal(name)
	return "[" + string(b) + "]"
}

var jsIdent = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)
