package accounts

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"keep/engine/enginetest/kit"
)

// issue 42: an MCP server over HTTP that answers 401 with
// WWW-Authenticate: Bearer resource_metadata=… is signed in to as the MCP
// authorization spec says: protected-resource metadata (RFC 9728), the
// authorization server's metadata (RFC 8414), dynamic client registration
// (RFC 7591), PKCE on loopback, the resource named (RFC 8707); the tokens
// and what was discovered are kept, and a refresh needs no discovery.
func TestMCPServerSignIn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	def := Def{Name: "remote", Kind: OAuth2, Resource: b.srv.Resource()}
	s := b.open(t, def)

	if _, err := s.Account("remote"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.secret(context.Background(), def); err == nil {
		t.Fatal("a secret before any sign-in")
	}
	browser := b.srv.Browser()
	done := make(chan error, 1)
	go func() {
		done <- s.Login(context.Background(), "remote", LoginOpts{Out: browser,
			ReadSecret: func(string) (string, error) {
				t.Error("a discovered public client asked for a client secret")
				return "", nil
			}})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("login: %v\n%s", err, browser.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("login did not end:\n%s", browser.String())
	}
	if status := kit.Wait(t, browser.Visited, kit.Timeout); status != http.StatusOK {
		t.Fatalf("the browser landed on %d", status)
	}
	if b.srv.Registered() != 1 {
		t.Fatalf("%d clients registered, want keep once", b.srv.Registered())
	}
	if res := b.srv.Resources(); len(res) < 2 || slices.IndexFunc(res, func(r string) bool { return r != b.srv.Resource() }) >= 0 {
		t.Fatalf("resource parameters %q, want the MCP server's on the authorization and token requests", res)
	}

	tok, err := s.secret(context.Background(), def)
	if err != nil || !b.srv.Active(tok) {
		t.Fatalf("secret after sign-in = %q, %v", tok, err)
	}
	e := readCreds(t, b.path).Accounts["remote"]
	if e.Discovered == nil || e.Discovered.TokenURL != b.srv.TokenURL() || e.Discovered.ClientID == "" {
		t.Fatalf("stored = %+v, want the discovered endpoints and client kept", e.Discovered)
	}

	// a refresh goes to the discovered token endpoint, with no discovery
	b.srv.ExpireAccess()
	s.Account("remote")
	acct, _ := s.Account("remote")
	acct.Invalidate()
	fresh, err := acct.Secret(context.Background())
	if err != nil || fresh == tok || !b.srv.Active(fresh) || b.srv.Refreshes() != 1 {
		t.Fatalf("after expiry: %q, %v (refreshes %d)", fresh, err, b.srv.Refreshes())
	}
	if b.srv.Registered() != 1 {
		t.Fatal("a refresh registered the client again")
	}
}
