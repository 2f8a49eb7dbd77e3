package slack

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"keep/connectors"
)

// codeClass classifies the error code of an ok:false answer.
func codeClass(code string, mutation bool) connectors.Class {
	switch code {
	case "invalid_auth", "not_authed", "token_revoked", "token_expired", "account_inactive", "missing_scope":
		// Only what a new sign-in mends: a token that is gone, never
		// given, or short of a scope that consenting again grants. Auth
		// asks the person to sign in; for any other refusal they would
		// sign in again and again to the same answer.
		return connectors.Auth
	case "ratelimited", "rate_limited", "service_unavailable", "request_timeout", "team_added_to_org", "org_login_required":
		// request_timeout means Slack got the POST data truncated or not at
		// all; org_login_required, a workspace closed while it moves into
		// an Enterprise Grid organisation; the others are refusals before
		// any work.
		return connectors.Transient
	case "internal_error", "fatal_error":
		// Slack documents both as "it's possible some aspect of the
		// operation succeeded before the error was raised".
		if mutation {
			return connectors.Uncertain
		}
		return connectors.Transient
	}
	// no_permission, access_denied, not_in_channel, channel_not_found,
	// ekm_access_denied, team_access_not_granted, not_allowed_token_type,
	// two_factor_setup_required, msg_too_long and every other code: the
	// token is good, and the same request fails the same way until someone
	// changes the channel, the workspace or the call (codeAdvice).
	return connectors.Logic
}

// codeAdvice says what the person can do about a code a new sign-in does
// not mend, naming channel when the refusal is about it; "" when the code
// says it all.
func codeAdvice(code, channel string) string {
	ch := "the channel"
	if channel = strings.TrimPrefix(channel, "#"); channel != "" {
		ch = "channel " + strconv.Quote(channel)
	}
	switch code {
	case "no_permission", "access_denied":
		return fmt.Sprintf("the app may not use %s: invite it there (/invite @your-app in the channel), "+
			"or ask a workspace admin to let it; signing in again won't change this", ch)
	case "not_in_channel":
		return fmt.Sprintf("the app is not a member of %s: invite it there (/invite @your-app in the channel)", ch)
	case "channel_not_found":
		return fmt.Sprintf("the app sees no %s: check the name or ID, and invite the app if the channel is private", ch)
	case "is_archived":
		return fmt.Sprintf("%s is archived: unarchive it, or post elsewhere", ch)
	case "restricted_action":
		return fmt.Sprintf("a workspace preference keeps the app from posting in %s: ask a workspace admin", ch)
	case "ekm_access_denied":
		return "the workspace's administrators have suspended access through Enterprise Key Management: ask them; signing in again won't change this"
	case "team_access_not_granted":
		return "the app is not granted access to this workspace of the organisation: an organisation admin must add it there"
	case "two_factor_setup_required":
		return "the workspace requires two-factor authentication: set it up for the Slack account keep uses"
	case "not_allowed_token_type":
		return "Slack takes no token of this kind for this method: keep needs a bot token (xoxb-) or a user token (xoxp-)"
	}
	return ""
}

// scopesRE is what Slack's scope lists look like (chat:write,
// users:read.email): what the answer says goes into the message only then,
// as the answer is the server's to fill.
var scopesRE = regexp.MustCompile(`^[A-Za-z0-9:._\-]+(,[A-Za-z0-9:._\-]+)*$`)

// scopeAdvice says which scope a missing_scope wants (needed) and the token
// has (provided), so the person adds the right one rather than guessing
// from the method's documentation.
func scopeAdvice(needed, provided string) string {
	lacks := "a scope this method needs"
	if len(needed) <= 200 && scopesRE.MatchString(needed) {
		lacks = "scope " + needed
	}
	advice := "the Slack token lacks " + lacks + "; add it to the app and sign in again (reinstall the app to the workspace, and give keep the new token if it changed)"
	if len(provided) <= 500 && scopesRE.MatchString(provided) {
		advice += "; the token has " + provided
	}
	return advice
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(h http.Header) time.Duration {
	return connectors.ParseRetryAfter(h.Get("Retry-After"))
}
