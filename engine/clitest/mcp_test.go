package clitest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"keep/connectors/mcp/mcptest"
	"keep/engine"
	"keep/engine/authoring"
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

// inspector runs @modelcontextprotocol/inspector's CLI against `keep mcp
// serve` in this env and decodes its JSON answer.
func (e *env) inspector(t *testing.T, args ...string) map[string]any {
	t.Helper()
	bin := mcptest.Bin(t, "mcp-inspector")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// the inspector takes --config for itself, and its --tool-arg list
	// would swallow keep's flags: keep finds its database and config
	// through KEEP_DB and XDG_CONFIG_HOME instead
	cfg, err := os.ReadFile(e.config)
	if err != nil {
		t.Fatal(err)
	}
	e.file(filepath.Join(e.dir, "xdg-config"), "keep/config.toml", string(cfg))
	full := append([]string{"--cli", keepBin, "mcp", "serve"}, args...)
	cmd := exec.CommandContext(ctx, bin, full...)
	cmd.Env, cmd.Dir = append(e.environ(), "KEEP_DB="+e.db), e.dir
	r := runCmd(t, cmd)
	var v map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &v) != nil {
		t.Fatalf("inspector %v: %s", args, r)
	}
	return v
}

// toolText is the text of a tools/call answer.
func toolText(v map[string]any) string {
	var parts []string
	cs, _ := v["content"].([]any)
	for _, c := range cs {
		if m, ok := c.(map[string]any); ok {
			s, _ := m["text"].(string)
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}

func TestMCPServeWithTheInspector(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "ask")
	e.deployLines()

	list := e.inspector(t, "--method", "tools/list")
	var names []string
	for _, tl := range list["tools"].([]any) {
		names = append(names, tl.(map[string]any)["name"].(string))
	}
	slices.Sort(names)
	want := slices.Clone(authoring.MCPServeTools)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}

	v := e.inspector(t, "--method", "tools/call", "--tool-name", "validate", "--tool-arg", "file_name=broken.js", "--tool-arg", "source="+brokenWorkflow)
	if s := toolText(v); !strings.Contains(s, `"ok": false`) || !strings.Contains(s, "nope") {
		t.Fatalf("validate = %v", v)
	}

	t.Run("through the daemon's socket when one runs", func(t *testing.T) {
		e.ok("drain") // the lines workflow has run; the daemon holds the database next
		d := startDaemon(t, e)
		defer d.kill(t)
		awaitSocket(t, e, d, time.Minute)
		v := e.inspector(t, "--method", "tools/call", "--tool-name", "inputs", "--tool-arg", "workflow=lines")
		if s := toolText(v); !strings.Contains(s, "a.txt") {
			t.Fatalf("inputs = %v", v)
		}
		v = e.inspector(t, "--method", "tools/call", "--tool-name", "workflows")
		if s := toolText(v); !strings.Contains(s, `"lines"`) {
			t.Fatalf("workflows = %v", v)
		}
	})
}
