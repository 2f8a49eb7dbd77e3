package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"keep/connectors"
	"keep/engine/config"
)

// mailAccount is a connectors.Account standing in for the host's accounts.
type mailAccount struct{ user string }

func (a mailAccount) Name() string                           { return "google" }
func (a mailAccount) Kind() string                           { return "oauth2" }
func (a mailAccount) Username() string                       { return a.user }
func (a mailAccount) Secret(context.Context) (string, error) { return "token", nil }
func (a mailAccount) Invalidate()                            {}

func TestMailConfig(t *testing.T) {
	t.Parallel()

	load := func(t *testing.T, text string) config.Config {
		t.Helper()
		path := filepath.Join(t.TempDir(), "config.toml")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(path, true)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}

	t.Run("Every mail key is read and an account replaces the password", func(t *testing.T) {
		t.Parallel()
		cfg := load(t, `[connectors.mail]
account = "google"
preset = "gmail"
from = "me@example.org"
tls = "implicit"
ca_file = ""
auth = "xoauth2"
inbox = "INBOX"
sent_folder = ""
append_sent = false
self_copy = false
dial_timeout = "5s"
command_timeout = "20s"
timeout = "1m"
`)
		var asked string
		reg, err := Connectors(cfg, ConnectorOpts{Account: func(name string) (connectors.Account, error) {
			asked = name
			return mailAccount{user: "me@gmail.com"}, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		if asked != "google" {
			t.Fatalf("asked for account %q", asked)
		}
		c, m, err := reg.Lookup("gmail", "send")
		if err != nil || c.Name() != "mail" || m.Reconcile == "" {
			t.Fatalf("%v %+v %v", c, m, err)
		}
		if s := c.(interface{ String() string }).String(); !strings.Contains(s, "me@gmail.com") {
			t.Fatalf("connector %s", s)
		}
	})

	t.Run("A named account without accounts configured is an error naming it", func(t *testing.T) {
		t.Parallel()
		cfg := load(t, "[connectors.mail]\naccount = \"fastmail\"\n")
		if _, err := Connectors(cfg, ConnectorOpts{}); err == nil || !strings.Contains(err.Error(), `"fastmail"`) {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("A login name without a domain needs from", func(t *testing.T) {
		t.Parallel()
		cfg := load(t, "[connectors.mail]\nimap = \"127.0.0.1:1143\"\nsmtp = \"127.0.0.1:1587\"\nusername = \"alice\"\n")
		if _, err := Connectors(cfg, ConnectorOpts{}); err == nil || !strings.Contains(err.Error(), "from is required") {
			t.Fatalf("got %v", err)
		}
		cfg.Connectors.Mail.From = "alice@example.org"
		if _, err := Connectors(cfg, ConnectorOpts{}); err != nil {
			t.Fatal(err)
		}
	})
}
