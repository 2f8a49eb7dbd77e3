package http_test

import (
	"context"
	"errors"
	nethttp "net/http"
	"strings"
	"testing"
	"time"

	"keep/connectors"
	keephttp "keep/connectors/http"
)

// failure is one way a call can go wrong, set up against a real peer.
type failure struct {
	name string
	// url returns the URL to call; cfg may be adjusted.
	url func(t *testing.T, cfg *keephttp.Config) string
	// ctxTimeout, if set, is the caller's own deadline.
	ctxTimeout time.Duration
}

func serve(h nethttp.HandlerFunc) func(t *testing.T, cfg *keephttp.Config) string {
	return func(t *testing.T, cfg *keephttp.Config) string { return newPeer(t, h).URL + "/things" }
}

var (
	slowPastTimeout = func(t *testing.T, cfg *keephttp.Config) string {
		cfg.Timeout = 150 * time.Millisecond
		return newPeer(t, slow).URL
	}
	refused = func(t *testing.T, cfg *keephttp.Config) string { return "http://" + closedAddr(t) + "/" }
	noDNS   = func(t *testing.T, cfg *keephttp.Config) string {
		cfg.Timeout = time.Second
		return "http://keep-test.invalid/"
	}
	tlsHang = func(t *testing.T, cfg *keephttp.Config) string {
		cfg.Timeout = 150 * time.Millisecond
		return "https://" + silentAddr(t) + "/"
	}
	notAllowed = func(t *testing.T, cfg *keephttp.Config) string {
		p := newPeer(t, status(200))
		cfg.AllowHosts = []string{"api.example.com"}
		t.Cleanup(func() {
			if p.hits.Load() != 0 {
				t.Error("a host outside allow_hosts was called")
			}
		})
		return p.URL
	}
)

// TestRequestFailureClasses is the outcome mapping of DESIGN §6 and §7.3
// for the mutation.
func TestRequestFailureClasses(t *testing.T) {
	t.Parallel()

	cases := []struct {
		failure
		want       connectors.Class
		retryAfter time.Duration
	}{
		{failure{name: "a 400 is a definite refusal", url: serve(status(400))}, connectors.Logic, 0},
		{failure{name: "a 404 is a definite refusal", url: serve(status(404))}, connectors.Logic, 0},
		{failure{name: "a 408 is transient", url: serve(status(408))}, connectors.Transient, 0},
		{failure{name: "a 429 is transient with its Retry-After", url: serve(status(429, "Retry-After", "7"))}, connectors.Transient, 7 * time.Second},
		{failure{name: "a 503 is transient with its Retry-After", url: serve(status(503, "Retry-After", "3"))}, connectors.Transient, 3 * time.Second},
		{failure{name: "a 500 is uncertain", url: serve(status(500))}, connectors.Uncertain, 0},
		{failure{name: "a 502 is uncertain", url: serve(status(502))}, connectors.Uncertain, 0},
		{failure{name: "a 504 is uncertain", url: serve(status(504))}, connectors.Uncertain, 0},
		{failure{name: "a redirect to another host is uncertain", url: serve(status(303, "Location", "http://elsewhere.test/"))}, connectors.Uncertain, 0},
		{failure{name: "no answer before the timeout is uncertain", url: slowPastTimeout}, connectors.Uncertain, 0},
		{failure{name: "the caller's deadline after sending is uncertain", url: serve(slow), ctxTimeout: 150 * time.Millisecond}, connectors.Uncertain, 0},
		{failure{name: "a hang-up after the request was read is uncertain", url: serve(hangUp(false))}, connectors.Uncertain, 0},
		{failure{name: "a reset after the request was read is uncertain", url: serve(hangUp(true))}, connectors.Uncertain, 0},
		{failure{name: "a refused connection is transient", url: refused}, connectors.Transient, 0},
		{failure{name: "a name that does not resolve is transient", url: noDNS}, connectors.Transient, 0},
		{failure{name: "a timeout during the TLS handshake is transient", url: tlsHang}, connectors.Transient, 0},
		{failure{name: "a host outside allow_hosts is a permission error", url: notAllowed}, connectors.Permission, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var cfg keephttp.Config
			u := tc.url(t, &cfg)
			c := connector(t, cfg)
			ctx := context.Background()
			if tc.ctxTimeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctxTimeout)
				defer cancel()
			}
			_, err := post(ctx, c, map[string]any{"url": u, "json": map[string]any{"a": 1.0}})
			t.Log(err)
			var ce *connectors.Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *connectors.Error", err)
			}
			if ce.Class != tc.want || ce.RetryAfter != tc.retryAfter {
				t.Fatalf("class %q retry after %v (%v), want %q %v", ce.Class, ce.RetryAfter, err, tc.want, tc.retryAfter)
			}
		})
	}

	for _, tc := range []struct {
		name   string
		params map[string]any
	}{
		{"a method that does not mutate is a logic error", map[string]any{"method": "GET"}},
		{"json and body together are a logic error", map[string]any{"json": "x", "body": "y"}},
		{"a body that is not a string is a logic error", map[string]any{"body": 3.0}},
		{"a header that is not a string is a logic error", map[string]any{"headers": map[string]any{"X": 1.0}}},
		{"a URL that is not http is a logic error", map[string]any{"url": "file:///etc/passwd"}},
		{"a bad reconcile URL is a logic error before anything is sent", map[string]any{"reconcile": map[string]any{"url": "nope"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newPeer(t, status(200))
			params := map[string]any{"url": p.URL}
			for k, v := range tc.params {
				params[k] = v
			}
			_, err := post(context.Background(), connector(t, keephttp.Config{}), params)
			if connectors.ClassOf(err) != connectors.Logic || p.hits.Load() != 0 {
				t.Fatalf("got %v after %d hits", err, p.hits.Load())
			}
		})
	}
}

