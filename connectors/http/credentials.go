package http

import (
	"context"
	"errors"
	nethttp "net/http"
	"net/url"
	"strings"

	"keep/connectors"
)

// heldByHost is what approvals, the ledger and traces show in place of a
// credential the host adds.
const heldByHost = "[held by host]"

// accountFor returns the account whose credentials go to u, or nil: the
// entry for u's host whose scheme and port u matches (binding.go).
func (c *Connector) accountFor(u *url.URL) connectors.Account {
	for _, b := range c.hosts {
		if b.matches(u) {
			return b.account
		}
	}
	return nil
}

// checkOwnAuth refuses a script's own Authorization header for a host
// whose credentials the host holds: the script never names a secret.
func (c *Connector) checkOwnAuth(u *url.URL, hdr map[string]string) error {
	a := c.accountFor(u)
	if a == nil {
		return nil
	}
	for k := range hdr {
		if strings.EqualFold(k, "Authorization") {
			return connectors.Errorf(connectors.Logic,
				"header %q may not be set for %s: keep adds it from account %s (remove it from the script)", k, u.Host, a.Name())
		}
	}
	return nil
}

// send is exchange with the host's credentials for a configured host: the
// transport refreshes an oauth2 token once on a 401, and a 401 it cannot
// get past means the user must sign in again. Credential failures come
// back as *connectors.Error.
func (c *Connector) send(ctx context.Context, req *nethttp.Request) (*response, bool, error) {
	return c.exchange(ctx, req, c.accountFor(req.URL))
}

// credentialError reports whether err is the classified failure of a
// credential, which the callers pass on as it is.
func credentialError(err error) bool {
	var ce *connectors.Error
	return errors.As(err, &ce)
}

// shownHeaders names a host-held credential in a preview.
func (c *Connector) shownHeaders(p map[string]any) string {
	s, _ := p["url"].(string)
	u, err := url.Parse(s)
	if err != nil || c.accountFor(u) == nil {
		return ""
	}
	return " Authorization: " + heldByHost
}

var _ connectors.Shower = (*Connector)(nil)

// Shown adds "Authorization: [held by host]" to the headers of a call to a
// host whose credentials the host holds.
func (c *Connector) Shown(method string, p map[string]any) map[string]any {
	s, _ := p["url"].(string)
	u, err := url.Parse(s)
	if err != nil || c.accountFor(u) == nil {
		return p
	}
	out := make(map[string]any, len(p)+1)
	for k, v := range p {
		out[k] = v
	}
	hdr := map[string]any{}
	if h, ok := p["headers"].(map[string]any); ok {
		for k, v := range h {
			hdr[k] = v
		}
	}
	hdr["Authorization"] = heldByHost
	out["headers"] = hdr
	return out
}
