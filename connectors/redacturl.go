package connectors

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
)

// redactedValue stands in for what RedactURL takes out.
const redactedValue = "REDACTED"

// RedactURL is u as an error, a result or a log line may quote it:
// without userinfo (a token often rides there: https://TOKEN@host/), with
// every query value replaced by REDACTED (api_key=…, a signed URL's
// signature) and without a fragment (an implicit grant's access_token).
// The scheme, host, path and query names stay, enough to tell which call
// it was. url.URL.Redacted masks a password only, so it is not enough.
func RedactURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User = nil
	c.Fragment, c.RawFragment = "", ""
	c.RawQuery = redactQuery(u.RawQuery)
	return c.String()
}

// ShownURL is u as an approval, a preview or a check text shows it: what
// will be sent, query values included (a person approves what the request
// asks for, and a value's name does not say whether it is a secret), but
// not the userinfo, which is a credential whoever wrote it (net/http sends
// it as a Basic Authorization header; https://TOKEN@host/ is a token), and
// which a preview carries where the parameters do not go (the
// approval.requested event): it shows as REDACTED@, so the person still
// sees that a credential goes along. The fragment is never sent, so it is
// not shown either (an implicit grant's access_token rides there).
// url.URL.Redacted masks a password only.
func ShownURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	if c.User != nil {
		c.User = url.User(redactedValue)
	}
	c.Fragment, c.RawFragment = "", ""
	return c.String()
}

// RedactURLText is RedactURL of a URL as written. One that does not
// parse loses everything from its first ? or #, and anything before an
// @ that follows its scheme.
func RedactURLText(s string) string {
	if u, err := url.Parse(s); err == nil {
		return RedactURL(u)
	}
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i] + "?" + redactedValue
	}
	if i := strings.Index(s, "://"); i >= 0 {
		if at := strings.LastIndex(s[i+3:], "@"); at >= 0 {
			s = s[:i+3] + s[i+3+at+1:]
		}
	}
	return s
}

func redactQuery(q string) string {
	if q == "" {
		return ""
	}
	parts := strings.Split(q, "&")
	for i, p := range parts {
		if k, _, ok := strings.Cut(p, "="); ok {
			parts[i] = k + "=" + redactedValue
		} else if p != "" {
			parts[i] = redactedValue // a bare value, as ?TOKEN
		}
	}
	return strings.Join(parts, "&")
}

// locationPrefix starts the error net/http gives for a redirect whose
// Location it cannot parse; it quotes the Location, and then url.Parse's
// error quotes it again.
const locationPrefix = "failed to parse Location header "

// RedactURLError is err with the URL a *url.Error quotes redacted
// (RedactURLText): net/http wraps every failure of a request as
// `Get "URL": …`, and url.Parse its own as `parse "URL": …`. The chain
// is kept, so errors.Is and errors.As see what they saw. Other errors
// are returned as they are.
func RedactURLError(err error) error {
	ue, ok := err.(*url.Error)
	if !ok {
		return err
	}
	out := &url.Error{Op: ue.Op, URL: RedactURLText(ue.URL), Err: ue.Err}
	if ue.Err == nil {
		return out
	}
	if rest, ok := strings.CutPrefix(ue.Err.Error(), locationPrefix); ok {
		if q, err := strconv.QuotedPrefix(rest); err == nil {
			if loc, err := strconv.Unquote(q); err == nil && loc != "" {
				// a plain string, from fmt.Errorf's %v: no chain to lose
				out.Err = errors.New(strings.ReplaceAll(ue.Err.Error(), q, strconv.Quote(RedactURLText(loc))))
			}
		}
	}
	return out
}
