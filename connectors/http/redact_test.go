package http_test

import (
	"context"
	nethttp "net/http"
	"strings"
	"testing"

	keephttp "keep/connectors/http"
)

// TestErrorsDoNotQuoteAURLsSecrets: an error is written to the ledger and
// the log, so the URL it names is redacted: no userinfo (a token often
// rides there), no query value (api_key=…), whether it is the URL the
// script asked for, one net/http quotes in its own error, or the Location
// of a redirect keep did not follow.
func TestErrorsDoNotQuoteAURLsSecrets(t *testing.T) {
	t.Parallel()
	const secret = "k3y-SECRET"
	redirect := func(code int, loc string) nethttp.HandlerFunc {
		return func(w nethttp.ResponseWriter, r *nethttp.Request) {
			w.Header().Set("Location", loc)
			w.WriteHeader(code)
		}
	}
	withKey := func(base string) string {
		return strings.Replace(base, "://", "://"+secret+"@", 1) + "/v1/items?api_key=" + secret + "&page=2"
	}
	closed := func(t *testing.T) string { return "http://" + closedAddr(t) }
	served := func(h nethttp.HandlerFunc) func(t *testing.T) string {
		return func(t *testing.T) string { return newPeer(t, h).URL }
	}
	for _, tc := range []struct {
		name   string
		base   func(t *testing.T) string
		method string // "" for get
		url    func(base string) string
		want   string // what the error still says
	}{
		{"a GET to a closed port", closed, "", withKey, "api_key=REDACTED&page=REDACTED"},
		{"a POST to a closed port", closed, "POST", withKey, "api_key=REDACTED"},
		{"a GET answered 503", served(status(503)), "", withKey, "api_key=REDACTED"},
		{"a POST answered 422", served(status(422)), "POST", withKey, "api_key=REDACTED"},
		{"a POST cut off", served(hangUp(false)), "POST", withKey, "api_key=REDACTED"},
		{"a POST redirected elsewhere", served(redirect(nethttp.StatusFound, "https://elsewhere.example/cb?token="+secret)), "POST",
			func(b string) string { return b + "/items" }, "https://elsewhere.example/cb?token=REDACTED"},
		{"a GET redirected to a Location net/http cannot parse", served(redirect(nethttp.StatusFound, "/next/%zz?token="+secret)), "",
			func(b string) string { return b + "/items" }, `"/next/%zz?REDACTED"`},
		{"a url parameter that does not parse", closed, "",
			func(b string) string { return "http://exa mple.com/?api_key=" + secret }, "url is not a URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := connector(t, keephttp.Config{})
			u := tc.url(tc.base(t))
			var err error
			if tc.method == "" {
				_, err = get(context.Background(), c, map[string]any{"url": u})
			} else {
				_, err = post(context.Background(), c, map[string]any{"method": tc.method, "url": u, "body": "x"})
			}
			if err == nil {
				t.Fatal("want a failure")
			}
			if strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q: want it to say %q and never the secret", err, tc.want)
			}
		})
	}
}
