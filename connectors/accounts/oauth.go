package accounts

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"keep/connectors"
)

// preset is a provider keep knows the endpoints and short scope names of.
type preset struct {
	endpoint oauth2.Endpoint
	scopes   map[string][]string
	// always are scopes every sign-in asks for (a refresh token).
	always []string
	// authParams go on the authorization URL.
	authParams map[string]string
	revokeURL  string
}

var presets = map[string]preset{
	"google": {
		endpoint: oauth2.Endpoint{
			AuthURL:       "https://accounts.google.com/o/oauth2/auth",
			TokenURL:      "https://oauth2.googleapis.com/token",
			DeviceAuthURL: "https://oauth2.googleapis.com/device/code",
			AuthStyle:     oauth2.AuthStyleInParams,
		},
		scopes: map[string][]string{
			"gmail":    {"https://mail.google.com/"},
			"sheets":   {"https://www.googleapis.com/auth/spreadsheets"},
			"calendar": {"https://www.googleapis.com/auth/calendar"},
		},
		// openid and email: the id_token then says who signed in, so a
		// sign-in as another Google account than the config's is refused
		// (identity.go)
		always: []string{"openid", "email"},
		// offline access and a consent screen: Google returns a refresh
		// token only then
		authParams: map[string]string{"access_type": "offline", "prompt": "consent"},
		revokeURL:  "https://oauth2.googleapis.com/revoke",
	},
	"microsoft": {
		endpoint: oauth2.Endpoint{
			AuthURL:       "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
			TokenURL:      "https://login.microsoftonline.com/common/oauth2/v2.0/token",
			DeviceAuthURL: "https://login.microsoftonline.com/common/oauth2/v2.0/devicecode",
			AuthStyle:     oauth2.AuthStyleInParams,
		},
		scopes: map[string][]string{
			"mail":     {"https://outlook.office.com/IMAP.AccessAsUser.All", "https://outlook.office.com/SMTP.Send"},
			"calendar": {"https://graph.microsoft.com/Calendars.ReadWrite"},
		},
		// openid, profile and email: the id_token's preferred_username
		// and email say who signed in (identity.go); the sign-in name
		// need not be the mail address, so both are asked for
		always: []string{"offline_access", "openid", "profile", "email"},
	},
}

// ScopeNames lists a preset's short scope names, for help and errors.
func ScopeNames(provider string) []string {
	var out []string
	for n := range presets[provider].scopes {
		out = append(out, n)
	}
	return out
}

func (d Def) endpoint() (oauth2.Endpoint, error) {
	if d.Provider != "" {
		p, ok := presets[d.Provider]
		if !ok {
			return oauth2.Endpoint{}, fmt.Errorf("provider must be google or microsoft (or leave it out and give auth_url and token_url), not %q", d.Provider)
		}
		ep := p.endpoint
		// an explicit URL wins over the preset's (a tenant, a test server)
		if d.AuthURL != "" {
			ep.AuthURL = d.AuthURL
		}
		if d.TokenURL != "" {
			ep.TokenURL = d.TokenURL
		}
		if d.DeviceURL != "" {
			ep.DeviceAuthURL = d.DeviceURL
		}
		return ep, nil
	}
	if d.mcpDiscovered() {
		return oauth2.Endpoint{}, nil // found at sign-in (mcpauth.go)
	}
	if d.AuthURL == "" || d.TokenURL == "" {
		return oauth2.Endpoint{}, errors.New("kind oauth2 needs a provider (google, microsoft) or both auth_url and token_url")
	}
	// the client credentials go in the form: auto-detection would send a
	// refused request twice, and every provider keep has met accepts this
	return oauth2.Endpoint{AuthURL: d.AuthURL, TokenURL: d.TokenURL, DeviceAuthURL: d.DeviceURL, AuthStyle: oauth2.AuthStyleInParams}, nil
}

