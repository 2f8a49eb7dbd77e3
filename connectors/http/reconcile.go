package http

import (
	"context"
	nethttp "net/http"
	"net/url"

	"keep/connectors"
)

// Reconcile GETs the request's reconcile.url: 2xx is applied (the result is
// that response), 404 is not applied, anything else, an answer from where
// a redirect led, or no answer is unknown, to be asked again later.
// Without a reconcile URL there is no way to find out: ErrCannotCheck.
//
// The GET carries the same Idempotency-Key, so an endpoint can look the
// change up by it, and the request's own headers (credentials for the same
// API, say) when the reconcile URL is on the request's origin (scheme,
// host and port: connectors.Origin), never otherwise: a key the script
// sent over https must not go to plain http on the same host and port.
func (c *Connector) Reconcile(ctx context.Context, call connectors.Call) (connectors.Verdict, any, error) {
	if call.Method != "request" {
		return connectors.Unknown, nil, connectors.Errorf(connectors.Logic, "http.%s is not a mutation", call.Method)
	}
	rec, _ := call.Params["reconcile"].(map[string]any)
	if rec == nil || rec["url"] == nil {
		return connectors.Unknown, nil, connectors.ErrCannotCheck
	}
	u, err := c.parseURL(rec["url"], "reconcile.url")
	if err != nil {
		return connectors.Unknown, nil, err
	}
	var hdr map[string]string
	orig, _ := call.Params["url"].(string)
	if o, err := url.Parse(orig); err == nil && connectors.OriginOf(o).Admits(u) {
		if hdr, err = headers(call.Params["headers"]); err != nil {
			return connectors.Unknown, nil, err
		}
	}
	req, err := newRequest(nethttp.MethodGet, u, hdr, nil, "")
	if err != nil {
		return connectors.Unknown, nil, connectors.Errorf(connectors.Logic, "GET %s: %w", connectors.RedactURL(u), connectors.RedactURLError(err))
	}
	req.Header.Del("Content-Type") // the GET has no body
	if call.IdempotencyKey != "" {
		req.Header.Set(idempotencyHeader, call.IdempotencyKey)
	}
	resp, _, err := c.send(ctx, req)
	switch {
	case err != nil && credentialError(err):
		return connectors.Unknown, nil, err
	case err != nil:
		return connectors.Unknown, nil, nil
	case resp.redirected:
		// the answer is about where the redirect led (a sign-in page, a
		// front page, a not-found page), not about the thing named
		return connectors.Unknown, nil, nil
	case resp.status >= 200 && resp.status < 300:
		return connectors.Applied, resp.result(), nil
	case resp.status == nethttp.StatusNotFound:
		return connectors.NotApplied, nil, nil
	default:
		return connectors.Unknown, nil, nil
	}
}
