package http

import (
	nethttp "net/http"
	"strings"
)

// withheldHeaders are response headers that hand the client a credential:
// a session cookie is as good as the password that earned it. keep keeps
// no cookie jar, so nothing of the host's needs them, and a script, a
// trace, a ledger row or a log must never hold one (DESIGN: secrets are
// held by the host).
var withheldHeaders = []string{"Set-Cookie", "Set-Cookie2"}

// shownHeader is h without withheldHeaders, whatever the case of their
// names. exchange applies it as it reads an answer, so no later path (a
// result, an error, a reconcile verdict) has them to pass on.
func shownHeader(h nethttp.Header) nethttp.Header {
	out := make(nethttp.Header, len(h))
	for k, vs := range h {
		if !withheld(k) {
			out[k] = vs
		}
	}
	return out
}

func withheld(name string) bool {
	for _, w := range withheldHeaders {
		if strings.EqualFold(name, w) {
			return true
		}
	}
	return false
}
