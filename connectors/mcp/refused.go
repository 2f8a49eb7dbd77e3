package mcp

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"keep/connectors"
)

// An MCP server over HTTP that answers 401 or 403 to the credential keep
// sent refused the account: the call fails as Auth, naming the account
// and `keep auth login NAME` (the engine blocks the workflow with its auth
// item), and an account of the accounts store is marked as needing a
// sign-in (`keep auth list`). The SDK may wrap what a RoundTripper
// returns past recognition, so the refusal is handed to the call beside
// the error rather than through it: in a slot its context carries, so a
// refusal is only ever read by the request it answered. (One held for the
// whole connector was taken by whichever call failed next: a mutation cut
// mid-call after a refused listing read as refused, nothing done.)

// refusals notes the refusals of the requests base sends (signed already).
type refusals struct {
	base http.RoundTripper
	c    *Connector
}

func (c *Connector) refusals(base http.RoundTripper) http.RoundTripper {
	return &refusals{base: base, c: c}
}

func (r *refusals) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.base.RoundTrip(req)
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) || r.c.cfg.Account == nil {
		return resp, err
	}
	a := r.c.cfg.Account
	why := fmt.Sprintf("mcp.%s (%s) answered %s to the credentials of %s", r.c.cfg.Name, connectors.RedactURL(req.URL), resp.Status, a.Name())
	var refused error
	if rf, ok := a.(connectors.Refuser); ok {
		refused = rf.Refuse(secretOn(req), why)
	} else {
		refused = &connectors.Error{Class: connectors.Auth, Err: fmt.Errorf("%s (keep auth login %s)", why, a.Name())}
	}
	if slot, ok := req.Context().Value(refusalKey{}).(*refusal); ok {
		slot.mu.Lock()
		slot.err = refused
		slot.mu.Unlock()
	}
	return resp, err
}

// refusal is the refusal the requests of one call (or start, or listing)
// met; requests without one (the session's end) only tell the account.
type refusal struct {
	mu  sync.Mutex
	err error
}

type refusalKey struct{}

// noteRefusals gives ctx a slot for the refusals of the requests made
// under it.
func noteRefusals(ctx context.Context) (context.Context, *refusal) {
	slot := &refusal{}
	return context.WithValue(ctx, refusalKey{}, slot), slot
}

// met is the refusal the requests under the slot met; nil: none.
func (r *refusal) met() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

func secretOn(r *http.Request) string {
	if _, pw, ok := r.BasicAuth(); ok {
		return pw
	}
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return tok
}
