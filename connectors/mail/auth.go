package mail

import (
	"context"
	"encoding/base64"
	"net"
	"strconv"
	"strings"
	"sync"

	"github.com/emersion/go-sasl"

	"keep/connectors"
)

// creds are what one call logs in with.
type creds struct {
	user, secret string
	// bearer: the secret is an OAuth access token (XOAUTH2, OAUTHBEARER),
	// not a password.
	bearer bool
}

// credentials asks the account (or the config) for the login of one call.
// A refused token refresh is the account's Auth error, passed on as is.
func (c *Connector) credentials(ctx context.Context) (creds, error) {
	if a := c.cfg.Account; a != nil {
		if a.Username() == "" {
			return creds{}, c.failf(connectors.Auth, "account %s has no username (the mail address to log in as)", a.Name())
		}
		s, err := a.Secret(ctx)
		if err != nil {
			class := connectors.ClassOf(err)
			if class == connectors.Internal {
				class = connectors.Auth
			}
			return creds{}, c.failf(class, "account %s: %v", a.Name(), err)
		}
		c.secrets.remember(a.Username(), s)
		kind := a.Kind()
		return creds{user: a.Username(), secret: s, bearer: kind == "oauth2" || kind == "token"}, nil
	}
	if c.cfg.Username == "" {
		return creds{}, c.failf(connectors.Auth, "no username configured for mail")
	}
	return creds{user: c.cfg.Username, secret: c.cfg.Password}, nil
}

// invalidate tells an oauth2 account that the server refused its token, so
// the next Secret refreshes it.
func (c *Connector) invalidate() {
	if c.cfg.Account != nil {
		c.cfg.Account.Invalidate()
	}
}

// mechanism picks the SASL mechanism for cr among those the server offers
// (upper-case names). An explicit Config.Auth wins. A token goes out as
// XOAUTH2 (Gmail, Microsoft 365) or else OAUTHBEARER (RFC 7628); a password
// as PLAIN, or LOGIN where PLAIN is not offered.
func (c *Connector) mechanism(cr creds, offered []string) (string, error) {
	if c.cfg.Auth != "" {
		return c.cfg.Auth, nil
	}
	has := func(m string) bool {
		for _, o := range offered {
			if strings.EqualFold(o, m) {
				return true
			}
		}
		return false
	}
	if cr.bearer {
		switch {
		case has(sasl.OAuthBearer) && !has("XOAUTH2"):
			return AuthOAuthBearer, nil
		case has("XOAUTH2") || c.cfg.Preset == PresetGmail:
			return AuthXOAuth2, nil
		}
		return "", c.failf(connectors.Auth, "the server offers neither XOAUTH2 nor OAUTHBEARER for an OAuth login (it offers: %s); use a password account or set auth",
			strings.Join(offered, " "))
	}
	if !has(sasl.Plain) && has(sasl.Login) {
		return AuthLogin, nil
	}
	return AuthPlain, nil
}

// saslClient builds the client side of mech for a server at addr.
func saslClient(mech string, cr creds, addr string) sasl.Client {
	switch mech {
	case AuthLogin:
		return sasl.NewLoginClient(cr.user, cr.secret)
	case AuthXOAuth2:
		return &xoauth2Client{user: cr.user, token: cr.secret}
	case AuthOAuthBearer:
		host, p, _ := net.SplitHostPort(addr)
		port, _ := strconv.Atoi(p)
		return &oauthBearerClient{Client: sasl.NewOAuthBearerClient(&sasl.OAuthBearerOptions{
			Username: cr.user, Token: cr.secret, Host: host, Port: port,
		})}
	}
	return sasl.NewPlainClient("", cr.user, cr.secret)
}

// xoauth2Client is Google's XOAUTH2 (also Microsoft 365's), which go-sasl
// does not carry: the initial response holds the user and the token; a
// refusal comes as a challenge of JSON that the client answers with an
// empty line, after which the server says NO (IMAP) or 535 (SMTP).
type xoauth2Client struct {
	user, token string
}

func (x *xoauth2Client) Start() (string, []byte, error) {
	return "XOAUTH2", []byte("user=" + x.user + "\x01auth=Bearer " + x.token + "\x01\x01"), nil
}

func (x *xoauth2Client) Next([]byte) ([]byte, error) { return []byte{}, nil }

// oauthBearerClient answers an OAUTHBEARER error challenge with the %x01
// RFC 7628 §3.2.3 asks for, instead of go-sasl's error: the server then
// ends the exchange with a plain refusal, which classifies as Auth, and
// imapclient (which leaves the command hanging on a client error) is not
// left mid-exchange.
type oauthBearerClient struct {
	sasl.Client
}

func (o *oauthBearerClient) Next([]byte) ([]byte, error) { return []byte{1}, nil }

// secretSet remembers the secrets recent calls used, so errors can be
// redacted of them: servers echo odd things back, and a secret must never
// reach a ledger row or a screen.
type secretSet struct {
	mu    sync.Mutex
	forms []string
}

// remember adds secret and the encodings it travels in on the wire. It
// keeps the last few only: a refreshed token replaces an old one.
func (s *secretSet) remember(user, secret string) {
	if secret == "" {
		return
	}
	forms := []string{
		secret,
		base64.StdEncoding.EncodeToString([]byte(secret)),
		base64.StdEncoding.EncodeToString([]byte("\x00" + user + "\x00" + secret)),
		base64.StdEncoding.EncodeToString([]byte("user=" + user + "\x01auth=Bearer " + secret + "\x01\x01")),
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range forms {
		if !contains(s.forms, f) {
			s.forms = append(s.forms, f)
		}
	}
	if n := len(s.forms); n > 32 {
		s.forms = s.forms[n-32:]
	}
}

func (s *secretSet) redact(text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.forms {
		text = strings.ReplaceAll(text, f, "[redacted]")
	}
	return text
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
