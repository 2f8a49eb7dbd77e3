package clitest

import (
	"strings"
	"testing"
)

// TestSubCommandsAreTableRows: auth, service and mcp take their
// sub-commands from the command table, so each has its own help, and a
// missing or unknown sub-command, wrong arity or a flag of another
// sub-command is a usage error (exit 2) with the usage line of what was
// called, as for every other command.
func TestSubCommandsAreTableRows(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")

	t.Run("help names each sub-command with its own usage", func(t *testing.T) {
		for _, c := range []struct {
			args []string
			want []string
		}{
			{[]string{"help", "auth"}, []string{"keep auth login NAME [--device] [--force]", "keep auth list [--json]", "keep auth test NAME", "keep auth logout NAME"}},
			{[]string{"help", "service"}, []string{"keep service install ", "keep service uninstall ", "keep service status [--json]"}},
			{[]string{"help", "mcp"}, []string{"keep mcp tools NAME [--json]", "keep mcp serve "}},
			{[]string{"help", "auth", "login"}, []string{"usage: keep auth login NAME [--device] [--force]\n", "--device"}},
			{[]string{"help", "service", "status"}, []string{"usage: keep service status [--json]\n", "--json"}},
			{[]string{"auth", "login", "--help"}, []string{"usage: keep auth login NAME [--device] [--force]\n", "--device"}},
			{[]string{"mcp", "--help"}, []string{"keep mcp serve "}},
			{[]string{"help"}, []string{"keep auth logout NAME", "keep service uninstall", "keep mcp serve"}},
		} {
			r := e.ok(c.args...)
			for _, w := range c.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("keep %s lacks %q:\n%s", strings.Join(c.args, " "), w, r.stdout)
				}
			}
		}
		if r := e.ok("help", "service", "install"); strings.Contains(r.stdout, "--json") {
			t.Errorf("keep help service install offers --json, which only status takes:\n%s", r.stdout)
		}
	})

	t.Run("a wrong call is a usage error naming what was called", func(t *testing.T) {
		for _, c := range []struct {
			args       []string
			msg, usage string
		}{
			{[]string{"auth"}, "auth needs a sub-command: one of login, list, test, logout", "keep auth login NAME [--device] [--force] | list [--json] | test NAME | logout NAME"},
			{[]string{"service"}, "service needs a sub-command: one of install, uninstall, status", "keep service install | uninstall | status [--json]"},
			{[]string{"mcp", "--json"}, "mcp needs a sub-command", "keep mcp tools NAME [--json] | serve"},
			{[]string{"auth", "signin", "mail"}, `unknown auth command "signin"`, "keep auth login NAME"},
			{[]string{"service", "reinstall"}, `unknown service command "reinstall"`, "keep service install | uninstall"},
			{[]string{"auth", "login"}, "missing arguments", "keep auth login NAME [--device] [--force]"},
			{[]string{"auth", "test"}, "missing arguments", "keep auth test NAME"},
			{[]string{"auth", "list", "mail"}, "too many arguments: mail", "keep auth list [--json]"},
			{[]string{"auth", "list", "--device"}, "flag provided but not defined: --device", "keep auth list [--json]"},
			{[]string{"auth", "logout", "a", "b"}, "too many arguments: b", "keep auth logout NAME"},
			{[]string{"service", "install", "now"}, "too many arguments: now", "keep service install"},
			{[]string{"service", "uninstall", "--json"}, "flag provided but not defined: --json", "keep service uninstall"},
			{[]string{"mcp", "tools"}, "missing arguments", "keep mcp tools NAME [--json]"},
			{[]string{"mcp", "serve", "x"}, "too many arguments: x", "keep mcp serve"},
			{[]string{"help", "auth", "nope"}, `auth has no sub-command "nope"`, "keep help"},
		} {
			r := e.expect(2, c.args...)
			if !strings.HasPrefix(r.stderr, "keep: ") || !strings.Contains(r.stderr, c.msg) {
				t.Errorf("keep %s: want the message %q, got %s", strings.Join(c.args, " "), c.msg, r)
			}
			if !strings.Contains(r.stderr, "\nusage: "+c.usage) {
				t.Errorf("keep %s: want the usage line %q, got %s", strings.Join(c.args, " "), c.usage, r)
			}
		}
	})

	t.Run("global flags may stand before the sub-command", func(t *testing.T) {
		r := e.ok("auth", "--db", e.db, "list", "--json")
		if strings.TrimSpace(r.stdout) == "" || r.stdout[0] != '[' {
			t.Errorf("auth --db DB list --json: %s", r)
		}
		if r := e.ok("service", "--config="+e.config, "status", "--json"); !strings.Contains(r.stdout, "installed") {
			t.Errorf("service --config=FILE status --json: %s", r)
		}
	})
}
