package http

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	nethttp "net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"keep/connectors"
)

// response is what came back, body read up to the cap. It is the only
// form an answer takes past exchange, and result the only script-facing
// view of it.
type response struct {
	status    int
	header    nethttp.Header // without withheldHeaders (shownHeader)
	body      []byte
	truncated bool  // body was cut at MaxBody
	bodyErr   error // the body broke off after the status arrived
	// redirected: the answer is from where a redirect led, not from the
	// URL asked for
	redirected bool
}

// exchange sends req with a's credential (nil: as it is) through the
// shared transport and reads the answer. wrote reports whether the whole
// request reached the wire at least once: after that, the server may have
// acted on it even if no answer came back.
func (c *Connector) exchange(ctx context.Context, req *nethttp.Request, a connectors.Account) (resp *response, wrote bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	// Plain: a's binding (binding.go) already sends it over plain http
	// only to this machine or where the person wrote http://
	t := connectors.Transport{Client: c.client, Account: a, Plain: true}
	r, wrote, err := t.Do(req.WithContext(ctx))
	if err != nil {
		return nil, wrote, err
	}
	defer r.Body.Close()
	body, bodyErr := io.ReadAll(io.LimitReader(r.Body, c.maxBody+1))
	resp = &response{status: r.StatusCode, header: shownHeader(r.Header), body: body, bodyErr: bodyErr,
		redirected: r.Request != nil && r.Request.URL.String() != req.URL.String()}
	if int64(len(body)) > c.maxBody {
		resp.body, resp.truncated = body[:c.maxBody], true
	}
	return resp, true, nil
}

// newRequest builds a request; its errors are the caller's parameters.
func newRequest(method string, u *url.URL, hdr map[string]string, body []byte, contentType string) (*nethttp.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body) // also lets a 307/308 redirect resend it
	}
	req, err := nethttp.NewRequest(method, u.String(), rd)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return req, nil
}

// result is the JSON-shaped answer: {status, headers, body, json,
// truncated}, the one view of an answer a script, a trace or the ledger
// gets. Header names are lower-case; repeated headers are joined with ", "
// (withheld ones never got this far: exchange). json is the parsed body
// if it is JSON, else nil.
func (r *response) result() map[string]any {
	h := make(map[string]any, len(r.header))
	for k, vs := range r.header {
		h[strings.ToLower(k)] = strings.Join(vs, ", ")
	}
	var parsed any
	if !r.truncated && r.bodyErr == nil && json.Valid(r.body) {
		_ = json.Unmarshal(r.body, &parsed) // valid, so it parses
	}
	return map[string]any{
		"status":    int64(r.status),
		"headers":   h,
		"body":      string(r.body),
		"json":      parsed,
		"truncated": r.truncated || r.bodyErr != nil,
	}
}

// retryAfter reads Retry-After as seconds or as an HTTP date.
func (r *response) retryAfter() time.Duration {
	return connectors.ParseRetryAfter(strings.TrimSpace(r.header.Get("Retry-After")))
}

// snippet is the start of the body, for error messages.
func (r *response) snippet() string {
	s := strings.TrimSpace(string(r.body))
	if s == "" {
		return ""
	}
	return ": " + clip(s, previewLimit)
}

// cause is the transport's error without net/http's `Post "url": `
// prefix (the caller names the request itself), with a deadline said in
// words. The chain is kept: errors.Is(err, context.DeadlineExceeded) holds.
func cause(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return deadlineError{}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

type deadlineError struct{}

func (deadlineError) Error() string { return "no answer before the deadline" }
func (deadlineError) Unwrap() error { return context.DeadlineExceeded }

func statusLine(code int) string {
	return strconv.Itoa(code) + " " + nethttp.StatusText(code)
}
