package oauthtest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"golang.org/x/oauth2"
)

// TestIntrospection: a token from the provider is active at the
// introspection endpoint with its scope and subject until it is revoked.
func TestIntrospection(t *testing.T) {
	t.Parallel()
	s := New(t)
	conf := &oauth2.Config{ClientID: s.ClientID, ClientSecret: s.ClientSecret,
		Endpoint: oauth2.Endpoint{TokenURL: s.TokenURL(), AuthStyle: oauth2.AuthStyleInParams}}
	tok, err := conf.TokenSource(context.Background(), &oauth2.Token{RefreshToken: s.Issue("https://mail.example.com/")}).Token()
	if err != nil {
		t.Fatal(err)
	}
	introspect := func(token string) map[string]any {
		t.Helper()
		resp, err := http.PostForm(s.IntrospectURL(), url.Values{"token": {token}})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	got := introspect(tok.AccessToken)
	if got["active"] != true || got["username"] != s.Username || got["scope"] != "https://mail.example.com/" {
		t.Fatalf("introspection = %v", got)
	}
	if _, err := http.PostForm(s.RevokeURL(), url.Values{"token": {tok.AccessToken}}); err != nil {
		t.Fatal(err)
	}
	if got := introspect(tok.AccessToken); got["active"] != false {
		t.Errorf("after revocation: %v", got)
	}
	if got := introspect("nonsense"); got["active"] != false {
		t.Errorf("an unknown token: %v", got)
	}
}
