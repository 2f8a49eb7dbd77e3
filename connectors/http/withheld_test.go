package http_test

import (
	"context"
	"fmt"
	nethttp "net/http"
	"strings"
	"testing"

	"keep/connectors"
	keephttp "keep/connectors/http"
)

// TestSessionCookiesNeverReachTheScript: a Set-Cookie a service hands out
// is a credential, and what a call resolves to is in the script's reach
// and recorded in traces and the ledger. Every way an answer leaves the
// connector (get's result, request's result and failures, a reconcile
// verdict's result) goes without it; other headers stay.
func TestSessionCookiesNeverReachTheScript(t *testing.T) {
	t.Parallel()
	const secret = "s3ss10n-SECRET"
	cookies := func(code int) nethttp.HandlerFunc {
		return func(w nethttp.ResponseWriter, r *nethttp.Request) {
			w.Header().Add("Set-Cookie", "session="+secret+"; HttpOnly")
			w.Header().Add("Set-Cookie", "other="+secret)
			w.Header()["set-cookie2"] = []string{"legacy=" + secret} // as a server may spell it
			w.Header().Set("X-Request-Id", "req-7")
			if code/100 == 3 {
				w.Header().Set("Location", "/elsewhere")
			}
			w.WriteHeader(code)
			fmt.Fprint(w, `{"ok":true}`)
		}
	}
	type call func(c *keephttp.Connector, url string) (any, error)
	doGet := func(c *keephttp.Connector, url string) (any, error) {
		return get(context.Background(), c, map[string]any{"url": url})
	}
	doPost := func(c *keephttp.Connector, url string) (any, error) {
		return post(context.Background(), c, map[string]any{"url": url, "json": map[string]any{"a": 1.0}})
	}
	doReconcile := func(c *keephttp.Connector, url string) (any, error) {
		v, res, err := c.Reconcile(context.Background(), connectors.Call{Method: "request", IdempotencyKey: "mut-42",
			Params: map[string]any{"method": "POST", "url": url, "reconcile": map[string]any{"url": url + "/by-key"}}})
		if err == nil && v != connectors.Applied {
			err = fmt.Errorf("verdict %q", v)
		}
		return res, err
	}
	for _, tc := range []struct {
		name       string
		code       int
		do         call
		wantResult bool
	}{
		{"get's result", 200, doGet, true},
		{"get's result for a 404", 404, doGet, true},
		{"get's failure on a 503", 503, doGet, false},
		{"request's result", 201, doPost, true},
		{"request's refusal", 422, doPost, false},
		{"request's unfollowed redirect", 302, doPost, false},
		{"request's uncertain 500", 500, doPost, false},
		{"a reconcile verdict's result", 200, doReconcile, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newPeer(t, cookies(tc.code))
			res, err := tc.do(connector(t, keephttp.Config{}), p.URL+"/things")
			if tc.wantResult != (err == nil) {
				t.Fatalf("got %v, %v", res, err)
			}
			shown := fmt.Sprintf("%#v %v", res, err)
			if strings.Contains(shown, secret) || strings.Contains(strings.ToLower(shown), "set-cookie") {
				t.Fatalf("a session cookie reached the script: %s", shown)
			}
			if tc.wantResult {
				h := res.(map[string]any)["headers"].(map[string]any)
				if h["x-request-id"] != "req-7" {
					t.Fatalf("headers %v: the other headers should stay", h)
				}
			}
		})
	}
}
