package http_test

import (
	"context"
	"encoding/json"
	nethttp "net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"keep/connectors"
	"keep/connectors/accounts"
	"keep/connectors/accounts/oauthtest"
	keephttp "keep/connectors/http"
)

// signedIn returns a store where "api" is an oauth2 account of srv with a
// granted refresh token, and "tok" and "basic" hold secrets.
func signedIn(t *testing.T, srv *oauthtest.Server) *accounts.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "credentials.json")
	creds := map[string]any{"accounts": map[string]any{
		"api":   map[string]any{"client_secret": srv.ClientSecret, "refresh_token": srv.Issue("read")},
		"tok":   map[string]any{"secret": "static-token"},
		"basic": map[string]any{"secret": "pw"},
	}}
	data, _ := json.Marshal(creds)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := accounts.Open([]accounts.Def{
		{Name: "api", Kind: accounts.OAuth2, ClientID: srv.ClientID, AuthURL: srv.AuthURL(), TokenURL: srv.TokenURL()},
		{Name: "tok", Kind: accounts.Token},
		{Name: "basic", Kind: accounts.Basic, Username: "me"},
	}, accounts.Opts{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func connectorFor(t *testing.T, s *accounts.Store, hosts map[string]string) *keephttp.Connector {
	t.Helper()
	m := map[string]connectors.Account{}
	for h, name := range hosts {
		a, err := s.Account(name)
		if err != nil {
			t.Fatal(err)
		}
		m[h] = a
	}
	c, err := keephttp.New(keephttp.Config{Hosts: m})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestHostCredentials(t *testing.T) {
	t.Parallel()
	srv := oauthtest.New(t)
	api := newPeer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if !srv.Active(oauthtest.Bearer(r)) {
			w.WriteHeader(nethttp.StatusUnauthorized)
			return
		}
		w.Write([]byte(`{"ok":true}`))
	})
	echo := newPeer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) { w.Write([]byte("ok")) })
	store := signedIn(t, srv)
	apiHost := strings.TrimPrefix(api.URL, "http://")
	get := func(c *keephttp.Connector, url string, hdr map[string]any) (any, error) {
		p := map[string]any{"url": url}
		if hdr != nil {
			p["headers"] = hdr
		}
		return c.Do(context.Background(), connectors.Call{Method: "get", Params: p})
	}

	t.Run("an oauth2 host gets a bearer token, refreshed once after a 401", func(t *testing.T) {
		c := connectorFor(t, store, map[string]string{apiHost: "api"})
		if res, err := get(c, api.URL+"/a", nil); err != nil || res.(map[string]any)["status"] != int64(200) {
			t.Fatalf("first get = %v, %v", res, err)
		}
		srv.ExpireAccess() // the service stops accepting the token it gave
		before := srv.Refreshes()
		if res, err := get(c, api.URL+"/b", nil); err != nil || res.(map[string]any)["status"] != int64(200) {
			t.Fatalf("get after a 401 = %v, %v", res, err)
		}
		if srv.Refreshes() != before+1 {
			t.Errorf("%d refreshes after the 401, want 1", srv.Refreshes()-before)
		}
	})

	t.Run("a script's own Authorization for a configured host is refused", func(t *testing.T) {
		c := connectorFor(t, store, map[string]string{apiHost: "api"})
		hits := api.hits.Load()
		_, err := get(c, api.URL+"/a", map[string]any{"authorization": "Bearer mine"})
		if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), `"authorization"`) {
			t.Fatalf("err = %v, want a refusal naming the header", err)
		}
		if api.hits.Load() != hits {
			t.Error("the request was sent anyway")
		}
	})

	t.Run("token and basic accounts", func(t *testing.T) {
		host := strings.TrimPrefix(echo.URL, "http://")
		c := connectorFor(t, store, map[string]string{host: "tok"})
		if _, err := get(c, echo.URL, nil); err != nil {
			t.Fatal(err)
		}
		if r, _ := echo.lastRequest(); r.Header.Get("Authorization") != "Bearer static-token" {
			t.Errorf("token account sent %q", r.Header.Get("Authorization"))
		}
		c = connectorFor(t, store, map[string]string{"http://" + host: "basic"}) // scheme and port said outright
		if _, err := get(c, echo.URL, nil); err != nil {
			t.Fatal(err)
		}
		if r, _ := echo.lastRequest(); r.Header.Get("Authorization") != "Basic bWU6cHc=" {
			t.Errorf("basic account sent %q", r.Header.Get("Authorization"))
		}
		c = connectorFor(t, store, nil)
		if _, err := get(c, echo.URL, map[string]any{"Authorization": "Bearer script"}); err != nil {
			t.Fatal(err)
		}
		if r, _ := echo.lastRequest(); r.Header.Get("Authorization") != "Bearer script" {
			t.Errorf("an unconfigured host got %q, want the script's own header", r.Header.Get("Authorization"))
		}
	})

	t.Run("the preview shows the credential as held by the host", func(t *testing.T) {
		c := connectorFor(t, store, map[string]string{apiHost: "api"})
		var prev string
		for _, m := range c.Methods() {
			if m.Name == "request" {
				prev = m.Preview(map[string]any{"method": "POST", "url": api.URL + "/x", "json": map[string]any{"a": 1}})
			}
		}
		if !strings.Contains(prev, "Authorization: [held by host]") {
			t.Errorf("preview = %q", prev)
		}
		params := map[string]any{"url": api.URL + "/x", "headers": map[string]any{"Accept": "a"}}
		shown := connectors.Shown(c, "get", params)
		if h := shown["headers"].(map[string]any); h["Authorization"] != "[held by host]" || h["Accept"] != "a" {
			t.Errorf("shown = %v", shown)
		}
		if _, changed := params["headers"].(map[string]any)["Authorization"]; changed {
			t.Error("Shown changed the call's own parameters")
		}
	})

	t.Run("a revoked grant is an auth failure naming the account", func(t *testing.T) {
		c := connectorFor(t, store, map[string]string{apiHost: "api"})
		srv.RevokeAll()
		_, err := c.Do(context.Background(), connectors.Call{Method: "request", IdempotencyKey: "k",
			Params: map[string]any{"method": "POST", "url": api.URL + "/x", "json": map[string]any{}}})
		if connectors.ClassOf(err) != connectors.Auth || accounts.AccountOf(err) != "api" {
			t.Fatalf("err = %v, want auth of api", err)
		}
	})
}
