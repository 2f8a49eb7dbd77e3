package workflows

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"keep/connectors"
	"keep/connectors/mcp/mcptest"
	"keep/engine"
	"keep/engine/api"
	"keep/engine/config"
	"keep/engine/enginetest"
)

// TestNotesToMemory runs mcp/notes-to-memory.js (not embedded: `keep init`
// writes only workflows that need no server) against the real memory server.
func TestNotesToMemory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, err := os.ReadFile("mcp/notes-to-memory.js")
	if err != nil {
		t.Fatal(err)
	}
	servers := map[string]config.MCP{"memory": {Command: mcptest.Bin(t, "mcp-server-memory"),
		Env:   map[string]config.MCPEnv{"MEMORY_FILE_PATH": {Value: t.TempDir() + "/memory.jsonl"}},
		Reads: []string{"read_graph", "search_nodes", "open_nodes"}}}
	cache := t.TempDir()
	var reg *connectors.Registry
	h := enginetest.New(t, enginetest.Opts{Config: []func(*config.Config){func(c *config.Config) { c.MCP = servers }},
		Registry: func(cfg config.Config, clock *enginetest.Clock) (*connectors.Registry, error) {
			r, err := engine.Connectors(cfg, engine.ConnectorOpts{Now: clock.Now, MCPCacheDir: cache})
			if err == nil {
				reg = r
				t.Cleanup(func() { r.Close() })
			}
			return r, err
		}})
	h.Write("notes/tea.txt", "Ann likes tea\n")
	h.Write("notes/trains.txt", "Bob likes trains\n")

	res := h.Deploy("notes-to-memory", src)
	if len(res.Capabilities) != 1 || res.Capabilities[0].Capability != "mcp.memory.create_entities" {
		t.Fatalf("capabilities = %+v", res.Capabilities)
	}
	if err := h.E.Grant(ctx, "notes-to-memory", api.GrantView{Capability: "mcp.memory.create_entities", Mode: "allow"}); err != nil {
		t.Fatal(err)
	}
	h.DrainUntilQuiet(time.Minute)
	h.Healthy("notes-to-memory")

	c, _ := reg.Get("mcp.memory")
	g, err := c.Do(ctx, connectors.Call{Method: "read_graph"})
	if err != nil {
		t.Fatal(err)
	}
	text := g.(map[string]any)["text"].(string)
	for _, want := range []string{`"name":"tea"`, `"Ann likes tea"`, `"name":"trains"`} {
		if !strings.Contains(strings.ReplaceAll(text, " ", ""), strings.ReplaceAll(want, " ", "")) {
			t.Fatalf("graph lacks %s: %s", want, text)
		}
	}
	ms := h.Mutations("notes-to-memory")
	if len(ms) != 2 || ms[0].Status != "applied" || ms[1].Status != "applied" {
		t.Fatalf("mutations = %+v", ms)
	}
	for _, in := range h.Inputs("notes-to-memory") {
		if in.Status != "done" || len(in.Outputs) != 1 || in.Outputs[0].Connector != "mcp.memory" {
			t.Fatalf("input %+v", in)
		}
	}
}
