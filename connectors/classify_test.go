package connectors_test

import (
	"errors"
	"io"
	"testing"
	"time"

	"keep/connectors"
)

func TestFailure(t *testing.T) {
	t.Parallel()
	what := errors.New("what happened")
	cases := []struct {
		name       string
		x          connectors.Exchange
		class      connectors.Class
		retryAfter time.Duration
		notSent    bool
	}{
		{"a 429 keeps the service's Retry-After", connectors.Exchange{Status: 429, Mutation: true}, connectors.Transient, time.Minute, false},
		{"a 503 keeps it too", connectors.Exchange{Status: 503}, connectors.Transient, time.Minute, false},
		{"a 502 on a read says nothing of when", connectors.Exchange{Status: 502}, connectors.Transient, 0, false},
		{"nothing written: not sent", connectors.Exchange{Err: io.EOF, Mutation: true}, connectors.Transient, 0, true},
		{"written, then cut, on a read: transient but sent", connectors.Exchange{Err: io.EOF, Sent: true}, connectors.Transient, 0, false},
		{"a 500 on a mutation is uncertain", connectors.Exchange{Status: 500, Mutation: true}, connectors.Uncertain, 0, false},
	}
	for _, tc := range cases {
		e := connectors.Failure(tc.x, time.Minute, what)
		if e == nil || e.Class != tc.class || e.RetryAfter != tc.retryAfter || e.NotSent != tc.notSent || !errors.Is(e, what) {
			t.Errorf("%s: %#v, want %s retry after %s not sent %v", tc.name, e, tc.class, tc.retryAfter, tc.notSent)
		}
	}
	if e := connectors.Failure(connectors.Exchange{Status: 201, Mutation: true}, 0, what); e != nil {
		t.Errorf("a 201 is a failure: %v", e)
	}
	refusal := &connectors.Error{Class: connectors.Auth, Err: errors.New("sign in again")}
	if e := connectors.Failure(connectors.Exchange{Err: refusal, Sent: true}, 0, what); e != refusal {
		t.Errorf("a classified error is not passed on as it is: %v", e)
	}
}

// TestClassifyJudged: a read whose answer the caller judges (http.get) is
// a result for any status but the service's "not now", by the same map.
func TestClassifyJudged(t *testing.T) {
	t.Parallel()
	for status, want := range map[int]connectors.Class{
		200: "", 301: "", 400: "", 401: "", 403: "", 404: "", 408: "", 418: "",
		429: connectors.Transient, 500: connectors.Transient, 502: connectors.Transient, 503: connectors.Transient,
	} {
		if got := connectors.Classify(connectors.Exchange{Status: status, Sent: true, Judged: true, Credential: true}); got != want {
			t.Errorf("a judged read answered %d: %q, want %q", status, got, want)
		}
	}
}
