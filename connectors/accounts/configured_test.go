package accounts

import (
	"context"
	"strings"
	"testing"

	"keep/connectors"
)

// TestConfiguredAccount: a connector's own credential key (a token_env, a
// password) is an account of the store: its secret is read from there,
// keep auth list shows it, and there is nothing to sign in to.
func TestConfiguredAccount(t *testing.T) {
	const env = "KEEP_TEST_CONFIGURED_TOKEN"
	t.Setenv(env, "")
	slack := Def{Name: "connectors.slack", Kind: Token, SecretEnv: env}
	mail := Def{Name: "connectors.mail", Kind: Password, Username: "me@example.com", SecretEnv: env, ConfigSecret: "inline-pw"}
	// no credentials file: configured accounts never need one
	s, err := Open([]Def{slack, mail}, Opts{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := s.Account("connectors.slack")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Secret(ctx); connectors.ClassOf(err) != connectors.Auth || !strings.Contains(err.Error(), env) {
		t.Fatalf("secret with %s unset: %v, want an auth failure naming it", env, err)
	}
	sts, err := s.Statuses()
	if err != nil {
		t.Fatal(err)
	}
	if len(sts) != 2 || sts[1].Name != "connectors.slack" || sts[1].State != StateNeedsSignIn || !strings.Contains(sts[1].Detail, env) {
		t.Fatalf("statuses with %s unset: %+v", env, sts)
	}

	t.Setenv(env, "xoxb-from-env")
	if got, err := a.Secret(ctx); err != nil || got != "xoxb-from-env" {
		t.Fatalf("secret = %q, %v", got, err)
	}
	m, _ := s.Account("connectors.mail")
	if got, err := m.Secret(ctx); err != nil || got != "inline-pw" || m.Username() != "me@example.com" {
		t.Fatalf("the value in the config must win over the variable: %q, %v", got, err)
	}
	sts, _ = s.Statuses()
	if sts[1].State != StateOK || sts[1].Detail != "from environment variable "+env || sts[0].Detail != "from the config file" {
		t.Fatalf("statuses: %+v", sts)
	}
	held := map[string]bool{}
	for _, h := range s.Held() {
		held[h.Secret] = true
	}
	if !held["xoxb-from-env"] || !held["inline-pw"] {
		t.Fatalf("held %v: the configured secrets are missing", held)
	}
	if err := s.Login(ctx, "connectors.slack", LoginOpts{ReadSecret: secretReader("x")}); err == nil || !strings.Contains(err.Error(), env) {
		t.Fatalf("login to a configured account: %v", err)
	}
	if _, err := s.Logout(ctx, "connectors.mail"); err == nil || !strings.Contains(err.Error(), "config file") {
		t.Fatalf("logout of a configured account: %v", err)
	}
	if err := Refused(a, "xoxb-from-env", "Slack answered 401"); err.Class != connectors.Auth || AccountOf(err) != "" || !strings.Contains(err.Error(), env) {
		t.Fatalf("a refused configured secret: %v, want an auth failure naming the variable, not a sign-in", err)
	}
	if err := s.Test(ctx, "connectors.slack"); err != nil {
		t.Fatalf("test of a set token: %v", err)
	}
	if _, err := Open([]Def{slack, slack}, Opts{}); err == nil {
		t.Fatal("an account defined twice was taken")
	}
	if _, err := Open([]Def{slack, {Name: "file", Kind: Token}}, Opts{}); err == nil {
		t.Fatal("an account of the credentials file was taken without a file")
	}
}
