package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"keep/connectors"
	"keep/connectors/mcp"
	"keep/engine/api"
	"keep/engine/config"
	"keep/engine/ledger"
	"keep/storage"
)

// mcpCacheDir is where the servers' tool lists are cached: a folder named
// after the database, so it is among keep's own files (KeepPlaces) and no
// workflow can rewrite what a tool is said to do.
func mcpCacheDir(opts ConnectorOpts) string {
	switch {
	case opts.MCPCacheDir != "":
		return opts.MCPCacheDir
	case opts.DBPath != "":
		return opts.DBPath + ".mcp"
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "keep", "mcp-tools")
	}
	return ""
}

// mcpConnectors registers one connector per [mcp.NAME] (DESIGN.md §15).
// Nothing starts here: a server starts when a script or a command first
// needs it.
func mcpConnectors(cfg config.Config, opts ConnectorOpts, reg *connectors.Registry) error {
	cache := mcpCacheDir(opts)
	for _, name := range cfg.MCPNames() {
		m := cfg.MCP[name]
		key := "mcp." + name
		mc := mcp.Config{Name: name, Command: config.ExpandHome(m.Command), Args: m.Args, URL: m.URL,
			Reads: m.Reads, TrustHints: m.TrustHints, Timeout: m.Timeout.Duration, MaxTimeout: m.MaxTimeout.Duration, CacheDir: cache, Logger: opts.Logger, Now: opts.Now}
		if m.Timeout.Duration == 0 {
			mc.Timeout = config.DefaultMCPTimeout
		}
		a, err := opts.account(key+".account", m.Account)
		if err != nil {
			return err
		}
		mc.Account = a
		for v, e := range m.Env {
			if e.Account == "" {
				if mc.Env == nil {
					mc.Env = map[string]string{}
				}
				mc.Env[v] = e.Value
				continue
			}
			a, err := opts.account(key+".env."+v, e.Account)
			if err != nil {
				return err
			}
			if mc.EnvAccounts == nil {
				mc.EnvAccounts = map[string]connectors.Account{}
			}
			mc.EnvAccounts[v] = a
		}
		c, err := mcp.New(mc)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		reg.Register(c)
	}
	return nil
}

// AttentionMCPServer: an MCP server failed to start several times in a
// row; nothing answers it, the command shows the server's own error.
const AttentionMCPServer api.AttentionKind = "mcp_server"

// mcpConnectorsOf are the registry's MCP servers, once each.
func mcpConnectorsOf(reg *connectors.Registry) []*mcp.Connector {
	var out []*mcp.Connector
	for _, n := range reg.Names() {
		c, _ := reg.Get(n)
		if mc, ok := c.(*mcp.Connector); ok && mc.Name() == n {
			out = append(out, mc)
		}
	}
	return out
}

// watchMCP drops the compiled scripts whenever a server's tool list
// becomes known or changes: each deployed workflow is checked against the
// new list the next time it is loaded (listed, stepped), and one that no
// longer loads is one failed row, not an error.
func (e *Engine) watchMCP() {
	for _, mc := range mcpConnectorsOf(e.reg) {
		mc.OnToolsChanged(func() {
			e.mu.Lock()
			clear(e.scripts)
			e.mu.Unlock()
		})
	}
}

// mcpAttention are the servers that do not start, as Attention items.
func (e *Engine) mcpAttention() []api.AttentionItem {
	var out []api.AttentionItem
	for _, mc := range mcpConnectorsOf(e.reg) {
		why, since := mc.StartProblem()
		if why == "" {
			continue
		}
		out = append(out, api.AttentionItem{Kind: AttentionMCPServer, ID: mc.Name(),
			Title: fmt.Sprintf("MCP server %s does not start: %s", mc.Server(), why), Reason: why,
			Params: json.RawMessage("null"), Answers: []string{}, Command: "keep mcp tools " + mc.Server(), CreatedAt: since})
	}
	return out
}

// awaitMCP makes known the tool lists of the servers src names before it
// is checked (validate, deploy, try, propose), waiting at most each
// server's timeout. A server src does not name costs nothing: the name is
// a hint for waiting, never a check (the check is the sandbox's).
func awaitMCP(ctx context.Context, reg *connectors.Registry, src []byte) {
	if !bytes.Contains(src, []byte("mcp")) {
		return
	}
	for _, mc := range mcpConnectorsOf(reg) {
		if mc.Known() || !regexp.MustCompile(`\b`+regexp.QuoteMeta(mc.Server())+`\b`).Match(src) {
			continue
		}
		_ = mc.AwaitTools(ctx) // why it failed is in keep.log, and the load names the server
	}
}

// AwaitMCPTools is awaitMCP for the CLI's own registry (`keep validate`).
func AwaitMCPTools(ctx context.Context, reg *connectors.Registry, src []byte) {
	awaitMCP(ctx, reg, src)
}

// resendsInPlace is a connector whose call a check found not to have
// happened is sent again as the same call, under its idempotency key (MCP
// carries it in _meta), as the person's "not-happened" answer does: the
// history shows one call retried, not a failed one and a new one.
type resendsInPlace interface{ ResendNotApplied() bool }

func (e *Engine) resendsInPlace(mut *storage.Mutation) bool {
	c, ok := e.reg.Get(mut.Connector)
	r, is := c.(resendsInPlace)
	return ok && is && r.ResendNotApplied()
}

// tResendNotApplied moves a mutation the check found not to have happened
// back in flight, due now, on the block it already holds
// (ledger.ResendNotApplied).
func (e *Engine) tResendNotApplied(ctx context.Context, ws *wfState, w *storage.Workflow, mut *storage.Mutation) error {
	_, err := e.apply(ctx, e.db.Write, w, func(tx *storage.Tx) (ledger.Decision, error) {
		if err := reread(ctx, tx, w); err != nil {
			return ledger.Decision{}, err
		}
		return e.led.ResendNotApplied(ctx, tx, w, mut)
	})
	if err == nil {
		ws.poke()
	}
	return err
}

// mcpResourceOf is the URL of the MCP server over HTTP that signs in with
// account name: an oauth2 account naming no endpoints finds them there
// (accounts' mcpauth.go). "" when no such server uses it.
func mcpResourceOf(cfg config.Config, account string) string {
	for _, name := range cfg.MCPNames() {
		if m := cfg.MCP[name]; m.URL != "" && m.Account == account {
			return m.URL
		}
	}
	return ""
}
