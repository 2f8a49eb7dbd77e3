package http

import (
	"context"
	"fmt"
	nethttp "net/http"
	"net/url"

	"keep/connectors"
)

// idempotencyHeader carries the host's key. net/http would read it as
// leave to send the request again by itself; connectors.Transport goes
// out with it under a name net/http does not look for (sendOnce).
const idempotencyHeader = "Idempotency-Key"

// prepared is a validated request call.
type prepared struct {
	method string
	url    *url.URL
	hdr    map[string]string
	req    *nethttp.Request
}

func (c *Connector) prepare(call connectors.Call) (*prepared, error) {
	p := call.Params
	m, err := method(p["method"])
	if err != nil {
		return nil, err
	}
	u, hdr, err := c.urlAndHeaders(p)
	if err != nil {
		return nil, err
	}
	body, contentType, err := c.payload(p)
	if err != nil {
		return nil, err
	}
	if rec, ok := p["reconcile"].(map[string]any); ok && rec["url"] != nil {
		// Checked now, so a bad reconcile URL fails before the change is
		// made rather than when it is needed.
		if _, err := c.parseURL(rec["url"], "reconcile.url"); err != nil {
			return nil, err
		}
	}
	req, err := newRequest(m, u, hdr, body, contentType)
	if err != nil {
		return nil, connectors.Errorf(connectors.Logic, "%s %s: %w", m, connectors.RedactURL(u), connectors.RedactURLError(err))
	}
	if call.IdempotencyKey != "" {
		req.Header.Set(idempotencyHeader, call.IdempotencyKey) // the host's, over any the script set
	}
	return &prepared{method: m, url: u, hdr: hdr, req: req}, nil
}

// request: {method, url, headers, json | body, reconcile: {url}} →
// {status, headers, body, json, truncated}, with the outcome mapping of
// DESIGN §6:
//
//	2xx                                  applied (a result; an oversize body is cut and flagged)
//	401, 403 to a host-held credential   auth
//	other 400-499 but 408, 429           logic: a definite refusal
//	408, 429, 503                        transient, with Retry-After
//	other 5xx, unfollowed 3xx            uncertain
//	no connection, failure before the
//	request was fully written            transient
//	timeout, reset, EOF after it was     uncertain
func (c *Connector) request(ctx context.Context, call connectors.Call) (any, error) {
	pr, err := c.prepare(call)
	if err != nil {
		return nil, err
	}
	what := pr.method + " " + connectors.RedactURL(pr.url)
	resp, wrote, err := c.send(ctx, pr.req)
	if err != nil && credentialError(err) {
		return nil, err
	}
	if err != nil {
		x := connectors.Exchange{Err: err, Sent: wrote, Mutation: true}
		if wrote {
			return nil, connectors.Failure(x, 0, fmt.Errorf("%s: sent, then %w", what, cause(err)))
		}
		return nil, connectors.Failure(x, 0, fmt.Errorf("%s: not sent: %w", what, cause(err)))
	}
	return classify(what, resp, c.accountFor(pr.url) != nil)
}

// classify maps an answer to a mutation onto a result or a class
// (connectors.Classify); held says keep put the credential on it.
func classify(what string, resp *response, held bool) (any, error) {
	s := resp.status
	detail := resp.snippet()
	if loc := resp.header.Get("Location"); s >= 300 && s < 400 && loc != "" {
		detail = ", redirect to " + connectors.RedactURLText(loc) + " not followed"
	}
	// The server said it did it; a body that broke off or ran past the cap
	// does not undo that.
	x := connectors.Exchange{Status: s, Sent: true, Mutation: true, Credential: held}
	if e := connectors.Failure(x, resp.retryAfter(), fmt.Errorf("%s: %s%s", what, statusLine(s), detail)); e != nil {
		return nil, e
	}
	return resp.result(), nil
}
