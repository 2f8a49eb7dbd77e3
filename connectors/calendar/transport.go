package calendar

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"keep/connectors"
)

// transport is the webdav.HTTPClient every request goes through: the
// shared connectors.Transport (the account's credential, one refresh and
// replay on a 401, whether the request was sent), with what went wrong
// turned into errors classify can read.
type transport struct {
	client  *http.Client
	account connectors.Account
	maxBody int64
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
	tr := connectors.Transport{Client: t.client, Account: t.account}
	resp, sent, err := tr.Do(req)
	var ce *connectors.Error
	switch {
	case errors.As(err, &ce):
		return nil, err
	case err != nil:
		return nil, &wireError{method: req.Method, path: req.URL.Path, sent: sent, err: err}
	case resp.StatusCode/100 != 2:
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, &statusError{method: req.Method, path: req.URL.Path, code: resp.StatusCode,
			retryAfter: connectors.ParseRetryAfter(strings.TrimSpace(resp.Header.Get("Retry-After"))),
			snippet:    strings.Join(strings.Fields(string(b)), " ")}
	}
	// go-webdav and go-ical read an answer to its end into memory, however
	// long a server makes it: the cap is applied as it arrives.
	resp.Body = &cappedBody{ReadCloser: resp.Body, left: t.maxBody, err: &tooLargeError{method: req.Method, path: req.URL.Path, max: t.maxBody}}
	checkBounds(req, resp, t.maxBody)
	return resp, nil
}

// tooLargeError is an answer that ran past MaxBody.
type tooLargeError struct {
	method, path string
	max          int64
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("%s %s: the answer is larger than the %d bytes allowed", e.method, e.path, e.max)
}

// cappedBody fails a read that would go past left bytes, rather than
// ending the body early: a body cut short could still parse.
type cappedBody struct {
	io.ReadCloser
	left int64
	err  *tooLargeError
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, b.err
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	if b.left -= int64(n); b.left < 0 {
		return 0, b.err
	}
	return n, err
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
		x := connectors.Exchange{Status: se.code, Sent: true, Mutation: mutation, Credential: true}
		return connectors.Failure(x, se.retryAfter, fmt.Errorf("calendar: %w", se))
	}
	var big *tooLargeError
	if errors.As(err, &big) {
		return connectors.Errorf(connectors.Logic, "calendar: %w", big)
	}
	// no mutation reads its answer's body (checkBounds), so this is a read's
	var past *pastBoundError
	if errors.As(err, &past) {
		return connectors.Errorf(connectors.Logic, "calendar: %w", past)
	}
	var we *wireError
	if errors.As(err, &we) {
		x := connectors.Exchange{Err: we.err, Sent: we.sent, Mutation: mutation}
		if we.sent && mutation {
			return connectors.Failure(x, 0, fmt.Errorf("calendar: no answer after sending: %w", we))
		}
		return connectors.Failure(x, 0, fmt.Errorf("calendar: %w", we))
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		if mutation {
			return connectors.Errorf(connectors.Uncertain, "calendar: %w", err)
		}
		return connectors.Errorf(connectors.Transient, "calendar: %w", err)
	}
	// The server answered 2xx with something keep could not read: the
	// server's fault, not keep's (Internal is for keep's own bugs), and for
	// a mutation its outcome is not known.
	if mutation {
		return connectors.Errorf(connectors.Uncertain, "calendar: reading the server's answer: %w", err)
	}
	return connectors.Errorf(connectors.Logic, "calendar: reading the server's answer: %w", err)
}

// statusOf returns the HTTP status of a failed exchange, or 0.
func statusOf(err error) int {
	var se *statusError
	if errors.As(err, &se) {
		return se.code
	}
	return 0
}
