package sandbox

import (
	"strings"
	"testing"
	"time"
)

// issue 42: `keep validate` checks MCP tool calls as it checks any
// connector's: the phase rules (saying how a tool becomes a read), the
// server's tool list, and literal arguments against the input schema, with
// file:line:col. A tool name that is no identifier is written as a string
// key, a literal name like any other.
func TestValidateMCPCalls(t *testing.T) {
	t.Parallel()
	methods := append([]MethodSpec{
		{Connector: "mcp.memory", Method: "search_nodes", Kind: KindRead, Args: []ArgSpec{{Name: "query", Type: "string", Required: true}}},
		{Connector: "mcp.memory", Method: "create_entities", Kind: KindMutate, Args: []ArgSpec{
			{Name: "entities", Type: "Array<{ name: string }>", Required: true}, {Name: "reconcile", Type: "{ tool: string }"}}},
		{Connector: "mcp.everything", Method: "get-env", Kind: KindRead},
	}, testMethods...)
	opts := LoadOptions{Methods: methods, MinInterval: time.Minute}
	cases := []struct {
		name string
		h    handlers
		want string // "" : loads
	}{
		{"a mutation tool in prepare says how to make it a read", handlers{prepare: `await ctx.mcp.memory.create_entities({ entities: [] }); return { reservations: [], data: {} };`},
			`wf.js:18:7: ctx.mcp.memory.create_entities is a mutation and is called in prepare of consumer "c": mutations only happen in mutate. ` +
				`keep treats a tool as a mutation unless [mcp.memory] lists it in reads: if it only reads, add reads = ["create_entities"] there (or trust_hints = true`},
		{"a read tool in mutate", handlers{mutate: `await ctx.mcp.memory.search_nodes({ query: "x" });`},
			`wf.js:21:7: ctx.mcp.memory.search_nodes is a read and is called in mutate of consumer "c"`},
		{"a tool the server does not have", handlers{producer: `await ctx.mcp.memory["search-node"]({ query: "x" });`},
			`wf.js:9:7: ctx.mcp.memory["search-node"]: mcp.memory has no tool "search-node" (it has: create_entities, search_nodes)`},
		{"a server keep knows no tools of", handlers{producer: `await ctx.mcp["git-hub"].list_issues({});`},
			`ctx.mcp["git-hub"].list_issues: keep knows no tools of mcp.git-hub: configure [mcp.git-hub], or list its tools with: keep mcp tools git-hub`},
		{"a tool written with dots that the server does not have is reported once", handlers{producer: `await ctx.mcp.memory.search_node({ query: "x" });`},
			`wf.js:9:7: ctx.mcp.memory.search_node: connector "mcp.memory" has no method "search_node"`},
		{"a literal of the wrong type", handlers{producer: `await ctx.mcp.memory.search_nodes({ query: 5 });`},
			`wf.js:9:44: ctx.mcp.memory.search_nodes: query 5 is not a string`},
		{"a required argument missing", handlers{producer: `await ctx.mcp.memory.search_nodes({});`},
			`wf.js:9:7: ctx.mcp.memory.search_nodes: the tool's input schema requires query`},
		{"no argument at all", handlers{producer: `await ctx.mcp.memory.search_nodes();`},
			`the tool's input schema requires query`},
		{"a bracketed tool name is checked too", handlers{mutate: `await ctx.mcp.everything["get-env"]({});`},
			`wf.js:21:7: ctx.mcp.everything["get-env"] is a read and is called in mutate of consumer "c"`},
		{"a spread may hold what is required", handlers{producer: `const a = { query: "x" }; await ctx.mcp.memory.search_nodes({ ...a });`}, ""},
		{"what is allowed loads", handlers{producer: `await ctx.mcp.memory.search_nodes({ query: "x" }); await ctx.mcp.everything["get-env"]({});`,
			mutate: `await ctx.mcp.memory.create_entities({ entities: [{ name: "a" }], reconcile: { tool: "search_nodes" } });`}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Load("wf.js", []byte(tc.h.source()), opts)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("load: %v\n%s", err, tc.h.source())
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("load: err = %v\nwant %s\n%s", err, tc.want, tc.h.source())
			}
		})
	}
}
