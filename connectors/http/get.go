package http

import (
	"context"
	"fmt"
	nethttp "net/http"

	"keep/connectors"
)

// get: {url, headers} → {status, headers, body, json, truncated}. Any
// answer below 500 other than 429 is the script's to judge, so it is a
// result; a rate limit, a server error or a network failure is transient
// (connectors.Classify, a judged read).
func (c *Connector) get(ctx context.Context, p map[string]any) (any, error) {
	u, hdr, err := c.urlAndHeaders(p)
	if err != nil {
		return nil, err
	}
	req, err := newRequest(nethttp.MethodGet, u, hdr, nil, "")
	if err != nil {
		return nil, connectors.Errorf(connectors.Logic, "GET %s: %w", connectors.RedactURL(u), connectors.RedactURLError(err))
	}
	what := "GET " + connectors.RedactURL(u)
	resp, wrote, err := c.send(ctx, req)
	switch {
	case err != nil && credentialError(err):
		return nil, err
	case err != nil:
		return nil, connectors.Failure(connectors.Exchange{Err: err, Sent: wrote}, 0, fmt.Errorf("%s: %w", what, cause(err)))
	case judged(resp) != "":
		// a read the service could not serve now, with its hint of when
		return nil, &connectors.Error{Class: judged(resp), RetryAfter: resp.retryAfter(),
			Err: fmt.Errorf("%s: %s%s", what, statusLine(resp.status), resp.snippet())}
	case resp.bodyErr != nil:
		return nil, connectors.Errorf(connectors.Transient, "%s: reading the body: %w", what, cause(resp.bodyErr))
	case resp.truncated:
		return nil, connectors.Errorf(connectors.Logic, "%s: the body is larger than the %d bytes allowed", what, c.maxBody)
	}
	return resp.result(), nil
}

// judged is the class of a read's answer that the script judges: "" for
// its result, else the service's "not now" (connectors.Classify).
func judged(resp *response) connectors.Class {
	return connectors.Classify(connectors.Exchange{Status: resp.status, Sent: true, Judged: true})
}
