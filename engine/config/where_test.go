package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A bad config names the file, the line and column, and the key, and says
// what the key takes or what was likely meant.
func TestLoadSaysWhere(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ body, want string }{
		"a misspelt table":           {"[connectors.htpp]\nallow_hosts = [\"a\"]\n", ":1:1: unknown table [connectors.htpp]; did you mean connectors.http?"},
		"a misspelt key":             {"# hosts\n[connectors.http]\nalow_hosts = [\"a\"]\n", ":3:1: unknown key connectors.http.alow_hosts; did you mean connectors.http.allow_hosts?"},
		"a key in the wrong table":   {"[policy]\nallow_hosts = [\"a\"]\n", ":2:1: unknown key policy.allow_hosts; allow_hosts belongs in [connectors.http]"},
		"an unknown section":         {"[policy]\nrepairs = 1\n[foo]\nbar = 1\n", ":3:1: unknown table [foo]; the top level takes accounts, connectors"},
		"a string for a list":        {"[connectors.http]\nallow_hosts = \"x\"\n", ":2:1: connectors.http.allow_hosts takes a list"},
		"a number as a string":       {"[policy]\ntransient_retries = \"5\"\n", ":2:1: policy.transient_retries takes a whole number without quotes, got a string"},
		"a negative duration":        {"[policy]\n  min_wake = \"-5s\"\n", ":2:3: policy.min_wake must be positive"},
		"a duration without unit":    {"[policy]\nmin_wake = \"30\"\n", ":2:"},
		"a duplicate key":            {"[policy]\nrepairs = 1\nrepairs = 2\n", ":3:"},
		"invalid TOML":               {"[policy\nrepairs = 1\n", ":2:"},
		"CRLF line ends":             {"[policy]\r\nrepairs = 1\r\nfoo = 2\r\n", ":3:1: unknown key policy.foo"},
		"the second subscription":    {"[[events.subscribes]]\ntopic = \"a\"\nhandler = \"notify_user\"\n[[events.subscribes]]\ntopic = \"b\"\n", ":4:1: events.subscribes[1]"},
		"an mcp env account":         {"[mcp.x]\ncommand = \"a\"\nenv = { A = { account = \"nope\" } }\n", ":3:1: mcp.x.env.A"},
		"a blank allowed host":       {"[connectors.http]\nallow_hosts = [\" \"]\n", ":2:1: connectors.http.allow_hosts[0] is empty"},
		"a negative mail timeout":    {"[connectors.mail]\ntimeout = \"-1s\"\n", ":2:1: connectors.mail.timeout may not be negative"},
		"a negative mail dial":       {"[connectors.mail]\ndial_timeout = \"-1s\"\n", ":2:1: connectors.mail.dial_timeout may not be negative"},
		"a negative mcp max_timeout": {"[mcp.x]\ncommand = \"a\"\nmax_timeout = \"-1s\"\n", ":3:1: mcp.x.max_timeout may not be negative"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(t.TempDir(), "config.toml")
			if err := os.WriteFile(p, []byte(c.body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(p, true)
			if err == nil || !strings.Contains(err.Error(), "config "+p+c.want) {
				t.Fatalf("err = %v\nwant it to contain %q", err, "config "+p+c.want)
			}
		})
	}
}

func TestKeyPos(t *testing.T) {
	t.Parallel()
	src := "[a]\nx = 1\n[b . \"c.d\"]\n  y = { z = 1 }\n[[e]]\nf = 1\n[[e]]\nf = 2\n"
	for _, c := range []struct {
		key       []string
		nth       int
		line, col int
	}{
		{[]string{"a", "x"}, 0, 2, 1},
		{[]string{"b", "c.d", "y"}, 0, 4, 3},
		{[]string{"b", "c.d", "y", "z"}, 0, 4, 3},
		{[]string{"e"}, 1, 7, 1},
		{[]string{"nowhere"}, 0, 0, 0},
	} {
		if l, col := keyPos(src, c.key, c.nth); l != c.line || col != c.col {
			t.Errorf("keyPos(%q, %d) = %d:%d, want %d:%d", c.key, c.nth, l, col, c.line, c.col)
		}
	}
}
