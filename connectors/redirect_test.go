package connectors_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"keep/connectors"
)

// TestRedirectToAnotherScheme: a server that redirects to file:// or
// unix:// has answered, and will answer the same again; net/http fails the
// hop as an unsupported scheme, an error like a dropped connection's, which
// was classed transient and retried for ever. It is a logic failure that
// says where the redirect led and which request was sent there.
func TestRedirectToAnotherScheme(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		method   string
		code     int
		location string
		acct     connectors.Account
		want     []string
	}{
		{"a GET sent to file:// is a logic failure", http.MethodGet, http.StatusFound, "file:///etc/passwd", nil,
			[]string{`"file"`, "file:///etc/passwd", "302 Found"}},
		{"a GET sent to unix:// is one too", http.MethodGet, http.StatusMovedPermanently, "unix:///var/run/docker.sock", nil,
			[]string{`"unix"`, "unix:///var/run/docker.sock", "301 Moved Permanently"}},
		{"with an account's credential on the request too", http.MethodGet, http.StatusFound, "file:///etc/passwd",
			&account{kind: "token", secrets: []string{"tok"}}, []string{`"file"`, "file:///etc/passwd"}},
		// a 307 asks for the same POST elsewhere: the server did not act,
		// so it is not the uncertain outcome of a POST cut off unanswered
		{"a POST sent on by 307 to file:// is a logic failure, not uncertain", http.MethodPost, http.StatusTemporaryRedirect, "file:///etc/passwd", nil,
			[]string{`"file"`, "POST"}},
		{"a Location with no host is one too", http.MethodGet, http.StatusFound, "http:///nowhere", nil,
			[]string{"no host", "http:///nowhere"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var hits atomic.Int32
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				w.Header().Set("Location", tc.location)
				w.WriteHeader(tc.code)
			}))
			t.Cleanup(ts.Close)
			req, _ := http.NewRequest(tc.method, ts.URL+"/feed.xml", strings.NewReader("payload"))
			tr := &connectors.Transport{Client: ts.Client(), Account: tc.acct}
			resp, sent, err := tr.Do(req)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("status %d, want a failure", resp.StatusCode)
			}
			if _, ok := err.(*connectors.Error); !ok {
				t.Errorf("err is a %T, not the policy's *Error itself: %v", err, err)
			}
			x := connectors.Exchange{Err: err, Sent: sent, Mutation: tc.method != http.MethodGet, Credential: tc.acct != nil}
			e := connectors.Failure(x, 0, err)
			if e.Class != connectors.Logic {
				t.Fatalf("class %q (%v), want logic", e.Class, err)
			}
			for _, w := range append(tc.want, ts.URL+"/feed.xml") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not say %q", err, w)
				}
			}
			if n := hits.Load(); n != 1 {
				t.Errorf("the server was asked %d times", n)
			}
		})
	}
}
