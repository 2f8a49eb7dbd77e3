package accounts

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// A token endpoint (or a proxy before it) that answers a request it does
// not like with the request itself in error_description echoes the form as
// it was sent: url-encoded. Google's codes ("4/0A...") and refresh tokens
// ("1//0g...") and many client secrets hold characters the encoding
// changes, so taking out only the values as keep holds them leaves them in
// the error keep shows and keeps.
func TestProviderEchoesTheEncodedForm(t *testing.T) {
	t.Parallel()
	b := setup(t)
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]string{"error": "invalid_request", "error_description": "cannot read " + string(body)})
	}))
	t.Cleanup(echo.Close)
	d := oauthDef(b.srv)
	d.TokenURL = echo.URL + "/token"
	s := b.open(t, d)
	const secret = "GOCSPX-se/cr+et=="
	browser := b.srv.Browser()
	err := s.Login(context.Background(), "acme", LoginOpts{Out: browser, ReadSecret: secretReader(secret)})
	if err == nil {
		t.Fatal("the sign-in succeeded")
	}
	if !strings.Contains(err.Error(), "invalid_request") {
		t.Fatalf("the error lost what the provider said: %v", err)
	}
	for _, v := range []string{secret, url.QueryEscape(secret)} {
		if strings.Contains(err.Error(), v) {
			t.Errorf("the sign-in error holds the client secret as %q: %v", v, err)
		}
	}
}
