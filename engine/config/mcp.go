package config

import (
	"fmt"
	"regexp"
	"sort"
	"time"
)

// MCP is one [mcp.NAME] section (DESIGN.md §15): a server keep starts over
// stdio (command, args, env) or reaches over streamable HTTP (url).
type MCP struct {
	Command string            `toml:"command"`
	Args    []string          `toml:"args"`
	Env     map[string]MCPEnv `toml:"env"`
	URL     string            `toml:"url"`
	// Account names the [accounts.NAME] whose secret goes in the
	// Authorization header (HTTP servers).
	Account string `toml:"account"`
	// Reads are the tools a script may call as reads; every other tool
	// is a mutation.
	Reads []string `toml:"reads"`
	// TrustHints: a tool the server marks readOnlyHint is a read too, and
	// one it marks idempotentHint may be called again to learn whether an
	// uncertain call happened.
	TrustHints bool     `toml:"trust_hints"`
	Timeout    Duration `toml:"timeout"`
	// MaxTimeout bounds a call that keeps reporting progress (each
	// notification gives it Timeout more); zero: 30 min.
	MaxTimeout Duration `toml:"max_timeout"`
}

// MCPEnv is one environment value of a stdio server: a literal string, or
// { account = "NAME" } for an account's secret, read when the server starts
// and never written anywhere.
type MCPEnv struct {
	Value   string
	Account string
}

// UnmarshalTOML takes `KEY = "value"` or `KEY = { account = "NAME" }`.
func (e *MCPEnv) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		e.Value = x
		return nil
	case map[string]any:
		for k, val := range x {
			s, ok := val.(string)
			if k != "account" || !ok || s == "" {
				return fmt.Errorf("an env value is a string or { account = \"NAME\" }, got key %q", k)
			}
			e.Account = s
		}
		if e.Account == "" {
			return fmt.Errorf("an env value { } needs account = \"NAME\"")
		}
		return nil
	}
	return fmt.Errorf("an env value is a string or { account = \"NAME\" }, got %T", v)
}

// MCPName is what a server may be called: it becomes ctx.mcp.NAME.
var MCPName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// DefaultMCPTimeout bounds one tool call when [mcp.NAME] sets no timeout.
const DefaultMCPTimeout = 60 * time.Second

// MCPNames lists the configured servers, sorted.
func (c Config) MCPNames() []string {
	out := make([]string, 0, len(c.MCP))
	for n := range c.MCP {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (c Config) validateMCP() error {
	for _, name := range c.MCPNames() {
		if err := c.validateServer(name); err != nil {
			if _, ok := err.(*keyError); !ok {
				err = &keyError{key: []string{"mcp", name}, err: err}
			}
			return err
		}
	}
	return nil
}

func (c Config) validateServer(name string) error {
	m := c.MCP[name]
	key := "mcp." + name
	if !MCPName.MatchString(name) {
		return fmt.Errorf("[%s]: a server name is letters, digits and _ (it becomes ctx.mcp.NAME)", key)
	}
	switch {
	case m.Command == "" && m.URL == "":
		return fmt.Errorf("[%s] needs command (a stdio server) or url (streamable HTTP)", key)
	case m.Command != "" && m.URL != "":
		return fmt.Errorf("[%s] sets both command and url; choose one", key)
	case m.URL != "" && (len(m.Args) > 0 || len(m.Env) > 0):
		return fmt.Errorf("[%s]: args and env are for stdio servers (command), not url", key)
	case m.Command != "" && m.Account != "":
		return fmt.Errorf("[%s]: account is for url servers; a stdio server takes env = { VAR = { account = %q } }", key, m.Account)
	case m.Timeout.Duration < 0:
		return &keyError{key: []string{"mcp", name, "timeout"}, err: fmt.Errorf("%s.timeout may not be negative, got %s", key, m.Timeout.Duration)}
	case m.MaxTimeout.Duration < 0:
		return &keyError{key: []string{"mcp", name, "max_timeout"}, err: fmt.Errorf("%s.max_timeout may not be negative, got %s", key, m.MaxTimeout.Duration)}
	}
	if m.Account != "" {
		if _, ok := c.Accounts[m.Account]; !ok {
			return &keyError{key: []string{"mcp", name, "account"}, err: fmt.Errorf("%s.account: account %q is not defined (add [accounts.%s])", key, m.Account, m.Account)}
		}
	}
	for v, e := range m.Env {
		if e.Account == "" {
			continue
		}
		if _, ok := c.Accounts[e.Account]; !ok {
			return &keyError{key: []string{"mcp", name, "env", v}, err: fmt.Errorf("%s.env.%s: account %q is not defined (add [accounts.%s])", key, v, e.Account, e.Account)}
		}
	}
	return nil
}
