package slack

import (
	"net/http"
	"time"

	"keep/connectors"
)

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
