package clitest

import (
	"strings"
	"testing"
)

// A config value that would be dropped in silence (a blank allowed host
// that leaves the list open to any host, a negative timeout the connector
// replaces by its default) is refused, and the message says in which file,
// on which line and column, at which key.
func TestConfigBadValueSaysWhere(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct{ body, want string }{
		"a blank allowed host":    {"[connectors.http]\nallow_hosts = [\"\"]\n", ":2:1: connectors.http.allow_hosts[0] is empty"},
		"a negative mail timeout": {"[connectors.mail]\ncommand_timeout = \"-1m\"\n", ":2:1: connectors.mail.command_timeout may not be negative"},
		"a mail tls keep does not know": {"[connectors.http]\nallow_hosts = [\"a\"]\n[connectors.mail]\nimap = \"imap.example.com:993\"\ntls = \"startls\"\n",
			":3:1: connectors.mail: mail: tls \"startls\" is not one of implicit, starttls, none"},
		"an account of a kind keep does not know": {"[accounts.work]\nkind = \"oath2\"\n",
			":1:1: accounts.work: kind must be oauth2, password, token or basic, not \"oath2\""},
		"a misspelt key": {"[connectors.http]\nalow_hosts = [\"a\"]\n", ":2:1: unknown key connectors.http.alow_hosts; did you mean connectors.http.allow_hosts?"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, "allow")
			e.writeConfig(c.body)
			for _, args := range [][]string{{"workflows"}, {"drain"}} {
				r := e.expect(1, args...)
				if !strings.Contains(r.stderr, e.config+c.want) {
					t.Errorf("keep %s: want %q in:\n%s", strings.Join(args, " "), e.config+c.want, r)
				}
			}
		})
	}
}
