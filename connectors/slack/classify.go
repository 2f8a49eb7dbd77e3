package slack

import (
	"net/http"
	"time"

	"keep/connectors"
)

// statusClass classifies a non-2xx HTTP status. Slack answers most failures
// with 200 and ok:false; a bare status usually comes from its edge or a proxy.
func statusClass(code int, mutation bool) connectors.Class {
	switch {
	case code == http.StatusTooManyRequests, code == http.StatusServiceUnavailable, code == http.StatusRequestTimeout:
		// Turned away before any work: a rate limit, an outage, or a request
		// that didn't arrive in time.
		return connectors.Transient
	case code == http.StatusUnauthorized, code == http.StatusForbidden:
		return connectors.Auth
	case code >= 400 && code < 500:
		return connectors.Logic
	case mutation:
		// 500, 502, 504 and the rest: the request reached something that
		// may have passed it on before failing.
		return connectors.Uncertain
	}
	return connectors.Transient
}

// codeClass classifies the error code of an ok:false answer.
func codeClass(code string, mutation bool) connectors.Class {
	switch code {
	case "invalid_auth", "not_authed", "token_revoked", "token_expired", "account_inactive",
		"missing_scope", "not_allowed_token_type", "no_permission", "ekm_access_denied",
		"org_login_required", "team_access_not_granted", "two_factor_setup_required", "access_denied":
		return connectors.Auth
	case "ratelimited", "rate_limited", "service_unavailable", "request_timeout", "team_added_to_org":
		// request_timeout means Slack got the POST data truncated or not at
		// all; the others are refusals before any work.
		return connectors.Transient
	case "internal_error", "fatal_error":
		// Slack documents both as "it's possible some aspect of the
		// operation succeeded before the error was raised".
		if mutation {
			return connectors.Uncertain
		}
		return connectors.Transient
	}
	// channel_not_found, not_in_channel, msg_too_long, no_text,
	// invalid_blocks and every other code describe the request itself.
	return connectors.Logic
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(h http.Header) time.Duration {
	return connectors.ParseRetryAfter(h.Get("Retry-After"))
}
