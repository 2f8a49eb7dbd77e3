// Package mcptest finds the MCP reference servers and client that
// .ci/servers/mcp.sh installs from the npm registry, for tests that run
// them for real.
package mcptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Dir is where .ci/servers/mcp.sh installs: $KEEP_MCP_DIR, else
// ~/.cache/keep/mcp.
func Dir() string {
	if d := os.Getenv("KEEP_MCP_DIR"); d != "" {
		return d
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "keep", "mcp")
}

// Bin returns the path of an installed npm binary (mcp-server-memory,
// mcp-server-filesystem, mcp-server-everything, mcp-inspector). Absent, the
// test is skipped with the reason, or fails under CI=true.
func Bin(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(Dir(), "node_modules", ".bin", name)
	_, err := os.Stat(p)
	if err == nil {
		_, err = exec.LookPath("node")
	}
	if err != nil {
		msg := name + " is not installed (" + err.Error() + "): run .ci/servers/mcp.sh"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}