// scopes expands a preset's short names; a full URL passes as it is.
func (d Def) scopes() ([]string, error) {
	p := presets[d.Provider]
	var out []string
	for _, s := range d.Scopes {
		if full, ok := p.scopes[s]; ok {
			out = append(out, full...)
			continue
		}
		if !strings.Contains(s, ":") && !strings.Contains(s, "/") && p.scopes != nil && d.Provider != "" {
			return nil, fmt.Errorf("scope %q is not a short name of %s (%s) nor a full scope URL", s, d.Provider, strings.Join(ScopeNames(d.Provider), ", "))
		}
		out = append(out, s)
	}
	return append(out, p.always...), nil
}

// oauthConfig is the golang.org/x/oauth2 client of an account.
func (d Def) oauthConfig(clientSecret, redirect string) *oauth2.Config {
	ep, _ := d.endpoint()   // checked in Open
	scopes, _ := d.scopes() // checked in Open
	return &oauth2.Config{ClientID: d.ClientID, ClientSecret: clientSecret, Endpoint: ep, Scopes: scopes, RedirectURL: redirect}
}

// clientCtx carries the client golang.org/x/oauth2 talks to the token
// endpoint with: s.tokenClient.
func (s *Store) clientCtx(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, s.tokenClient)
}

// sameOrigin is client following a redirect only within the origin of the
// first request. net/http answers a 307 or 308 to a POST by posting the
// same form to wherever it points, and a token or revocation request's
// form holds the client secret, the refresh token or the code.
func sameOrigin(client *http.Client) *http.Client {
	c := *client
	own := client.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if !connectors.OriginOf(via[0].URL).Admits(req.URL) {
			return fmt.Errorf("it redirected to %s, another origin: keep does not send an account's secrets there", connectors.OriginOf(req.URL))
		}
		if own != nil {
			return own(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}

// statusOf is a response's status by its code: the reason phrase of the
// status line is the server's to write, and may echo what it was sent.
func statusOf(resp *http.Response) string {
	if resp == nil {
		return "no response"
	}
	return fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
}

// codeRE is what an OAuth error code looks like (RFC 6749 §5.2 names
// them in lower case and underscores).
var codeRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// errorCode is the provider's error code, when it looks like one and
// holds nothing keep sent: it goes into errors that are kept and shown.
func errorCode(re *oauth2.RetrieveError, sent ...string) string {
	if re.ErrorCode == "" {
		return ""
	}
	if !codeRE.MatchString(re.ErrorCode) || redact(re.ErrorCode, sent...) != re.ErrorCode {
		return "(an error code keep does not show)"
	}
	return re.ErrorCode
}

// redact takes the secrets keep sent out of what a provider answered:
// as keep holds them, and as they went in the form, url-encoded, since a
// provider (or a proxy before it) that echoes the request echoes that,
// its percent escapes in either case.
func redact(text string, sent ...string) string {
	for _, v := range sent {
		if v == "" {
			continue
		}
		text = strings.ReplaceAll(text, v, "[redacted]")
		for _, enc := range []string{url.QueryEscape(v), url.PathEscape(v)} {
			if enc != v {
				text = regexp.MustCompile("(?i)"+regexp.QuoteMeta(enc)).ReplaceAllLiteralString(text, "[redacted]")
			}
		}
	}
	return text
}

// tokenTimeout bounds one request to a token endpoint: a refresh holds
// its account's refresh lock, in every process, while it waits.
const tokenTimeout = 30 * time.Second

// refresh trades the refresh token for a new access token and persists
// both before handing the token out. It holds the account's refresh lock
// (refreshLock), not s.mu, while it asks the provider; under it, it reads
// the file again, so a refresh another caller or process made meanwhile
// is used rather than made twice. A refusal (invalid_grant: revoked,
// expired) is recorded, so nothing asks the provider again until the
// user signs in anew. bad and hasBad are what judge is told.
func (s *Store) refresh(ctx context.Context, d Def, bad string, hasBad bool) (string, error) {
	unlock, err := lockFile(ctx, s.refreshLock(d.Name))
	if err != nil {
		return "", connectors.Errorf(connectors.Transient, "account %s: waiting for its token to be refreshed: %w", d.Name, err)
	}
	defer unlock()
	s.mu.Lock()
	f, err := s.current()
	var e entry
	if err == nil && f.Accounts[d.Name] != nil {
		e = *f.Accounts[d.Name]
	}
	s.mu.Unlock()
	if err != nil {
		return "", connectors.Errorf(connectors.Auth, "account %s: %w", d.Name, err)
	}
	if tok, again, err := s.judge(d.Name, &e, bad, hasBad); !again {
		return tok, err // refreshed, signed in or refused meanwhile
	}

	conf := d.withDiscovered(&e).oauthConfig(e.ClientSecret, "")
	tctx, cancel := context.WithTimeout(s.clientCtx(ctx), tokenTimeout)
	defer cancel()
	src := conf.TokenSource(tctx, &oauth2.Token{RefreshToken: e.RefreshToken}) // no access token: it refreshes
	tok, err := src.Token()
	sent := []string{e.RefreshToken, e.ClientSecret}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && refused(re) {
			why := refusalWhy(d, &e, re, sent...)
			if uerr := s.update(func(f *file) error {
				if cur := f.Accounts[d.Name]; cur != nil && cur.RefreshToken == e.RefreshToken {
					cur.Refused = why
					if re.ErrorCode == "invalid_client" || re.ErrorCode == "unauthorized_client" {
						// the client's secret (or id) changed at the provider:
						// the sign-in this asks for must ask for it anew
						cur.ClientSecret = ""
					}
				}
				return nil
			}); uerr != nil {
				return "", connectors.Errorf(connectors.Internal, "account %s: %w", d.Name, uerr)
			}
			return "", NeedsSignIn(d.Name, why)
		}
		if errors.As(err, &re) {
			// a status and the provider's error code, never its body
			said := statusOf(re.Response)
			if code := errorCode(re, sent...); code != "" {
				said += " " + code
			} else {
				said += " without an OAuth error code, which is no refusal of the sign-in"
			}
			return "", connectors.Errorf(connectors.Transient, "account %s: refreshing the token at %s: %s", d.Name, endpointOf(conf.Endpoint.TokenURL), said)
		}
		return "", connectors.Errorf(connectors.Transient, "account %s: refreshing the token: %v", d.Name, redact(scrub(err), sent...))
	}
	if err := s.update(func(f *file) error {
		cur := f.Accounts[d.Name]
		if cur == nil || cur.RefreshToken != e.RefreshToken {
			// signed out or in anew under the refresh lock's nose (by
			// hand, or a keep that took no such lock): that stands
			return nil
		}
		cur.AccessToken, cur.TokenType, cur.Expiry, cur.Refused = tok.AccessToken, tok.TokenType, s.expiry(tok), ""
		cur.Obtained = s.now().UTC()
		if tok.RefreshToken != "" {
			cur.RefreshToken = tok.RefreshToken // the provider rotated it
		}
		return nil
	}); err != nil {
		return "", connectors.Errorf(connectors.Internal, "account %s: %w", d.Name, err)
	}
	if hasBad && s.invalid[d.Name] == bad {
		delete(s.invalid, d.Name)
	}
	return tok.AccessToken, nil
}

// refused: the provider said the grant (or the client) is no good, so
// trying again cannot help; a 5xx or a rate limit can. RFC 6749 §5.2 has a
// refusal say so with its error code; a 401 is the one status the RFC
// gives a refusal of its own (invalid_client). A 400 without a code is no
// such word: a proxy's error page, a body cut short or in a form
// golang.org/x/oauth2 does not read. Taken for a refusal, it would mark
// the account and ask the person to sign in again over a fault a sign-in
// does not mend; it passes as transient instead, naming the endpoint and
// the status. So does a code §5.2 does not define: it may be a server's
// passing state, and the engine's bounded retries (policy
// transient_retries) end in a block that shows the code to the person.
func refused(re *oauth2.RetrieveError) bool {
	if _, ok := refusals[re.ErrorCode]; ok {
		return true
	}
	switch re.ErrorCode {
	case "temporarily_unavailable", "server_error":
		// the server's own trouble, whatever status it came with
		return false
	}
	return re.Response != nil && re.Response.StatusCode == http.StatusUnauthorized
}

// refusals are RFC 6749 §5.2's codes, each with what the person is to do:
// none mends by asking again, and a sign-in alone mends only some (the
// refresh token belongs to the client and the scopes the config names, so
// a fix there is followed by a sign-in too). %[1]s is the account, %[2]s
// its client id, %[3]s the scopes it asks for.
var refusals = map[string]string{
	"invalid_grant": "the provider refused the refresh token (invalid_grant): it expired or was revoked",
	"invalid_client": "the provider refused the OAuth client (invalid_client): " +
		"check client_id %[2]s in [accounts.%[1]s] of the config; the sign-in asks for its client secret anew",
	"unauthorized_client": "the OAuth client %[2]s may not refresh tokens (unauthorized_client): " +
		"allow it the refresh_token grant at the provider, or set another client_id in [accounts.%[1]s] of the config",
	"invalid_scope": "the provider refused the scopes asked for (invalid_scope: %[3]s): " +
		"fix scopes in [accounts.%[1]s] of the config, or allow them to the OAuth client %[2]s at the provider",
	"invalid_request": "the provider called the refresh request malformed (invalid_request): " +
		"check token_url and client_id in [accounts.%[1]s] of the config, and whether the OAuth client %[2]s needs a client secret",
	"unsupported_grant_type": "the token endpoint does not take refresh tokens (unsupported_grant_type): " +
		"check token_url in [accounts.%[1]s] of the config",
}

// refusalWhy is what a refused refresh tells the person: what the
// provider's code means for this account and what to fix, or, for a
// refusal without a code (a bare 401), its status, which is all there is.
func refusalWhy(d Def, e *entry, re *oauth2.RetrieveError, sent ...string) string {
	if re.ErrorCode == "invalid_client" && d.mcpDiscovered() && d.ClientID == "" {
		// no client_id of the person's: keep registered the client
		return "the provider refused the OAuth client keep registered with it (invalid_client): the sign-in registers one anew"
	}
	d = d.withDiscovered(e)
	if what, ok := refusals[re.ErrorCode]; ok {
		scopes, _ := d.scopes() // checked in Open
		asked := strings.Join(scopes, " ")
		if asked == "" {
			asked = "no scopes"
		}
		clientID := d.ClientID
		if clientID == "" {
			clientID = "(none)"
		}
		return fmt.Sprintf(what, d.Name, clientID, asked)
	}
	said := errorCode(re, sent...)
	if said == "" {
		said = statusOf(re.Response)
	}
	return "the provider refused the refresh token (" + said + ")"
}

// endpointOf is where a token request went, for an error: the URL without
// its query, which is the provider's to fill and may carry anything.
func endpointOf(tokenURL string) string {
	u, err := url.Parse(tokenURL)
	if err != nil {
		return "the token endpoint"
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return u.String()
}

// scrub keeps a transport error's words but not a URL's query.
func scrub(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "?"); i >= 0 {
		if j := strings.IndexAny(msg[i:], " \""); j >= 0 {
			return msg[:i] + msg[i+j:]
		}
		return msg[:i]
	}
	return msg
}

// expiry is when a token expires on the store's clock: golang.org/x/oauth2
// computes it from the wall clock and the provider's expires_in.
func (s *Store) expiry(tok *oauth2.Token) time.Time {
	if tok.Expiry.IsZero() {
		return time.Time{}
	}
	return s.now().Add(time.Until(tok.Expiry)).UTC()
}

func (d Def) revokeURL() string {
	if d.RevokeURL != "" {
		return d.RevokeURL
	}
	return presets[d.Provider].revokeURL
}

// revoke asks the provider to end the grant of a refresh token (RFC 7009).
func (s *Store) revoke(ctx context.Context, d Def, e *entry) error {
	ctx, cancel := context.WithTimeout(ctx, tokenTimeout)
	defer cancel()
	form := url.Values{"token": {e.RefreshToken}, "token_type_hint": {"refresh_token"}, "client_id": {d.ClientID}}
	if e.ClientSecret != "" {
		form.Set("client_secret", e.ClientSecret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.revokeURL(), strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := s.tokenClient.Do(req)
	if err != nil {
		return errors.New(redact(scrub(err), e.RefreshToken, e.ClientSecret))
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the provider answered %s", statusOf(resp))
	}
	return nil
}
