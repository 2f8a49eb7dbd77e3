package clitest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"keep/connectors/mcp/mcptest"
)

// issue 42: `keep help api mcp` without a server says how to add one.
func TestMCPHelpWithoutAServer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "ask")
	r := e.ok("help", "api", "mcp")
	for _, want := range []string{"No MCP server is configured", "[mcp.memory]", "reads = [", "keep mcp tools memory"} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("help api mcp lacks %q: %s", want, r)
		}
	}
}

// issue 42: a tool whose name is no identifier is written as JavaScript
// takes it, in the reference and keep.d.ts, and validate accepts it; a
// tool that is a mutation only because the config lists no reads says so
// where it is called in prepare.
func TestMCPToolNamesAndPhasesAsWritten(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "ask")
	e.writeConfig(fmt.Sprintf("[connectors.files]\nroots = [%q]\n\n[mcp.everything]\ncommand = %q\nargs = [\"stdio\"]\ntrust_hints = true\n\n[mcp.memory]\ncommand = %q\nenv = { MEMORY_FILE_PATH = %q }\n",
		e.root, mcptest.Bin(t, "mcp-server-everything"), mcptest.Bin(t, "mcp-server-memory"), filepath.Join(e.dir, "memory.jsonl")))

	r := e.ok("help", "api", "mcp.everything")
	if !strings.Contains(r.stdout, `ctx.mcp.everything["get-env"](`) || strings.Contains(r.stdout, "ctx.mcp.everything.get-env") {
		t.Fatalf("help api: %s", r)
	}
	if !strings.Contains(r.stdout, `await ctx.mcp.everything["get-env"]({`) {
		t.Fatalf("the example is not valid JavaScript: %s", r)
	}
	e.ok("init", filepath.Join(e.dir, "proj"))
	dts, err := os.ReadFile(filepath.Join(e.dir, "proj", "workflows", "keep.d.ts"))
	if err != nil || !strings.Contains(string(dts), `"get-env"(args`) {
		t.Fatalf("keep.d.ts: %v\n%s", err, dts)
	}

	ok := e.file(e.dir, "env.js", `
export default Keep.workflow({
  name: "env",
  topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => {
    const r = await ctx.mcp.everything["get-env"]({});
  } } },
});
`)
	e.ok("validate", ok)

	bad := e.file(e.dir, "prep.js", `
export default Keep.workflow({
  name: "prep",
  topics: { t: {} },
  consumers: { c: Keep.consumer({
    subscribe: ["t"],
    async prepare(ctx) {
      const found = await ctx.mcp.memory.search_nodes({ query: "x" });
      return { reservations: [], data: {} };
    },
    async mutate(ctx, p) {},
    async next() {},
  }) },
});
`)
	r = e.expect(1, "validate", bad)
	if !strings.Contains(r.stderr, "prep.js:8:27: ctx.mcp.memory.search_nodes is a mutation and is called in prepare") ||
		!strings.Contains(r.stderr, `add reads = ["search_nodes"]`) {
		t.Fatalf("%s", r)
	}
}

// issue 42: server-everything's simulate-research-query runs only as a
// task, which keep's MCP client does not offer: keep mcp tools and keep
// validate say it cannot be called, before anything is deployed.
func TestMCPTaskOnlyToolCannotBeCalled(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "ask")
	e.writeConfig(fmt.Sprintf("[connectors.files]\nroots = [%q]\n\n[mcp.everything]\ncommand = %q\nargs = [\"stdio\"]\n",
		e.root, mcptest.Bin(t, "mcp-server-everything")))
	r := e.ok("mcp", "tools", "everything")
	if !strings.Contains(r.stdout, "CANNOT BE CALLED: the tool runs only as an MCP task") {
		t.Fatalf("%s", r)
	}
	src := e.file(e.dir, "research.js", `
export default Keep.workflow({
  name: "research",
  topics: { t: {} },
  consumers: { c: Keep.consumer({
    subscribe: ["t"],
    async prepare(ctx) { return { reservations: [], data: {} }; },
    async mutate(ctx, p) { await ctx.mcp.everything["simulate-research-query"]({ topic: "x" }); },
    async next() {},
  }) },
});
`)
	r = e.expect(1, "validate", src)
	if !strings.Contains(r.stderr, `research.js:8:34: ctx.mcp.everything["simulate-research-query"] cannot be called: the tool runs only as an MCP task`) {
		t.Fatalf("%s", r)
	}
}

// issue 42: the README's Inspector form, keep's command after `--` with
// --db (as a desktop client's config passes it): keep mcp serve says
// which database it serves and that no engine runs it.
func TestMCPServeThroughTheInspectorDashDashForm(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "ask")
	bin := mcptest.Bin(t, "mcp-inspector")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--cli", "--method", "tools/call", "--tool-name", "status",
		"--", keepBin, "--db", e.db, "--config", e.config, "mcp", "serve")
	cmd.Env, cmd.Dir = e.environ(), e.dir
	r := runCmd(t, cmd)
	if r.code != 0 || !strings.Contains(r.stdout, `\"db\": \"`+e.db+`\"`) || !strings.Contains(r.stdout, `\"engine_running\": false`) {
		t.Fatalf("inspector: %s", r)
	}
}
