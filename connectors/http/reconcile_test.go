package http_test

import (
	"context"
	"errors"
	nethttp "net/http"
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

	t.Run("a reconcile URL outside allow_hosts is a permission error", func(t *testing.T) {
		t.Parallel()
		c := connector(t, keephttp.Config{AllowHosts: []string{"api.example.com"}})
		v, _, err := reconcile(t, c, map[string]any{"url": "https://api.example.com/", "reconcile": map[string]any{"url": "https://evil.test/"}})
		if v != connectors.Unknown || connectors.ClassOf(err) != connectors.Permission {
			t.Fatalf("verdict %q err %v", v, err)
		}
	})
}
