package http

import (
	"fmt"
	nethttp "net/http"
	"net/url"
	"strings"

	"keep/connectors"
)

// allowEntry is one allow_hosts entry, canonical (canonicalHost).
type allowEntry struct {
	written  string // as configured, for messages
	host     string // for a wildcard, the domain under which any name is allowed
	wildcard bool   // "*.example.com": the names under example.com, not itself
	port     string // "" allows any port
}

// parseAllow reads an allow_hosts entry: "example.com" (any port),
// "example.com:8443" (that port only), "*.example.com" (any subdomain),
// an IP address ("10.0.0.2", "[::1]:8080"). Case, one trailing dot and
// Unicode or punycode are spellings of the same name.
func parseAllow(s string) (allowEntry, error) {
	e := allowEntry{written: s}
	fail := func(why string) (allowEntry, error) {
		return e, fmt.Errorf("allow_hosts entry %q: %s (write example.com, example.com:8443 or *.example.com)", s, why)
	}
	rest := strings.TrimSpace(s)
	if strings.ContainsAny(rest, "/?#@ \t") {
		return fail("not a host name")
	}
	if r, ok := strings.CutPrefix(rest, "*."); ok {
		e.wildcard, rest = true, r
	}
	if strings.Contains(rest, "*") {
		return fail("a * stands only for the names under a domain, first")
	}
	host, port := rest, ""
	switch {
	case strings.HasPrefix(rest, "["): // [::1] or [::1]:8080
		h, p, ok := strings.Cut(rest[1:], "]")
		if !ok || (p != "" && !strings.HasPrefix(p, ":")) {
			return fail("not a host name")
		}
		host, port = h, strings.TrimPrefix(p, ":")
		if p == ":" {
			return fail("a colon without a port")
		}
	case strings.Count(rest, ":") == 1: // more is an IPv6 address without a port
		host, port, _ = strings.Cut(rest, ":")
		if port == "" {
			return fail("a colon without a port")
		}
	}
	var err error
	if e.port, err = canonicalPort(port); err != nil {
		return fail(err.Error())
	}
	if e.host, err = canonicalHost(host); err != nil {
		return fail(err.Error())
	}
	if e.wildcard && strings.Contains(e.host, ":") {
		return fail("a * stands only for the names under a domain")
	}
	return e, nil
}

// admits reports whether the canonical host and port (the scheme's
// default when the URL names none) are this entry's.
func (e allowEntry) admits(host, port string) bool {
	if e.port != "" && e.port != port {
		return false
	}
	if e.wildcard {
		return strings.HasSuffix(host, "."+e.host)
	}
	return host == e.host
}

// allowed reports whether u's host is in AllowHosts, compared in
// canonical form (canonicalHost): no spelling of a host, in case, a
// trailing dot or Unicode, gets past an entry or is kept out by one.
func (c *Connector) allowed(u *url.URL) bool {
	if len(c.allow) == 0 {
		return true
	}
	host, err := canonicalHost(u.Hostname())
	if err != nil {
		return false // net/http could not dial it either
	}
	port := u.Port()
	if port == "" {
		port = connectors.DefaultPort(strings.ToLower(u.Scheme))
	}
	if port, err = canonicalPort(port); err != nil {
		return false
	}
	for _, a := range c.allow {
		if a.admits(host, port) {
			return true
		}
	}
	return false
}

func (c *Connector) notAllowed(u *url.URL) error {
	written := make([]string, len(c.allow))
	for i, a := range c.allow {
		written[i] = a.written
	}
	return connectors.Errorf(connectors.Permission, "host %q is not in http allow_hosts (%s)", u.Host, strings.Join(written, ", "))
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
