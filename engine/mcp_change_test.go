package engine_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"keep/connectors"
	"keep/engine"
	"keep/engine/api"
	"keep/engine/config"
	"keep/engine/enginetest"
)

// mcpHostReg is mcpHost that also hands back the registry the engine runs
// on, for a test that lists a server's tools as `keep mcp tools` does.
func mcpHostReg(t *testing.T, servers map[string]config.MCP, edits ...func(*config.Config)) (*enginetest.Host, *connectors.Registry) {
	cache := t.TempDir()
	var reg *connectors.Registry
	edits = append(edits, func(c *config.Config) { c.MCP = servers })
	h := enginetest.New(t, enginetest.Opts{Config: edits,
		Registry: func(cfg config.Config, clock *enginetest.Clock) (*connectors.Registry, error) {
			r, err := engine.Connectors(cfg, engine.ConnectorOpts{Now: clock.Now, MCPCacheDir: cache})
			if err == nil {
				reg = r
				t.Cleanup(func() { r.Close() })
			}
			return r, err
		}})
	return h, reg
}

const plainWorkflow = `
export default Keep.workflow({
  name: "plain",
  topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => {} } },
});`

// issue 42: a server's new release drops a tool a deployed workflow calls.
// When keep learns the new list, that workflow is one failed row, with
// file:line:col; every other workflow is listed as before.
func TestMCPToolGoneIsOneFailedRow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newLossyServer(t, true)
	h, reg := mcpHostReg(t, map[string]config.MCP{"svc": {URL: s.ts.URL, Reads: []string{"find"}}})
	h.Deploy("lossy", []byte(lossyWorkflow))
	h.Deploy("plain", []byte(plainWorkflow))
	if wfs, err := h.E.Workflows(ctx); err != nil || len(wfs) != 2 || wfs[0].LoadError != "" || wfs[1].LoadError != "" {
		t.Fatalf("before: %+v, %v", wfs, err)
	}

	s.removeTool("create")
	if _, _, err := engine.MCPTools(ctx, reg, "svc"); err != nil {
		t.Fatal(err)
	}
	wfs, err := h.E.Workflows(ctx)
	if err != nil || len(wfs) != 2 {
		t.Fatalf("after the tool went: %+v, %v; want both rows", wfs, err)
	}
	byName := map[string]api.WorkflowView{}
	for _, w := range wfs {
		byName[w.Name] = w
	}
	lossy, plain := byName["lossy"], byName["plain"]
	if lossy.State != api.StateNeedsAttention || !strings.Contains(lossy.LoadError, "create") ||
		!regexp.MustCompile(`lossy\.js:\d+:\d+`).MatchString(lossy.LoadError) || !strings.HasPrefix(lossy.Schedule, "does not load") {
		t.Fatalf("lossy = %+v, want a failed row naming the tool and file:line:col", lossy)
	}
	if plain.LoadError != "" || plain.State == api.StateNeedsAttention {
		t.Fatalf("plain = %+v, want it listed as before", plain)
	}
}

// issue 42: a server that does not start costs no other command a wait,
// and after repeated failed starts the person sees it in Attention. The
// server's timeout is an hour: anything that waited on it would hang.
func TestMCPServerThatDoesNotStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hang := config.MCP{Command: "sleep", Args: []string{"3600"}, Timeout: config.Duration{Duration: time.Hour}}
	gone := config.MCP{Command: t.TempDir() + "/no-such-server"}
	h, reg := mcpHostReg(t, map[string]config.MCP{"hang": hang, "gone": gone})

	h.Deploy("plain", []byte(plainWorkflow))
	if _, err := h.E.Workflows(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := h.E.Grants(ctx, "plain"); err != nil {
		t.Fatal(err)
	}
	if att := h.Attention(); len(att) != 0 {
		t.Fatalf("attention = %+v before any failed start", att)
	}

	for range 3 {
		if _, _, err := engine.MCPTools(ctx, reg, "gone"); err == nil {
			t.Fatal("a server that does not exist listed its tools")
		}
		h.Clock.Advance(time.Hour) // past the back-off
	}
	att := h.Attention()
	if len(att) != 1 || att[0].Kind != engine.AttentionMCPServer || !strings.HasPrefix(att[0].Title, "MCP server gone does not start: ") ||
		!strings.Contains(att[0].Title, "no-such-server") || att[0].Command != "keep mcp tools gone" {
		t.Fatalf("attention = %+v, want the server that does not start", att)
	}
}

// issue 42: an oauth2 account that names no endpoints and signs in an MCP
// server over HTTP finds them at that server (keep auth login NAME).
func TestMCPAccountSignsInAtItsServer(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.Path = t.TempDir() + "/config.toml"
	cfg.Accounts = map[string]config.Account{"remote": {Kind: "oauth2"}}
	cfg.MCP = map[string]config.MCP{"remote": {URL: "https://mcp.example.com/mcp", Account: "remote"}}
	store, err := engine.OpenAccounts(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := store.Def("remote"); !ok || d.Resource != "https://mcp.example.com/mcp" {
		t.Fatalf("def = %+v", d)
	}
}
