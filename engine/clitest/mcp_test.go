package clitest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"keep/connectors/mcp/mcptest"
	"keep/engine"
)

// mcpEnv is an env whose config has [mcp.memory], the npm reference server.
func mcpEnv(t *testing.T, mode string) *env {
	e := newEnv(t, mode)
	e.writeConfig(fmt.Sprintf(`[policy]
default_mutation_mode = %q

[connectors.files]
roots = [%q]

[mcp.memory]
command = %q
env = { MEMORY_FILE_PATH = %q }
reads = ["read_graph", "search_nodes", "open_nodes", "serch"]
`, mode, e.root, mcptest.Bin(t, "mcp-server-memory"), filepath.Join(e.dir, "memory.jsonl")))
	return e
}

const mcpWorkflow = `
export default Keep.workflow({
  name: "mem",
  topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => {
    const r = await ctx.mcp.memory.TOOL({ query: "x" });
  } } },
});
`

func TestMCPCommands(t *testing.T) {
	t.Parallel()
	e := mcpEnv(t, "ask")

	t.Run("mcp tools lists the tools with their kind under the config and warns of unknown reads", func(t *testing.T) {
		tools := jsonOf[[]engine.MCPToolView](e, "mcp", "tools", "memory")
		kinds := map[string]string{}
		for _, v := range tools {
			kinds[v.Name] = v.Kind + " " + v.Capability
		}
		if kinds["search_nodes"] != "read mcp.memory.search_nodes" || kinds["create_entities"] != "mutate mcp.memory.create_entities" {
			t.Fatalf("tools = %v", kinds)
		}
		r := e.ok("mcp", "tools", "memory")
		if !strings.Contains(r.stdout, "create_entities") || !strings.Contains(r.stderr, `names "serch"`) {
			t.Fatalf("%s", r)
		}
		if r := e.expect(1, "mcp", "tools", "nope"); !strings.Contains(r.stderr, "configured: memory") {
			t.Fatalf("%s", r)
		}
		e.expect(2, "mcp", "frobnicate")
	})

	t.Run("validate checks the tool names a script calls", func(t *testing.T) {
		bad := e.file(e.dir, "bad.js", strings.Replace(mcpWorkflow, "TOOL", "serch_nodes", 1))
		r := e.expect(1, "validate", bad)
		if !strings.Contains(r.stderr, `bad.js:6:21:`) || !strings.Contains(r.stderr, `connector "mcp.memory" has no method "serch_nodes"`) {
			t.Fatalf("%s", r)
		}
		e.ok("validate", e.file(e.dir, "good.js", strings.Replace(mcpWorkflow, "TOOL", "search_nodes", 1)))
	})

	t.Run("help api mcp and keep.d.ts carry the servers' tools, typed from their schemas", func(t *testing.T) {
		r := e.ok("help", "api", "mcp")
		if !strings.Contains(r.stdout, "ctx.mcp.memory.create_entities({ entities: Array<{ entityType: string, name: string, observations: string[] }>") {
			t.Fatalf("%s", r)
		}
		e.ok("init", filepath.Join(e.dir, "proj"))
		dts, err := os.ReadFile(filepath.Join(e.dir, "proj", "workflows", "keep.d.ts"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"interface McpMemoryReads", "search_nodes(args: {", "mcp: {\n      memory: McpMemoryMutations;"} {
			if !strings.Contains(string(dts), want) {
				t.Fatalf("keep.d.ts lacks %q", want)
			}
		}
	})
}
