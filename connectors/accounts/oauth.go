package accounts

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
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
		always: []string{"offline_access"},
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

func (s *Store) clientCtx(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, s.client)
}

// refresh trades the refresh token for a new access token and persists
// both before handing the token out. A refusal (invalid_grant: revoked,
// expired) is recorded, so nothing asks the provider again until the user
// signs in anew. The caller holds s.mu.
func (s *Store) refresh(ctx context.Context, d Def, e *entry) (string, error) {
	conf := d.withDiscovered(e).oauthConfig(e.ClientSecret, "")
	src := conf.TokenSource(s.clientCtx(ctx), &oauth2.Token{RefreshToken: e.RefreshToken}) // no access token: it refreshes
	tok, err := src.Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && refused(re) {
			why := "the provider refused the refresh token (" + re.ErrorCode + ")"
			if uerr := s.update(func(f *file) error {
				if cur := f.Accounts[d.Name]; cur != nil && cur.RefreshToken == e.RefreshToken {
					cur.Refused = why
				}
				return nil
			}); uerr != nil {
				return "", connectors.Errorf(connectors.Internal, "account %s: %w", d.Name, uerr)
			}
			return "", NeedsSignIn(d.Name, why)
		}
		if errors.As(err, &re) {
			// a status and the provider's error code, never its body
			return "", connectors.Errorf(connectors.Transient, "account %s: refreshing the token: %s %s", d.Name, re.Response.Status, re.ErrorCode)
		}
		return "", connectors.Errorf(connectors.Transient, "account %s: refreshing the token: %v", d.Name, scrub(err))
	}
	if err := s.update(func(f *file) error {
		cur := f.Accounts[d.Name]
		if cur == nil {
			cur = &entry{ClientSecret: e.ClientSecret}
			f.Accounts[d.Name] = cur
		}
		cur.AccessToken, cur.TokenType, cur.Expiry, cur.Refused = tok.AccessToken, tok.TokenType, s.expiry(tok), ""
		if tok.RefreshToken != "" {
			cur.RefreshToken = tok.RefreshToken // the provider rotated it
		}
		return nil
	}); err != nil {
		return "", connectors.Errorf(connectors.Internal, "account %s: %w", d.Name, err)
	}
	return tok.AccessToken, nil
}

// refused: the provider said the grant is no good, so trying again cannot
// help; a 5xx or a rate limit can.
func refused(re *oauth2.RetrieveError) bool {
	switch re.ErrorCode {
	case "invalid_grant", "invalid_client", "unauthorized_client":
		return true
	}
	return re.Response != nil && (re.Response.StatusCode == http.StatusUnauthorized ||
		(re.Response.StatusCode == http.StatusBadRequest && re.ErrorCode == ""))
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
	form := url.Values{"token": {e.RefreshToken}, "token_type_hint": {"refresh_token"}, "client_id": {d.ClientID}}
	if e.ClientSecret != "" {
		form.Set("client_secret", e.ClientSecret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.revokeURL(), strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := s.client.Do(req)
	if err != nil {
		return errors.New(scrub(err))
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the provider answered %s", resp.Status)
	}
	return nil
}
