package calendar

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"time"

	"keep/connectors"
	"keep/connectors/accounts"
)

// transport is the webdav.HTTPClient every request goes through. It puts the
// account's secret on the wire (Basic for password accounts, Bearer for
// token and OAuth accounts), answers one 401 by invalidating the secret and
// trying once more with a fresh one, and turns what went wrong into errors
// that say whether the request left this machine, so failures can be
// classified at the source.
type transport struct {
	client  *http.Client
	account connectors.Account
}

// statusError is a non-2xx answer.
type statusError struct {
	method, path string
	code         int
	retryAfter   time.Duration
	snippet      string
}

func (e *statusError) Error() string {
	msg := fmt.Sprintf("%s %s answered %d %s", e.method, e.path, e.code, http.StatusText(e.code))
	if e.snippet != "" {
		msg += ": " + e.snippet
	}
	return msg
}

// wireError is a request that got no answer; sent says whether it was
// written in full before that.
type wireError struct {
	method, path string
	sent         bool
	err          error
}

func (e *wireError) Error() string {
	return fmt.Sprintf("%s %s: %v", e.method, e.path, e.err)
}

func (e *wireError) Unwrap() error { return e.err }

func (t *transport) Do(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		r := req.Clone(req.Context())
		if attempt > 0 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
		if err := t.authorize(r); err != nil {
			return nil, err
		}
		var sent atomic.Bool
		trace := &httptrace.ClientTrace{WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				sent.Store(true)
			}
		}}
		r = r.WithContext(httptrace.WithClientTrace(r.Context(), trace))
		resp, err := t.client.Do(r)
		if err != nil {
			return nil, &wireError{method: req.Method, path: req.URL.Path, sent: sent.Load(), err: err}
		}
		replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
		if resp.StatusCode == http.StatusUnauthorized && t.account != nil && attempt == 0 && replayable {
			// An OAuth token can expire between Secret and the server's
			// check: refresh once before calling it a refusal.
			io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			t.account.Invalidate()
			continue
		}
		if resp.StatusCode == http.StatusUnauthorized && t.account != nil {
			// refused after a fresh secret (or one that cannot be
			// refreshed): the user must sign in again
			io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			return nil, accounts.Refused(t.account, accounts.SecretOn(r),
				fmt.Sprintf("calendar: %s %s answered 401 Unauthorized to the credentials of %s", req.Method, req.URL.Path, t.account.Name()))
		}
		if resp.StatusCode/100 != 2 {
			defer resp.Body.Close()
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			return nil, &statusError{method: req.Method, path: req.URL.Path, code: resp.StatusCode,
				retryAfter: connectors.ParseRetryAfter(strings.TrimSpace(resp.Header.Get("Retry-After"))),
				snippet:    strings.Join(strings.Fields(string(b)), " ")}
		}
		return resp, nil
	}
}

func (t *transport) authorize(r *http.Request) error {
	if t.account == nil {
		return nil
	}
	return connectors.Authorize(r.Context(), r, t.account)
}

// classify turns any failure of a CalDAV exchange into a connectors.Error.
// For a mutation, anything that may have reached the server without a
// definite answer (a timeout or reset after sending, a 5xx other than 503)
// is Uncertain; for a read it is Transient, since reading again is harmless.
func classify(err error, mutation bool) error {
	if err == nil {
		return nil
	}
	var ce *connectors.Error
	if errors.As(err, &ce) {
		return err
	}
	var se *statusError
	if errors.As(err, &se) {
		switch {
		case se.code == http.StatusUnauthorized || se.code == http.StatusForbidden:
			return connectors.Errorf(connectors.Auth, "calendar: %w", se)
		case se.code == http.StatusTooManyRequests || se.code == http.StatusServiceUnavailable || se.code == http.StatusRequestTimeout:
			return &connectors.Error{Class: connectors.Transient, RetryAfter: se.retryAfter, Err: fmt.Errorf("calendar: %w", se)}
		case se.code >= 500 && mutation:
			return connectors.Errorf(connectors.Uncertain, "calendar: %w", se)
		case se.code >= 500:
			return connectors.Errorf(connectors.Transient, "calendar: %w", se)
		}
		return connectors.Errorf(connectors.Logic, "calendar: %w", se)
	}
	var we *wireError
	if errors.As(err, &we) {
		if we.sent && mutation {
			return connectors.Errorf(connectors.Uncertain, "calendar: no answer after sending: %w", we)
		}
		return connectors.Errorf(connectors.Transient, "calendar: %w", we)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		if mutation {
			return connectors.Errorf(connectors.Uncertain, "calendar: %w", err)
		}
		return connectors.Errorf(connectors.Transient, "calendar: %w", err)
	}
	// The server answered 2xx with something we could not read.
	return connectors.Errorf(connectors.Internal, "calendar: reading the server's answer: %w", err)
}

// statusOf returns the HTTP status of a failed exchange, or 0.
func statusOf(err error) int {
	var se *statusError
	if errors.As(err, &se) {
		return se.code
	}
	return 0
}
