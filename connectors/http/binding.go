package http

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"keep/connectors"
)

// binding is one [connectors.http.hosts] entry: the account and where its
// credential may go. A credential is bound to a scheme and a port as well
// as a name: another port on the same name is another service, and plain
// http hands the credential to anyone on the path.
type binding struct {
	key     string // as configured, for messages
	host    string // canonicalHost: lower-case name or address, no brackets
	scheme  string // "http" or "https"; "" means https, or http on loopback
	port    string // "" means the scheme's default port
	account connectors.Account
}

// parseBinding reads a host entry: "api.example.com" (https on port 443;
// a loopback name also plain http on 80), "api.example.com:8443" (that
// port), or "https://…" / "http://…" with an optional port (that scheme;
// without a port, the scheme's default).
func parseBinding(key string, a connectors.Account) (binding, error) {
	k := strings.ToLower(strings.TrimSpace(key))
	b := binding{key: key, account: a}
	hostport := k
	if i := strings.Index(k, "://"); i >= 0 {
		u, err := url.Parse(k)
		if err != nil {
			return b, fmt.Errorf("host %q: %w", key, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return b, fmt.Errorf("host %q: the scheme must be http or https", key)
		}
		if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil || u.Fragment != "" {
			return b, fmt.Errorf("host %q: give a scheme, a host and a port only (no path, query or user)", key)
		}
		b.scheme, hostport = u.Scheme, u.Host
	}
	b.host = hostport
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		b.host, b.port = h, p
	}
	b.host = strings.Trim(b.host, "[]")
	if b.host == "" || strings.ContainsAny(b.host, "/?#@ ") {
		return b, fmt.Errorf("host %q: not a host name (write api.example.com, api.example.com:8443 or https://api.example.com:8443)", key)
	}
	// spelled as a request's host is compared (matches), so the entry
	// holds for every spelling of the name and none of another's
	h, err := canonicalHost(b.host)
	if err != nil {
		return b, fmt.Errorf("host %q: %w", key, err)
	}
	b.host = h
	if b.port == defaultPort(b.scheme) && b.scheme != "" {
		b.port = ""
	}
	return b, nil
}

// matches reports whether the credential of b may go to u.
func (b binding) matches(u *url.URL) bool {
	if h, err := canonicalHost(u.Hostname()); err != nil || h != b.host {
		return false
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case b.scheme != "":
		if scheme != b.scheme {
			return false
		}
	case scheme == "https":
	case scheme == "http" && loopback(b.host):
	default:
		return false
	}
	want := b.port
	if want == "" {
		want = defaultPort(scheme)
	}
	got := u.Port()
	if got == "" {
		got = defaultPort(scheme)
	}
	return got == want
}

func defaultPort(scheme string) string { return connectors.DefaultPort(scheme) }

// loopback: this machine, where plain http never leaves it.
func loopback(host string) bool { return connectors.Loopback(host) }

// rank orders entries from the most specific.
func (b binding) rank() int {
	r := 0
	if b.scheme != "" {
		r += 2
	}
	if b.port != "" {
		r++
	}
	return r
}
