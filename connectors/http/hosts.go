package http

import (
	nethttp "net/http"
	"net/url"
	"strings"

	"keep/connectors"
)

// allowed reports whether u's host is in AllowHosts.
func (c *Connector) allowed(u *url.URL) bool {
	if len(c.allow) == 0 {
		return true
	}
	host, hostport := strings.ToLower(u.Hostname()), strings.ToLower(u.Host)
	for _, a := range c.allow {
		switch {
		case a == host, a == hostport:
			return true
		case strings.HasPrefix(a, "*.") && strings.HasSuffix(host, a[1:]):
			return true
		}
	}
	return false
}

func (c *Connector) notAllowed(u *url.URL) error {
	return connectors.Errorf(connectors.Permission, "host %q is not in http allow_hosts (%s)", u.Host, strings.Join(c.allow, ", "))
}

// maxRedirects matches net/http's own limit.
const maxRedirects = 10

// checkRedirect follows redirects only within AllowHosts and, for a
// mutation, only on the same host: the grant the user gave names the host,
// and a redirect must not carry the change somewhere else. A redirect not
// followed is returned as the response itself.
func (c *Connector) checkRedirect(req *nethttp.Request, via []*nethttp.Request) error {
	first := via[0]
	mutation := first.Method != nethttp.MethodGet && first.Method != nethttp.MethodHead
	if len(via) >= maxRedirects || !c.allowed(req.URL) ||
		(mutation && !strings.EqualFold(req.URL.Host, first.URL.Host)) {
		return nethttp.ErrUseLastResponse
	}
	// a host-held credential goes only where it is bound: not to another
	// host, another port, or the same host over plain http
	if a := c.accountFor(first.URL); a != nil && (c.accountFor(req.URL) != a || !strings.EqualFold(req.URL.Host, first.URL.Host)) {
		req.Header.Del("Authorization")
	}
	return nil
}
