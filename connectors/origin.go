package connectors

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Origin is where a credential may go: a scheme, a host and a port. A
// credential is bound to all three: another port on the same name is
// another service, and plain http hands it to anyone on the path.
type Origin struct {
	Scheme, Host, Port string // lower-case; Port filled in from the scheme
}

// OriginOf is u's origin.
func OriginOf(u *url.URL) Origin {
	o := Origin{Scheme: strings.ToLower(u.Scheme), Host: strings.ToLower(u.Hostname()), Port: u.Port()}
	if o.Port == "" {
		o.Port = DefaultPort(o.Scheme)
	}
	return o
}

// Admits reports whether a credential bound to o may go to u.
func (o Origin) Admits(u *url.URL) bool { return OriginOf(u) == o }

func (o Origin) String() string { return o.Scheme + "://" + net.JoinHostPort(o.Host, o.Port) }

// DefaultPort is the port a URL of scheme means without one.
func DefaultPort(scheme string) string {
	switch scheme {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}

// Loopback reports whether host is this machine, where plain http never
// leaves it.
func Loopback(host string) bool {
	host = strings.ToLower(strings.Trim(host, "[]"))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// inClear reports whether a credential sent to u would cross the network
// unencrypted.
func inClear(u *url.URL) bool {
	return !strings.EqualFold(u.Scheme, "https") && !Loopback(u.Hostname())
}

// clearRefused is the error of a credential that would go out in clear:
// nothing was sent.
func clearRefused(a Account, u *url.URL) *Error {
	return &Error{Class: Permission, NotSent: true, Err: fmt.Errorf(
		"refusing to send the credentials of account %s to %s over plain http: anyone on the way could read them (use https; plain http is for this machine only)",
		a.Name(), RedactURL(u))}
}

// Signed is the http.RoundTripper for a client whose every request carries
// an account's credential (an MCP server over HTTP): it puts the credential
// on requests to the endpoint's origin only, so a redirect to another host,
// port or scheme reaches it without, and answers a 401 by invalidating the
// secret (an oauth2 token refreshes for the next request).
type Signed struct {
	base    http.RoundTripper
	account Account
	origin  Origin
}

// NewSigned is base signing for a at endpoint's origin; it refuses an
// endpoint over plain http other than this machine before anything is sent.
func NewSigned(base http.RoundTripper, a Account, endpoint string) (*Signed, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("endpoint %q: %w", endpoint, err)
	}
	if inClear(u) {
		return nil, clearRefused(a, u)
	}
	return &Signed{base: base, account: a, origin: OriginOf(u)}, nil
}

func (s *Signed) RoundTrip(req *http.Request) (*http.Response, error) {
	req = sendOnce(req.Clone(req.Context()))
	unsign(req)
	if !s.origin.Admits(req.URL) {
		return s.base.RoundTrip(req)
	}
	if err := Authorize(req.Context(), req, s.account); err != nil {
		return nil, err
	}
	resp, err := s.base.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		s.account.Invalidate()
	}
	return resp, err
}

// unsign takes a credential off a request bound elsewhere.
func unsign(req *http.Request) {
	req.Header.Del("Authorization")
	req.Header.Del("Proxy-Authorization")
}

// boundRedirects is client with a redirect policy that keeps a mutation
// what it is and drops the credential on a hop to another origin than the
// first request's, before the client's own policy (or net/http's limit of
// ten) decides whether to follow.
//
// net/http answers a 301, 302 or 303 to a POST, PUT, PATCH or DELETE by
// following it with a GET, and hands back the GET's answer as if it were
// the mutation's: a server that moved (POST /items → 301 /items/, http →
// https) did nothing, and its 200 to the GET read as done. Such a redirect
// is not followed: the caller gets the 3xx, an uncertain outcome
// (Classify). A 307 or 308 is followed: it sends the same method and body
// again, which the server asks for because it did not act on the first.
//
// No request is followed from https down to plain http off this machine
// (downgraded): a mutation's body, and any request's headers (a key the
// script set itself goes along on a redirect, and only Authorization and
// cookies are dropped by net/http), would go in the clear. The 3xx comes
// back instead.
//
// A redirect to anything but http or https (file://, unix://, a Location
// without a host) is a Logic failure naming where it led and what sent
// it there: net/http would fail it as an unsupported scheme, an error
// like a dropped connection's, and the call be retried for ever against
// an answer that will not change.
func boundRedirects(client *http.Client) *http.Client {
	c := *client
	if c.Transport == nil {
		c.Transport = defaultTransport
	}
	own := client.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.Method != via[0].Method {
			return http.ErrUseLastResponse
		}
		if err := unfollowable(req, via); err != nil {
			return err
		}
		if downgraded(via[len(via)-1].URL, req.URL) {
			return http.ErrUseLastResponse
		}
		if !OriginOf(via[0].URL).Admits(req.URL) {
			unsign(req)
		}
		if own != nil {
			return own(req, via)
		}
		if len(via) >= 10 {
			return fmt.Errorf("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}

// downgraded says whether a redirect from from to to leaves https for
// plain http to another machine (plain http to loopback never leaves this
// one).
func downgraded(from, to *url.URL) bool {
	return strings.EqualFold(from.Scheme, "https") && strings.EqualFold(to.Scheme, "http") && !Loopback(to.Hostname())
}

// BoundClient is client with keep's redirect rules (boundRedirects), for a
// client a library drives itself (MCP's HTTP sessions): every request keep
// sends to a service follows redirects the same way, whoever sends it.
func BoundClient(client *http.Client) *http.Client { return boundRedirects(client) }

// unfollowable is the Logic failure of a redirect to req that keep cannot
// follow, else nil.
func unfollowable(req *http.Request, via []*http.Request) *Error {
	scheme := strings.ToLower(req.URL.Scheme)
	if (scheme == "http" || scheme == "https") && req.URL.Host != "" {
		return nil
	}
	from := via[len(via)-1]
	status := "a redirect"
	if req.Response != nil {
		status = req.Response.Status
	}
	why := fmt.Sprintf("keep follows redirects to http and https only, not %q", req.URL.Scheme)
	if scheme == "http" || scheme == "https" {
		why = "the address has no host"
	}
	return &Error{Class: Logic, Err: fmt.Errorf("%s %s answered %s to %s: %s",
		from.Method, RedactURL(from.URL), status, RedactURL(req.URL), why)}
}

// ensure Signed stays a RoundTripper
var _ http.RoundTripper = (*Signed)(nil)

// KeyAccount is a key the host holds outside the accounts store (an LLM
// endpoint's API key from the environment) as a token Account, so it goes
// through Transport on the same rules as every other credential.
type KeyAccount struct{ Label, Value string }

func (k KeyAccount) Name() string                           { return k.Label }
func (KeyAccount) Kind() string                             { return "token" }
func (KeyAccount) Username() string                         { return "" }
func (k KeyAccount) Secret(context.Context) (string, error) { return k.Value, nil }
func (KeyAccount) Invalidate()                              {}
