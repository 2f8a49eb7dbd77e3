package http

import (
	"context"
	"errors"
	nethttp "net/http"
	"net/url"
	"strings"

	"keep/connectors"
	"keep/connectors/accounts"
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

// send is exchange with the host's credentials for a configured host. A
// 401 makes an oauth2 account refresh and the request go once more (the
// server refused it, so nothing was done); a second 401 means the user
// must sign in again. Credential failures come back as *connectors.Error.
func (c *Connector) send(ctx context.Context, req *nethttp.Request) (*response, bool, error) {
	a := c.accountFor(req.URL)
	if a == nil {
		return c.exchange(ctx, req)
	}
	if err := connectors.Authorize(ctx, req, a); err != nil {
		return nil, false, err
	}
	resp, wrote, err := c.exchange(ctx, req)
	if err != nil || resp.status != nethttp.StatusUnauthorized {
		return resp, wrote, err
	}
	if a.Kind() == accounts.OAuth2 {
		a.Invalidate()
		again := req.Clone(ctx)
		if req.GetBody != nil {
			if again.Body, err = req.GetBody(); err != nil {
				return nil, wrote, connectors.Errorf(connectors.Internal, "resending the request: %w", err)
			}
		}
		if err := connectors.Authorize(ctx, again, a); err != nil {
			return nil, wrote, err
		}
		resp, wrote, err = c.exchange(ctx, again)
		if err != nil || resp.status != nethttp.StatusUnauthorized {
			return resp, true, err
		}
		req = again
	}
	return nil, true, accounts.Refused(a, accounts.SecretOn(req), req.URL.Host+" answered 401 Unauthorized to its credentials")
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
