package accounts

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"keep/connectors"
)

// What a token endpoint answers a refresh decides who acts next: a grant
// the provider refused needs the person (Auth, and the account marked so
// no process asks again), anything else passes (Transient) and leaves the
// sign-in alone. What the person is told names what the provider said.
func TestRefreshAnswersClassified(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status      int
		ctype, body string
		class       connectors.Class
		says        string
	}{
		// every refusal RFC 6749 §5.2 names needs the person, and says
		// what they are to do about it
		{400, "application/json", `{"error":"invalid_grant","error_description":"Token has been expired or revoked."}`, connectors.Auth, "(invalid_grant): it expired or was revoked"},
		{401, "application/json", `{"error":"invalid_client"}`, connectors.Auth, "(invalid_client): check client_id"},
		{400, "application/json", `{"error":"invalid_client"}`, connectors.Auth, "in [accounts.acme] of the config"},
		{400, "application/json", `{"error":"unauthorized_client"}`, connectors.Auth, "(unauthorized_client): allow it the refresh_token grant"},
		{400, "application/json", `{"error":"invalid_scope"}`, connectors.Auth, "(invalid_scope: https://mail.example.com/): fix scopes in [accounts.acme]"},
		{400, "application/json", `{"error":"invalid_request","error_description":"Missing parameter"}`, connectors.Auth, "(invalid_request): check token_url and client_id"},
		{400, "application/json", `{"error":"unsupported_grant_type"}`, connectors.Auth, "(unsupported_grant_type): check token_url"},
		// the server's own trouble passes, whatever status it comes with
		{400, "application/json", `{"error":"server_error"}`, connectors.Transient, "server_error"},
		{401, "application/json", `{"error":"temporarily_unavailable"}`, connectors.Transient, "temporarily_unavailable"},
		// a code the RFC does not define may be a passing state: it is
		// retried, within the policy's bound, and named
		{400, "application/json", `{"error":"quota_exceeded"}`, connectors.Transient, "400 Bad Request quota_exceeded"},
		{200, "application/json", `{"error":"invalid_grant"}`, connectors.Auth, "invalid_grant"},
		{401, "text/plain", ``, connectors.Auth, "401 Unauthorized"},
		{400, "application/json", `{"error":"temporarily_unavailable"}`, connectors.Transient, "temporarily_unavailable"},
		// a 400 without an OAuth error code says nothing of the grant
		// (RFC 6749 §5.2): a proxy's page, a body cut short
		{400, "text/html", `<html><body>400 Bad Request (proxy)</body></html>`, connectors.Transient, "400 Bad Request"},
		{400, "text/plain", `Bad Request`, connectors.Transient, "400 Bad Request"},
		{400, "application/json", `{}`, connectors.Transient, "400 Bad Request"},
		{400, "application/json", `{"error":`, connectors.Transient, "400 Bad Request"},
		{400, "application/x-www-form-urlencoded", `error_description=no+code`, connectors.Transient, "400 Bad Request"},
		{503, "application/json", `{"error":"temporarily_unavailable"}`, connectors.Transient, "503"},
		{500, "text/html", `<html>oops</html>`, connectors.Transient, "500"},
		{502, "text/plain", `bad gateway`, connectors.Transient, "502"},
		{429, "application/json", `{"error":"slow_down"}`, connectors.Transient, "429"},
		{200, "text/html", `<html>a captive portal</html>`, connectors.Transient, "json"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d %s", c.status, c.body), func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.loginLoopback(t, b.store)
			provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", c.ctype)
				w.WriteHeader(c.status)
				fmt.Fprint(w, c.body)
			}))
			t.Cleanup(provider.Close)
			d := oauthDef(b.srv)
			d.TokenURL = provider.URL + "/token"
			s := b.open(t, d)
			a, _ := s.Account("acme")
			a.Invalidate()
			_, err := a.Secret(context.Background())
			if connectors.ClassOf(err) != c.class || !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), "()") {
				t.Fatalf("refresh answered %d %s: %v (class %v), want class %v saying %q", c.status, c.body, err, connectors.ClassOf(err), c.class, c.says)
			}
			refused := readCreds(t, b.path).Accounts["acme"].Refused
			if (refused != "") != (c.class == connectors.Auth) {
				t.Fatalf("after %v the account is marked refused: %q", c.class, refused)
			}
		})
	}
}

// A 400 without a code is no refusal: the account stays signed in, the
// error names the endpoint, and the next refresh that gets a token works
// with no sign-in between.
func TestRefreshBadRequestWithoutCodeLeavesTheSignIn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.loginLoopback(t, b.store)
	var proxyDown atomic.Bool
	proxyDown.Store(true)
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if proxyDown.Load() {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"message":"upstream rejected the request"}`)
			return
		}
		fmt.Fprint(w, `{"access_token":"fresh-token","token_type":"Bearer","expires_in":3600}`)
	}))
	t.Cleanup(provider.Close)
	d := oauthDef(b.srv)
	d.TokenURL = provider.URL + "/token?tenant=x"
	s := b.open(t, d)
	a, _ := s.Account("acme")
	a.Invalidate()
	_, err := a.Secret(context.Background())
	if connectors.ClassOf(err) != connectors.Transient || !strings.Contains(err.Error(), provider.URL+"/token:") ||
		strings.Contains(err.Error(), "sign in") || strings.Contains(err.Error(), "tenant=x") {
		t.Fatalf("refresh answered a 400 without a code: %v (class %v), want transient naming %s/token", err, connectors.ClassOf(err), provider.URL)
	}
	if refused := readCreds(t, b.path).Accounts["acme"].Refused; refused != "" {
		t.Fatalf("the account is marked refused: %q", refused)
	}
	proxyDown.Store(false)
	if tok, err := a.Secret(context.Background()); err != nil || tok != "fresh-token" {
		t.Fatalf("once the endpoint answers: %q %v", tok, err)
	}
}
