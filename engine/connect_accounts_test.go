package engine

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"keep/connectors/accounts"
	"keep/engine/config"
)

// TestAccountTestLogsIn: keep auth test asks the service with the
// credential (an http host's test_url here), says a refused token plainly
// with the command that fixes it, shows the account as needing a sign-in
// afterwards, and clears that once a test gets in.
func TestAccountTestLogsIn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var mu sync.Mutex
	var asked []string
	lastAsked := func() string {
		mu.Lock()
		defer mu.Unlock()
		if len(asked) == 0 {
			return ""
		}
		return asked[len(asked)-1]
	}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path)
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer good-token" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Write([]byte("{}"))
	}))
	defer api.Close()
	host := strings.TrimPrefix(api.URL, "http://")
	cfg := config.Default()
	cfg.Path = t.TempDir() + "/config.toml"
	cfg.Connectors.Files.Roots = []string{t.TempDir()}
	cfg.Accounts = map[string]config.Account{"api": {Kind: "token"}, "spare": {Kind: "token"}}
	cfg.Connectors.HTTP.Hosts = map[string]config.HTTPHost{host: {Account: "api", TestURL: api.URL + "/me"}}
	if err := os.WriteFile(cfg.CredentialsPath(), []byte(`{"accounts":{"api":{"secret":"bad-token"},"spare":{"secret":"x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	accts, err := OpenAccounts(cfg)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := Connectors(cfg, ConnectorOpts{Accounts: accts})
	if err != nil {
		t.Fatal(err)
	}
	state := func(name string) accounts.Status {
		sts, err := accts.Statuses()
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range sts {
			if st.Name == name {
				return st
			}
		}
		t.Fatalf("no account %s in %+v", name, sts)
		return accounts.Status{}
	}

	_, err = TestAccount(ctx, cfg, reg, accts, "api")
	if err == nil || !strings.Contains(err.Error(), "api: the token was refused") || !strings.Contains(err.Error(), "keep auth login api") {
		t.Fatalf("a refused token: %v", err)
	}
	if got := lastAsked(); got != "/me" {
		t.Fatalf("the server was last asked %q, want /me", got)
	}
	if st := state("api"); st.State != accounts.StateNeedsSignIn {
		t.Fatalf("after the refusal: %+v", st)
	}

	if err := accts.Login(ctx, "api", accounts.LoginOpts{ReadSecret: func(string) (string, error) { return "good-token", nil }}); err != nil {
		t.Fatal(err)
	}
	checked, err := TestAccount(ctx, cfg, reg, accts, "api")
	if err != nil || len(checked) != 1 || !strings.Contains(checked[0], "GET "+api.URL+"/me answered 200") {
		t.Fatalf("the right token: %q, %v", checked, err)
	}
	if st := state("api"); st.State != accounts.StateOK {
		t.Fatalf("after signing in: %+v", st)
	}

	checked, err = TestAccount(ctx, cfg, reg, accts, "spare")
	if err != nil || len(checked) != 1 || !strings.Contains(checked[0], "nothing logged in") {
		t.Fatalf("an account nothing uses: %q, %v", checked, err)
	}
}