// TestGetFailureClasses: a read is never uncertain; what it cannot use is
// transient, and any other answer is the script's result.
func TestGetFailureClasses(t *testing.T) {
	t.Parallel()

	cases := []struct {
		failure
		want connectors.Class // "" for a result
	}{
		{failure{name: "a 400 is a result", url: serve(status(400))}, ""},
		{failure{name: "a 404 is a result", url: serve(status(404))}, ""},
		{failure{name: "a 408 is a result", url: serve(status(408))}, ""},
		{failure{name: "a 429 is transient", url: serve(status(429, "Retry-After", "7"))}, connectors.Transient},
		{failure{name: "a 500 is transient", url: serve(status(500))}, connectors.Transient},
		{failure{name: "a 502 is transient", url: serve(status(502))}, connectors.Transient},
		{failure{name: "a 503 is transient", url: serve(status(503))}, connectors.Transient},
		{failure{name: "a 504 is transient", url: serve(status(504))}, connectors.Transient},
		{failure{name: "no answer before the timeout is transient", url: slowPastTimeout}, connectors.Transient},
		{failure{name: "the caller's deadline is transient", url: serve(slow), ctxTimeout: 150 * time.Millisecond}, connectors.Transient},
		{failure{name: "a reset is transient", url: serve(hangUp(true))}, connectors.Transient},
		{failure{name: "a refused connection is transient", url: refused}, connectors.Transient},
		{failure{name: "a host outside allow_hosts is a permission error", url: notAllowed}, connectors.Permission},
		{failure{name: "a body over the cap is a logic error", url: func(t *testing.T, cfg *keephttp.Config) string {
			cfg.MaxBody = 10
			return newPeer(t, status(200)).URL
		}}, connectors.Logic},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var cfg keephttp.Config
			u := tc.url(t, &cfg)
			c := connector(t, cfg)
			ctx := context.Background()
			if tc.ctxTimeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctxTimeout)
				defer cancel()
			}
			got, err := get(ctx, c, map[string]any{"url": u})
			if class := connectors.ClassOf(err); class != tc.want {
				t.Fatalf("class %q (%v), want %q", class, err, tc.want)
			}
			if tc.want == "" && got.(map[string]any)["json"].(map[string]any)["error"] != "on purpose" {
				t.Fatalf("result %v", got)
			}
		})
	}

	t.Run("a deadline keeps context.DeadlineExceeded in the chain", func(t *testing.T) {
		t.Parallel()
		c := connector(t, keephttp.Config{Timeout: 100 * time.Millisecond})
		_, err := get(context.Background(), c, map[string]any{"url": newPeer(t, slow).URL})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("errors never show a password from the URL", func(t *testing.T) {
		t.Parallel()
		_, err := get(context.Background(), connector(t, keephttp.Config{}),
			map[string]any{"url": "http://bob:hunter2@" + closedAddr(t) + "/"})
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Fatalf("got %v", err)
		}
	})
}
