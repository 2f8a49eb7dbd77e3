package http_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"keep/connectors"
	keephttp "keep/connectors/http"
)

// A mutation's 307 or 308 is not followed from https down to plain http: a redirect
// from https to plain http on the same host would send its body and its
// Idempotency-Key in the clear, so it is not followed (the 3xx comes back,
// an uncertain outcome). The other way, plain http moved up to https on
// the same host, is followed as before.
func TestAMutationIsNotRedirectedToPlainHTTP(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	posts := map[string]int{}
	count := func(where string) nethttp.HandlerFunc {
		return func(w nethttp.ResponseWriter, r *nethttp.Request) {
			mu.Lock()
			posts[where+" "+r.URL.Path]++
			mu.Unlock()
			switch r.URL.Path {
			case "/down":
				nethttp.Redirect(w, r, "http://example.com/landed", nethttp.StatusTemporaryRedirect)
			case "/up":
				nethttp.Redirect(w, r, "https://example.com/landed", nethttp.StatusPermanentRedirect)
			default:
				w.WriteHeader(nethttp.StatusCreated)
			}
		}
	}
	c := exampleCom(t, count)
	post := func(url string) (any, error) {
		return c.Do(context.Background(), connectors.Call{Method: "request", IdempotencyKey: "mut-7",
			Params: map[string]any{"method": "POST", "url": url, "json": map[string]any{"secret": "in the body"}}})
	}

	post("https://example.com/down")
	mu.Lock()
	clear := posts["http /landed"]
	mu.Unlock()
	if clear != 0 {
		t.Errorf("a POST over https was sent again over plain http after a 307 (%d times)", clear)
	}

	if _, err := post("http://example.com/up"); err != nil {
		t.Fatalf("a POST moved up to https: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if posts["https /landed"] != 1 {
		t.Errorf("a POST moved from http to https on the same host was not followed: %v", posts)
	}
}

// Nor is a GET: the headers a script sets on it (an API key of its own)
// go along on a redirect, and from https down to plain http they would go
// in the clear. The redirect comes back as the answer, for the script to
// judge; plain http moved up to https is followed.
func TestAGetIsNotRedirectedToPlainHTTP(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	got := map[string]string{}
	serve := func(where string) nethttp.HandlerFunc {
		return func(w nethttp.ResponseWriter, r *nethttp.Request) {
			mu.Lock()
			got[where+" "+r.URL.Path] = r.Header.Get("X-Api-Key")
			mu.Unlock()
			switch r.URL.Path {
			case "/down":
				nethttp.Redirect(w, r, "http://example.com/landed", nethttp.StatusFound)
			case "/up":
				nethttp.Redirect(w, r, "https://example.com/landed", nethttp.StatusFound)
			default:
				w.WriteHeader(nethttp.StatusOK)
			}
		}
	}
	c := exampleCom(t, serve)
	get := func(url string) (any, error) {
		return c.Do(context.Background(), connectors.Call{Method: "get",
			Params: map[string]any{"url": url, "headers": map[string]any{"X-Api-Key": "the script's own key"}}})
	}
	res, err := get("https://example.com/down")
	if err != nil {
		t.Fatalf("a GET redirected down to plain http: %v", err)
	}
	mu.Lock()
	_, landed := got["http /landed"]
	mu.Unlock()
	if landed {
		t.Errorf("a GET over https was sent again over plain http, its headers in the clear")
	}
	if st := fmt.Sprint(res.(map[string]any)["status"]); st != "302" {
		t.Errorf("the redirect not followed came back as %s, want its 302", st)
	}
	if _, err := get("http://example.com/up"); err != nil {
		t.Fatalf("a GET moved up to https: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if _, ok := got["https /landed"]; !ok {
		t.Errorf("a GET moved from http to https on the same host was not followed: %v", got)
	}
}

// exampleCom is an http connector that reaches example.com on this
// machine: https on 443 and plain http on 80, each served by handler
// (given "https" or "http"), off this machine as far as keep can tell
// (example.com is no loopback name).
func exampleCom(t *testing.T, handler func(where string) nethttp.HandlerFunc) *keephttp.Connector {
	t.Helper()
	tls443 := httptest.NewTLSServer(handler("https"))
	t.Cleanup(tls443.Close)
	plain80 := httptest.NewServer(handler("http"))
	t.Cleanup(plain80.Close)
	addr := map[string]string{"example.com:443": tls443.Listener.Addr().String(), "example.com:80": plain80.Listener.Addr().String()}
	tr := tls443.Client().Transport.(*nethttp.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: tr.TLSClientConfig.RootCAs} // the test certificate names example.com
	tr.DialContext = func(ctx context.Context, network, a string) (net.Conn, error) {
		if to, ok := addr[a]; ok {
			a = to
		}
		return (&net.Dialer{}).DialContext(ctx, network, a)
	}
	c, err := keephttp.New(keephttp.Config{Client: &nethttp.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
