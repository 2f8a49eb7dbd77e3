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
	// Uncallable says why keep cannot call the tool (one that runs only
	// as a task); its description starts with it too.
	Uncallable string `json:"uncallable,omitempty"`
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
			args = append(args, a.Name+opt+": "+a.TS())
		}
		v := MCPToolView{Name: t.Name, Kind: string(m.Kind), Capability: mc.Name() + "." + t.Name, Description: t.Description,
			Args: "{ " + strings.Join(args, ", ") + " }", InputSchema: t.InputSchema}
		if t.Annotations != nil {
			v.ReadOnlyHint, v.IdempotentHint = t.Annotations.ReadOnlyHint, t.Annotations.IdempotentHint
		}
		if m.Uncallable != "" {
			v.Uncallable = m.Uncallable
			v.Description = "CANNOT BE CALLED: " + m.Uncallable + ". " + v.Description
		}
		out = append(out, v)
	}
	return out, mc.UnknownReads(list), nil
}

// AwaitMCPServers makes known the tool lists of the configured MCP servers
// that name picks ("" or "mcp": all; "mcp.NAME": that one), for the
// commands that show tools (`keep help api`, keep.d.ts), waiting at most
// each server's timeout. A server that cannot be listed shows no tools,
// and keep.log says why.
func AwaitMCPServers(ctx context.Context, reg *connectors.Registry, name string) {
	for _, mc := range mcpConnectorsOf(reg) {
		if name == "" || name == "mcp" || name == mc.Name() {
			_ = mc.AwaitTools(ctx)
		}
	}
}

// MCPHelp is `keep help api mcp` (or mcp.NAME) when no such server is
// configured: how to add one. "" when name is not about MCP, or the server
// is configured.
func MCPHelp(reg *connectors.Registry, name string) string {
	server, isMCP := strings.CutPrefix(name, "mcp.")
	if name != "mcp" && !isMCP {
		return ""
	}
	var names []string
	for _, mc := range mcpConnectorsOf(reg) {
		if mc.Name() == name {
			return ""
		}
		names = append(names, mc.Server())
	}
	if name == "mcp" && len(names) > 0 {
		return ""
	}
	if !isMCP || server == "" {
		server = "memory"
	}
	var b strings.Builder
	if len(names) == 0 {
		b.WriteString("No MCP server is configured.\n\n")
	} else {
		fmt.Fprintf(&b, "No MCP server %q is configured (configured: %s).\n\n", server, strings.Join(names, ", "))
	}
	fmt.Fprintf(&b, `An MCP server's tools become ctx.mcp.NAME.TOOL(args) once the config
(config.toml, or the file --config names) has one:

  [mcp.%[1]s]   # a server keep starts over stdio
  command = "npx"
  args = ["-y", "@modelcontextprotocol/server-memory@2026.8.31"]
  reads = ["read_graph", "search_nodes", "open_nodes"]   # tools that only read

  [mcp.github]   # or one reached over streamable HTTP
  url = "https://mcp.example.com/mcp"
  account = "github"   # keep auth login github

A tool is a read only when reads lists it (or trust_hints = true and the
server marks it readOnlyHint); every other tool is a mutation. Then:

  keep mcp tools %[1]s      # starts it, lists and caches its tools
  keep help api mcp.%[1]s   # their arguments, as scripts call them
`, server)
	return b.String()
}
