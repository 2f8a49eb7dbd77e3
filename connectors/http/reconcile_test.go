package http_test

import (
	"context"
	"errors"
	"net"
	nethttp "net/http"
	"strings"
	"testing"

	"keep/connectors"
	keephttp "keep/connectors/http"
)

func TestReconcile(t *testing.T) {
	t.Parallel()

	reconcile := func(t *testing.T, c *keephttp.Connector, params map[string]any) (connectors.Verdict, any, error) {
		t.Helper()
		return c.Reconcile(context.Background(), connectors.Call{Method: "request", Params: params, IdempotencyKey: "mut-42"})
	}

	cases := []struct {
		name string
		h    nethttp.HandlerFunc
		want connectors.Verdict
	}{
		{"a 200 from the reconcile URL means applied", status(200), connectors.Applied},
		{"a 404 from the reconcile URL means not applied", status(404), connectors.NotApplied},
		{"a 500 from the reconcile URL means unknown", status(500), connectors.Unknown},
		{"a 403 from the reconcile URL means unknown", status(403), connectors.Unknown},
		{"a reset from the reconcile URL means unknown", hangUp(true), connectors.Unknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newPeer(t, tc.h)
			v, result, err := reconcile(t, connector(t, keephttp.Config{}), map[string]any{
				"method": "POST", "url": p.URL + "/things", "reconcile": map[string]any{"url": p.URL + "/things/by-key"},
			})
			if err != nil || v != tc.want {
				t.Fatalf("verdict %q err %v, want %q", v, err, tc.want)
			}
			if v == connectors.Applied && result.(map[string]any)["json"].(map[string]any)["error"] != "on purpose" {
				t.Fatalf("result %v", result)
			}
			req, _ := p.lastRequest()
			if req.Method != "GET" || req.URL.Path != "/things/by-key" || req.Header.Get("Idempotency-Key") != "mut-42" {
				t.Fatalf("server saw %s %s %v", req.Method, req.URL.Path, req.Header)
			}
		})
	}

	// A redirect's target says nothing of the thing the reconcile URL
	// names: a web app sends a request it won't serve to a sign-in page
	// (200), a site sends what it lost to its front page or a not-found
	// page.
	for _, tc := range []struct {
		name   string
		target int
	}{
		{"a 200 after a redirect means unknown", 200},
		{"a 404 after a redirect means unknown", 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newPeer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) {
				if r.URL.Path == "/things/by-key" {
					nethttp.Redirect(w, r, "/login", nethttp.StatusFound)
					return
				}
				w.WriteHeader(tc.target)
			})
			v, _, err := reconcile(t, connector(t, keephttp.Config{}), map[string]any{
				"method": "POST", "url": p.URL + "/things", "reconcile": map[string]any{"url": p.URL + "/things/by-key"},
			})
			if err != nil || v != connectors.Unknown {
				t.Fatalf("verdict %q err %v, want unknown", v, err)
			}
		})
	}

	t.Run("a refused reconcile URL means unknown", func(t *testing.T) {
		t.Parallel()
		v, _, err := reconcile(t, connector(t, keephttp.Config{}), map[string]any{
			"url": "http://" + closedAddr(t) + "/", "reconcile": map[string]any{"url": "http://" + closedAddr(t) + "/"},
		})
		if err != nil || v != connectors.Unknown {
			t.Fatalf("verdict %q err %v", v, err)
		}
	})

	t.Run("without a reconcile URL it cannot check", func(t *testing.T) {
		t.Parallel()
		_, _, err := reconcile(t, connector(t, keephttp.Config{}), map[string]any{"url": "http://example.test/"})
		if !errors.Is(err, connectors.ErrCannotCheck) {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("the request's headers go along only to the same host", func(t *testing.T) {
		t.Parallel()
		p := newPeer(t, status(200))
		c := connector(t, keephttp.Config{})
		hdr := map[string]any{"Authorization": "Bearer t0k", "Content-Type": "application/json"}
		reconcile(t, c, map[string]any{"url": p.URL + "/a", "headers": hdr, "reconcile": map[string]any{"url": p.URL + "/b"}})
		req, _ := p.lastRequest()
		if req.Header.Get("Authorization") != "Bearer t0k" || req.Header.Get("Content-Type") != "" {
			t.Fatalf("same host saw %v", req.Header)
		}
		reconcile(t, c, map[string]any{"url": "http://other.test/a", "headers": hdr, "reconcile": map[string]any{"url": p.URL + "/b"}})
		if req, _ := p.lastRequest(); req.Header.Get("Authorization") != "" {
			t.Fatalf("another host saw %v", req.Header)
		}
	})

	// Headers the script set on an https request (an API key of its own)
	// went to a plain http reconcile URL on the same host and port, in the
	// clear: the host and port matched, and the scheme was not looked at.
	t.Run("the request's headers do not go along to another scheme on the same host and port", func(t *testing.T) {
		t.Parallel()
		p := newPeer(t, status(200))
		hostport := strings.TrimPrefix(p.URL, "http://")
		hdr := map[string]any{"X-Api-Key": "script-key"}
		reconcile(t, connector(t, keephttp.Config{}), map[string]any{
			"url": "https://" + hostport + "/a", "headers": hdr, "reconcile": map[string]any{"url": p.URL + "/b"}})
		req, _ := p.lastRequest()
		if req == nil || req.URL.Path != "/b" {
			t.Fatalf("the reconcile GET did not arrive: %v", req)
		}
		if got := req.Header.Get("X-Api-Key"); got != "" {
			t.Fatalf("plain http saw the https request's X-Api-Key %q", got)
		}
	})

	t.Run("a URL that names its scheme's default port is on the same origin as one that does not", func(t *testing.T) {
		t.Parallel()
		p := newPeer(t, status(200))
		hostport := strings.TrimPrefix(p.URL, "http://")
		// the peer answers for both spellings, as one server would
		tr := &nethttp.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, hostport)
		}}
		c := connector(t, keephttp.Config{Client: &nethttp.Client{Transport: tr}})
		reconcile(t, c, map[string]any{"url": "http://API.example.test:80/a", "headers": map[string]any{"X-Api-Key": "script-key"},
			"reconcile": map[string]any{"url": "http://api.example.test/b"}})
		if req, _ := p.lastRequest(); req == nil || req.Header.Get("X-Api-Key") != "script-key" {
			t.Fatalf("the same origin, spelled otherwise, did not get the request's headers: %v", req)
		}
	})

	t.Run("a reconcile URL outside allow_hosts is a permission error", func(t *testing.T) {
		t.Parallel()
		c := connector(t, keephttp.Config{AllowHosts: []string{"api.example.com"}})
		v, _, err := reconcile(t, c, map[string]any{"url": "https://api.example.com/", "reconcile": map[string]any{"url": "https://evil.test/"}})
		if v != connectors.Unknown || connectors.ClassOf(err) != connectors.Permission {
			t.Fatalf("verdict %q err %v", v, err)
		}
	})
}
