package engine

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"keep/connectors"
	"keep/connectors/accounts"
	"keep/engine/config"
)

// TestConfiguredAccounts: [connectors.slack] token_env and [connectors.mail]
// password_env are accounts of the one store: keep auth list shows them,
// and the Slack connector authorizes through its account, whether the
// store is keep's own or a caller's made without them.
func TestConfiguredAccounts(t *testing.T) {
	const tokenEnv, passwordEnv = "KEEP_TEST_CONFIGURED_SLACK", "KEEP_TEST_CONFIGURED_MAIL"
	t.Setenv(tokenEnv, "xoxb-configured")
	t.Setenv(passwordEnv, "mail-pw")
	var mu sync.Mutex
	var auths []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		json.NewEncoder(w).Encode(map[string]any{"ok": true, "channel": "C0FINANCE1", "ts": "1700000000.000100"})
	}))
	defer api.Close()
	cfg := config.Default()
	cfg.Path = t.TempDir() + "/config.toml"
	cfg.Connectors.Files.Roots = []string{t.TempDir()}
	cfg.Connectors.Slack.APIBase = api.URL
	cfg.Connectors.Slack.TokenEnv = tokenEnv
	cfg.Connectors.Mail.Username = "me@example.com"
	cfg.Connectors.Mail.PasswordEnv = passwordEnv

	accts, err := OpenAccounts(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sts, err := accts.Statuses()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]accounts.Status{}
	for _, st := range sts {
		got[st.Name] = st
	}
	if st := got[SlackAccount]; st.State != accounts.StateOK || st.Kind != accounts.Token || !strings.Contains(st.Detail, tokenEnv) {
		t.Errorf("slack's token in keep auth list: %+v", st)
	}
	if st := got[MailAccount]; st.State != accounts.StateOK || st.Username != "me@example.com" || !strings.Contains(st.Detail, passwordEnv) {
		t.Errorf("mail's password in keep auth list: %+v", st)
	}

	post := connectors.Call{Method: "post", IdempotencyKey: "k1",
		Params: map[string]any{"channel": "C0FINANCE1", "text": "hello"}}
	ownStore, err := accounts.Open(nil, accounts.Opts{})
	if err != nil {
		t.Fatal(err)
	}
	for _, store := range []*accounts.Store{accts, ownStore} {
		reg, err := Connectors(cfg, ConnectorOpts{Accounts: store})
		if err != nil {
			t.Fatal(err)
		}
		slc, _ := reg.Get("slack")
		if _, err := slc.Do(context.Background(), post); err != nil {
			t.Fatalf("post: %v", err)
		}
		reg.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auths) != 2 || auths[0] != "Bearer xoxb-configured" || auths[1] != auths[0] {
		t.Fatalf("authorizations %q, want the configured token twice", auths)
	}

	// token_env's default names a variable most never set: no token is no
	// account, and the connector posts through its webhook as before
	t.Setenv(tokenEnv, "")
	if defs := configuredAccounts(cfg); len(defs) != 1 || defs[0].Name != MailAccount {
		t.Fatalf("configured accounts without a token: %+v", defs)
	}
}
