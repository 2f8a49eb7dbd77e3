package connectors

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
)

// Transport is the one way a connector sends HTTP over an account: it puts
// the account's credential on each request, answers a 401 by invalidating
// the secret (an oauth2 token refreshes) and, when that gives another one,
// sending the request once more with it (the server refused it, so nothing
// was done), and records whether the request was written in full, which is
// what separates a transient failure from an uncertain one (Classify).
// Connectors keep only their URLs and decoding.
type Transport struct {
	Client *http.Client
	// Account is whose credential goes on every request; nil sends
	// requests as they are. It goes to the request's origin only: a
	// redirect to another scheme, host or port goes without it. With or
	// without one, a redirect that would turn the request into a GET is
	// not followed (boundRedirects).
	Account Account
	// Plain lets the credential go over plain http to another machine:
	// only for a host the person bound with an explicit http:// scheme
	// (the http connector's [connectors.http.hosts]). Otherwise a
	// credential goes over plain http to this machine only, and a request
	// elsewhere is refused with nothing sent.
	Plain bool
}

// Refuser is an account that records a service's refusal of its secret, so
// `keep auth list` shows it needs a sign-in (the accounts store's accounts).
// Refuse returns the Auth failure to pass on; secret is the refused one and
// why must hold no secret.
type Refuser interface {
	Refuse(secret, why string) *Error
}

// Do sends req. sent reports whether the request was written in full at
// least once: after that, the service may have acted on it even if no
// answer came back. A 401 the account cannot get past (after one fresh
// secret) is an Auth *Error naming the account; every other answer, a 401
// without an account or from another origin a redirect led to included,
// comes back for the caller to classify. The caller closes resp.Body.
func (t *Transport) Do(req *http.Request) (resp *http.Response, sent bool, err error) {
	req = sendOnce(req)
	ctx := req.Context()
	var written atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		// net/http may resend on a fresh connection; one complete write is
		// enough to make the outcome uncertain.
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				written.Store(true)
			}
		},
	})
	client := boundRedirects(t.client())
	if t.Account == nil {
		resp, err = client.Do(req.WithContext(ctx))
		return resp, written.Load(), refusal(err)
	}
	if !t.Plain && inClear(req.URL) {
		return nil, false, clearRefused(t.Account, req.URL)
	}
	for attempt := 0; ; attempt++ {
		r := req.WithContext(ctx)
		if attempt > 0 {
			r = req.Clone(ctx)
			if req.GetBody != nil {
				if r.Body, err = req.GetBody(); err != nil {
					return nil, true, Errorf(Internal, "resending the request: %w", err)
				}
			}
		}
		if err := Authorize(ctx, r, t.Account); err != nil {
			return nil, written.Load(), err
		}
		resp, err = client.Do(r)
		if err != nil || resp.StatusCode != http.StatusUnauthorized {
			return resp, written.Load(), refusal(err)
		}
		if resp.Request != nil && !OriginOf(req.URL).Admits(resp.Request.URL) {
			// a redirect led elsewhere, and the credential did not go
			// along (boundRedirects): that server's 401 is to a request
			// without it, no verdict on the account
			return resp, written.Load(), nil
		}
		// drain so the connection is reused for the replay
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
		if attempt == 0 && replayable {
			// A token can expire between Secret and the service's check,
			// a password be changed since it was read: ask the account
			// for a fresh secret, and send again only if it is another.
			t.Account.Invalidate()
			fresh, err := t.Account.Secret(ctx)
			if err != nil {
				return nil, true, Authorized(t.Account, err)
			}
			if fresh != secretOn(r) {
				// the 401 says the service did nothing with the first
				// copy: only the replay can make the outcome uncertain
				written.Store(false)
				continue
			}
		}
		why := fmt.Sprintf("%s %s answered 401 Unauthorized to the credentials of %s", req.Method, RedactURL(req.URL), t.Account.Name())
		if rf, ok := t.Account.(Refuser); ok {
			return nil, true, rf.Refuse(secretOn(r), why)
		}
		return nil, true, &Error{Class: Auth, Err: errors.New(why)}
	}
}

