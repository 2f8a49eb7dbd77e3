package connectors

import (
	"errors"
	"net/http"
	"time"
)

// Exchange is what one HTTP exchange came to, as Classify reads it.
type Exchange struct {
	// Status is the answer's status; 0 when no answer came.
	Status int
	// Err is why no answer (or no whole answer) came.
	Err error
	// Sent: the request was written in full (Transport.Do's sent).
	Sent bool
	// Mutation: the request has an effect; a read is harmless to repeat,
	// so it is never Uncertain.
	Mutation bool
	// Credential: keep put a credential on the request, so a 401 or 403
	// refuses the account rather than the script's own request.
	Credential bool
	// Judged: the caller judges what the service answered (http.get hands
	// the script any status), so only the service's "not now" (429, a 5xx)
	// is a failure.
	Judged bool
}

// Classify is the one outcome map of DESIGN §6 for HTTP services: "" when
// the service did it (2xx), else the class of the failure.
//
//	no answer, request not written in full   transient (not sent)
//	no answer after it was, a cut-off body   uncertain (mutation) / transient (read)
//	an answer the caller judges, but 429/5xx  its result ("")
//	408, 429, 503                            transient, with Retry-After
//	401, 403 to keep's credential            auth
//	other 4xx                                logic: a definite refusal
//	other 5xx, a 3xx not followed            uncertain (mutation)
//	other 5xx on a read                      transient; a 3xx on a read is logic
//	a redirect to other than http(s)         logic (boundRedirects' *Error)
func Classify(x Exchange) Class {
	if x.Err != nil {
		var ce *Error
		if errors.As(x.Err, &ce) {
			return ce.Class
		}
		if x.Sent && x.Mutation {
			return Uncertain
		}
		return Transient
	}
	s := x.Status
	switch {
	case s >= 200 && s < 300:
		return ""
	case x.Judged && s != http.StatusTooManyRequests && s < 500:
		return ""
	case s == http.StatusRequestTimeout, s == http.StatusTooManyRequests, s == http.StatusServiceUnavailable:
		return Transient
	case (s == http.StatusUnauthorized || s == http.StatusForbidden) && x.Credential:
		return Auth
	case s >= 400 && s < 500:
		return Logic
	case x.Mutation:
		return Uncertain
	case s >= 500:
		return Transient
	}
	return Logic
}

// Failure is the classified error of a failed exchange: err says what
// happened, retryAfter is the service's hint (kept for a transient
// failure only). It is nil when the exchange succeeded.
func Failure(x Exchange, retryAfter time.Duration, err error) *Error {
	class := Classify(x)
	if class == "" {
		return nil
	}
	var ce *Error
	if x.Err != nil && errors.As(x.Err, &ce) && ce == x.Err {
		return ce
	}
	e := &Error{Class: class, Err: err}
	if class == Transient {
		if x.Status == http.StatusRequestTimeout || x.Status == http.StatusTooManyRequests || x.Status == http.StatusServiceUnavailable {
			// the service's own "try again", the only answer whose hint
			// says when
			e.RetryAfter = retryAfter
		}
		// no answer and nothing written: the service cannot have acted
		e.NotSent = x.Err != nil && !x.Sent
	}
	return e
}
