package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMCPConfig(t *testing.T) {
	t.Parallel()
	load := func(t *testing.T, body string) (Config, error) {
		p := filepath.Join(t.TempDir(), "config.toml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return Load(p, true)
	}

	t.Run("a stdio server and an http server with their keys", func(t *testing.T) {
		t.Parallel()
		cfg, err := load(t, `
[accounts.gh]
kind = "token"

[mcp.memory]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-memory"]
env = { MEMORY_FILE_PATH = "/tmp/m.json", TOKEN = { account = "gh" } }
reads = ["read_graph"]
trust_hints = true
timeout = "5s"

[mcp.github]
url = "https://mcp.example.com/mcp"
account = "gh"
`)
		if err != nil {
			t.Fatal(err)
		}
		m := cfg.MCP["memory"]
		if m.Command != "npx" || len(m.Args) != 2 || m.Env["MEMORY_FILE_PATH"].Value != "/tmp/m.json" ||
			m.Env["TOKEN"].Account != "gh" || !m.TrustHints || m.Timeout.Duration != 5*time.Second || m.Reads[0] != "read_graph" {
			t.Fatalf("memory = %+v", m)
		}
		if g := cfg.MCP["github"]; g.URL == "" || g.Account != "gh" {
			t.Fatalf("github = %+v", g)
		}
		if got := strings.Join(cfg.MCPNames(), ","); got != "github,memory" {
			t.Fatalf("names = %s", got)
		}
	})

	bad := map[string]struct{ body, want string }{
		"neither command nor url":   {"[mcp.x]\nreads = []\n", "[mcp.x] needs command"},
		"both command and url":      {"[mcp.x]\ncommand = \"a\"\nurl = \"http://h\"\n", "sets both"},
		"a name that is no ident":   {"[mcp.\"a-b\"]\ncommand = \"a\"\n", "letters, digits and _"},
		"an undefined account":      {"[mcp.x]\nurl = \"http://h\"\naccount = \"nope\"\n", `mcp.x.account: account "nope" is not defined`},
		"an undefined env account":  {"[mcp.x]\ncommand = \"a\"\nenv = { T = { account = \"nope\" } }\n", `mcp.x.env.T: account "nope"`},
		"an env table of other key": {"[mcp.x]\ncommand = \"a\"\nenv = { T = { secret = \"s\" } }\n", `got key "secret"`},
		"an unknown key":            {"[mcp.x]\ncommand = \"a\"\ncomand = \"b\"\n", "mcp.x.comand"},
		"args on an http server":    {"[mcp.x]\nurl = \"http://h\"\nargs = [\"a\"]\n", "args and env are for stdio"},
	}
	for name, c := range bad {
		t.Run("refuses "+name, func(t *testing.T) {
			t.Parallel()
			_, err := load(t, c.body)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}