// refusal is the *Error a redirect policy refused a hop with
// (boundRedirects): net/http wraps that in a *url.Error naming the
// Location again, and the *Error says it already. Any other error is
// err with the URL net/http quotes in it redacted (RedactURLError): a
// query's api_key must not reach an error, hence the ledger and the log.
func refusal(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if ce, ok := ue.Err.(*Error); ok {
			return ce
		}
	}
	return RedactURLError(err)
}

// sendOnce is req made one net/http never sends a second time by itself.
// net/http replays a request on a fresh connection when a kept-alive one
// closes before the first byte of an answer, if the request counts as
// idempotent: a GET, or any method whose Header map holds an
// "Idempotency-Key" or "X-Idempotency-Key" entry (net/http's Transport
// doc). By then the server may have acted on the first copy, and one
// that ignores the key acts twice: a blind retry of a mutation. The key
// still goes out, under the same name in lower case (header names are
// case-insensitive on the wire), an entry net/http does not look for.
// Reads keep their replay: reading twice is harmless.
func sendOnce(req *http.Request) *http.Request {
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return req
	}
	cloned := false
	for _, k := range []string{"Idempotency-Key", "X-Idempotency-Key"} {
		v, ok := req.Header[k]
		if !ok {
			continue
		}
		if !cloned {
			req, cloned = req.Clone(req.Context()), true
		}
		delete(req.Header, k)
		req.Header[strings.ToLower(k)] = v
	}
	return req
}

func (t *Transport) client() *http.Client {
	if t.Client == nil {
		return http.DefaultClient
	}
	return t.Client
}

// IdleConnsPerHost is how many connections to one host a connector keeps
// open between calls: as many as one consumer may run at once
// (sandbox.MaxConcurrency), so concurrent runs calling one service reuse
// their connections instead of dialling all but net/http's default two
// again for every round of calls.
const IdleConnsPerHost = 64

// MaxResponseHeaderBytes bounds the headers of an answer. net/http's
// default is 10 MiB, read whole into a map before keep sees a byte of it:
// a server answering one GET with that much in short header lines cost
// over 200 MiB of allocation, and every header went on into the
// result, the trace and the ledger. No real service sends more than a
// few KiB of headers; past this the answer is refused, the server's
// fault, with net/http's "server response headers exceeded" error.
const MaxResponseHeaderBytes = 1 << 20

// NewHTTPTransport is net/http's default transport keeping
// IdleConnsPerHost connections per host, reading at most
// MaxResponseHeaderBytes of an answer's headers, speaking HTTP/1.1 only:
// what a connector's client sends with unless it is given one.
//
// Not HTTP/2: net/http's HTTP/2 client sends a request again by itself,
// body and all, when the server resets its stream with PROTOCOL_ERROR,
// which does not say the server did nothing (only REFUSED_STREAM does,
// RFC 9113 §8.7), and it does so for any method, with no setting to stop
// it: a server or a proxy before it that resets after acting has a
// mutation done again and again (well over a thousand times in four
// seconds), and keeps the daemon busy resending. HTTP/1.1's own replays
// are ones sendOnce keeps off mutations.
func NewHTTPTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = IdleConnsPerHost
	t.MaxResponseHeaderBytes = MaxResponseHeaderBytes
	t.ForceAttemptHTTP2 = false
	t.Protocols = new(http.Protocols)
	t.Protocols.SetHTTP1(true)
	t.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	if t.TLSClientConfig != nil {
		// offering h2 to a server this transport cannot speak it to
		t.TLSClientConfig.NextProtos = nil
	}
	return t
}

// defaultTransport is what a client without a Transport of its own sends
// with through Transport and BoundClient, in place of net/http's default
// one, which speaks HTTP/2 (NewHTTPTransport).
var defaultTransport = NewHTTPTransport()

// HTTPClient is a client over the shared NewHTTPTransport, for requests
// keep makes with no client of its own to hand (an account's token
// endpoint).
func HTTPClient() *http.Client { return &http.Client{Transport: defaultTransport} }

// secretOn is the secret Authorize put on r (Basic or Bearer): the one a
// 401 to r refused.
func secretOn(r *http.Request) string {
	if _, pw, ok := r.BasicAuth(); ok {
		return pw
	}
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return tok
}
