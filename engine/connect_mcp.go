package engine

import (
	"fmt"
	"os"
	"path/filepath"

	"keep/connectors"
	"keep/connectors/mcp"
	"keep/engine/config"
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
			Reads: m.Reads, TrustHints: m.TrustHints, Timeout: m.Timeout.Duration, CacheDir: cache, Logger: opts.Logger, Now: opts.Now}
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
