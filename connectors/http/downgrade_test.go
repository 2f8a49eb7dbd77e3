package http_test

import (
	"context"
	"crypto/tls"
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
	tls443 := httptest.NewTLSServer(count("https"))
	defer tls443.Close()
	plain80 := httptest.NewServer(count("http"))
	defer plain80.Close()
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
