package accounts

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Token refreshes, code exchanges and an MCP server's discovery and client
// registration go out on the store's own client when the caller gives
// none. Over HTTP/2, net/http sends a request again by itself when the
// server resets its stream with PROTOCOL_ERROR (connectors.NewHTTPTransport
// says why that is no promise the server did nothing), and a refresh sent
// again can spend a rotating refresh token twice. So the store's client
// speaks HTTP/1.1, as every connector's does.
func TestTokenRequestsAreSentOverHTTP1(t *testing.T) {
	s, err := Open(nil, Opts{})
	if err != nil {
		t.Fatal(err)
	}
	var got string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Proto
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()

	rt := s.client.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	tr, ok := rt.(*http.Transport)
	if !ok {
		t.Fatalf("the store's client sends with %T, not a *http.Transport", rt)
	}
	// the same transport, trusting the test's certificate
	tr = tr.Clone()
	if tr.TLSClientConfig == nil {
		tr.TLSClientConfig = &tls.Config{}
	}
	tr.TLSClientConfig.RootCAs = srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Post(srv.URL+"/token", "application/x-www-form-urlencoded", strings.NewReader("grant_type=refresh_token"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got != "HTTP/1.1" {
		t.Errorf("a token request went out as %s, want HTTP/1.1", got)
	}
}
