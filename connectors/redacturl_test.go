package connectors_test

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"keep/connectors"
)

func TestRedactURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://host/path?token=abc":               "https://host/path?token=REDACTED",
		"https://user:pw@host/p?a=1&b=2#access=tok": "https://host/p?a=REDACTED&b=REDACTED",
		"https://TOKEN@github.com/o/r.git":          "https://github.com/o/r.git",
		"https://host/p?SECRET":                     "https://host/p?REDACTED",
		"https://host/p?a=&&b":                      "https://host/p?a=REDACTED&&REDACTED",
		"https://host:8443/plain":                   "https://host:8443/plain",
		"/relative?code=xyz":                        "/relative?code=REDACTED",
		"file:///etc/passwd?token=abc":              "file:///etc/passwd?token=REDACTED",
		"http://us er:pw@ho st/p?key=SECRET#frag":   "http://ho st/p?REDACTED",
		"http://u:p/w@h/%zz?key=SECRET":             "http://h/%zz?REDACTED",
		"::not a url?key=SECRET":                    "::not a url?REDACTED",
	} {
		if got := connectors.RedactURLText(in); got != want {
			t.Errorf("RedactURLText(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestShownURL: a preview shows the query a person approves, and never
// the userinfo, whether it holds a password or a token as the username.
func TestShownURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://TOKEN@github.com/o/r.git":                "https://REDACTED@github.com/o/r.git",
		"https://user:pw@host/p?api_key=k&id=42#access=t": "https://REDACTED@host/p?api_key=k&id=42",
		"https://host:8443/plain?delete=all":              "https://host:8443/plain?delete=all",
	} {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := connectors.ShownURL(u); got != want {
			t.Errorf("ShownURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestTransportErrorsDoNotQuoteAQuery: net/http wraps a failed request as
// `Get "URL": …`, the URL whole; one that carries ?api_key=… in its query
// (or a token as its userinfo) put the key in the error, hence the ledger
// and the log. Every error Transport returns quotes the URL redacted, and
// is still the *url.Error it was.
func TestTransportErrorsDoNotQuoteAQuery(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now

	const secret = "k3y-SECRET"
	req, _ := http.NewRequest(http.MethodGet, "http://"+secret+"-user:"+secret+"-pw@"+addr+"/v1?api_key="+secret, nil)
	_, _, err = (&connectors.Transport{Client: &http.Client{Transport: &http.Transport{}}}).Do(req)
	if err == nil {
		t.Fatal("a request to a closed port succeeded")
	}
	if strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "api_key=REDACTED") {
		t.Fatalf("error %q: want the URL quoted with the key redacted", err)
	}
	var ue *url.Error
	var op *net.OpError
	if !errors.As(err, &ue) || !errors.As(err, &op) {
		t.Fatalf("error %T %v: the chain should still hold the *url.Error and the dial's *net.OpError", err, err)
	}
}

// TestTransportErrorsDoNotQuoteALocation: a redirect's Location is the
// server's to choose, and often carries a code or a token: neither the
// 401 an account cannot get past, nor a redirect keep will not follow, nor
// one net/http cannot parse, quotes its query.
func TestTransportErrorsDoNotQuoteALocation(t *testing.T) {
	t.Parallel()
	const secret = "t0ken-SECRET"
	for _, tc := range []struct {
		name string
		acct connectors.Account
		h    http.HandlerFunc
	}{
		{"a 401 to the account's credential", &account{kind: "token", secrets: []string{"tok"}},
			func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusUnauthorized) }},
		{"a redirect to another scheme", nil, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "file:///etc/passwd?token="+secret)
			w.WriteHeader(http.StatusFound)
		}},
		{"a Location net/http cannot parse", nil, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "/next/%zz?token="+secret)
			w.WriteHeader(http.StatusFound)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := httptest.NewServer(tc.h)
			t.Cleanup(ts.Close)
			req, _ := http.NewRequest(http.MethodGet, ts.URL+"/start?token="+secret, nil)
			resp, _, err := (&connectors.Transport{Client: ts.Client(), Account: tc.acct}).Do(req)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("status %d, want a failure", resp.StatusCode)
			}
			if strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "token=REDACTED") {
				t.Fatalf("error %q: want every URL quoted with its token redacted", err)
			}
		})
	}
}
