package engine

import (
	"context"
	"fmt"
	"strings"

	"keep/connectors"
	"keep/connectors/mcp"
)

// MCPToolView is one tool of a configured MCP server (`keep mcp tools`).
type MCPToolView struct {
	Name        string `json:"name"`
	Kind        string `json:"kind"`       // read | mutate, under the config
	Capability  string `json:"capability"` // what grants and approvals name
	Description string `json:"description"`
	// Args is the argument object as TypeScript, from the input schema.
	Args           string `json:"args"`
	ReadOnlyHint   bool   `json:"read_only_hint"`
	IdempotentHint bool   `json:"idempotent_hint"`
	InputSchema    any    `json:"input_schema"`
}

// MCPTools lists a configured server's tools live (starting it if need be)
// and refreshes the cached list that validation, `keep help api` and
// keep.d.ts are built from. unknownReads are configured reads the server
// has no tool for.
func MCPTools(ctx context.Context, reg *connectors.Registry, server string) (tools []MCPToolView, unknownReads []string, err error) {
	c, ok := reg.Get("mcp." + server)
	mc, isMCP := c.(*mcp.Connector)
	if !ok || !isMCP {
		var names []string
		for _, n := range reg.Names() {
			if s, ok := strings.CutPrefix(n, "mcp."); ok {
				names = append(names, s)
			}
		}
		if len(names) == 0 {
			return nil, nil, fmt.Errorf("no MCP server %q: none is configured (add [mcp.%s] to the config)", server, server)
		}
		return nil, nil, fmt.Errorf("no MCP server %q (configured: %s)", server, strings.Join(names, ", "))
	}
	list, err := mc.Tools(ctx)
	if err != nil {
		return nil, nil, err
	}
	out := make([]MCPToolView, 0, len(list))
	for _, t := range list {
		m := mc.Method(t)
		var args []string
		for _, a := range m.Args {
			opt := "?"
			if a.Required {
				opt = ""
			}
			args = append(args, a.Name+opt+": "+a.Type)
		}
		v := MCPToolView{Name: t.Name, Kind: string(m.Kind), Capability: mc.Name() + "." + t.Name, Description: t.Description,
			Args: "{ " + strings.Join(args, ", ") + " }", InputSchema: t.InputSchema}
		if t.Annotations != nil {
			v.ReadOnlyHint, v.IdempotentHint = t.Annotations.ReadOnlyHint, t.Annotations.IdempotentHint
		}
		out = append(out, v)
	}
	return out, mc.UnknownReads(list), nil
}
